/**
 * Where the worker processes of a tenant share their sweeps (the sweep board
 * workflow in production, workflows/sweep-board.ts). One process claims a
 * round, lists, and publishes what it saw; the others read it. A board that
 * cannot be reached costs only duplicate sweeps: each process then sweeps
 * for itself, every call still reserved with the ledger.
 */
import type {
  ClaimSweepRequest,
  PublishSweepRequest,
  SweepBoardView,
  SweepLease,
} from '../../workflows/contracts/sweep-board.js';
import { claim, claimProblem, emptyBoard, publish, publishProblem } from '../../workflows/sweep-board-state.js';

export interface SweepBoard {
  read(): Promise<SweepBoardView>;
  /** The lease, or undefined when the board refused (a newer sweep is published, or another holds the round). */
  claim(request: ClaimSweepRequest): Promise<SweepLease | undefined>;
  /** The board's newest sequence number after the publication. */
  publish(request: PublishSweepRequest): Promise<number>;
}

/** A board in this process only (one process, activity tests): the workflow's rules without Temporal. */
export class LocalSweepBoard implements SweepBoard {
  private view: SweepBoardView = emptyBoard();

  async read(): Promise<SweepBoardView> {
    return this.view;
  }

  async claim(request: ClaimSweepRequest): Promise<SweepLease | undefined> {
    if (claimProblem(this.view, request)) return undefined;
    this.view = claim(this.view, request, Date.now());
    return this.view.lease;
  }

  async publish(request: PublishSweepRequest): Promise<number> {
    const problem = publishProblem(request);
    if (problem) throw new Error(problem);
    this.view = publish(this.view, request);
    return this.view.seq;
  }
}
