/**
 * The production SweepBoard: the tenant's sweep board workflow, reached with
 * the project's one Update client (update-with-start, so the first claim
 * starts it) and read with a query (no history).
 */
import { randomUUID } from 'node:crypto';
import { type Client, WorkflowNotFoundError } from '@temporalio/client';
import { ApplicationFailure, type UpdateDefinition } from '@temporalio/common';
import { claimSweepUpdate, publishSweepUpdate, sweepBoardQuery } from '../../workflows/contracts/messages.js';
import {
  type ClaimSweepRequest,
  type PublishSweepRequest,
  SWEEP_BOARD_MAX_HISTORY_EVENTS,
  SWEEP_BOARD_WORKFLOW_TYPE,
  type SweepBoardInput,
  type SweepBoardView,
  type SweepLease,
  sweepBoardWorkflowId,
} from '../../workflows/contracts/sweep-board.js';
import { emptyBoard } from '../../workflows/sweep-board-state.js';
import { EntityUpdates } from '../entity-updates/client.js';
import { updateId } from '../entity-updates/update-id.js';
import type { SweepBoard } from './sweep-board.js';

export class TemporalSweepBoard implements SweepBoard {
  private readonly updates: EntityUpdates;
  /** Makes each claim its own Update (a resend of one claim keeps its id). */
  private readonly claimPrefix = randomUUID();
  private claims = 0;

  constructor(
    private readonly options: { client: Client; taskQueue: string; tenant: string; releaseCheckMs?: number },
  ) {
    this.updates = new EntityUpdates(options.client, { patienceMs: 30_000 });
  }

  private get workflowId(): string {
    return sweepBoardWorkflowId(this.options.tenant);
  }

  async read(): Promise<SweepBoardView> {
    try {
      return await this.options.client.workflow.getHandle(this.workflowId).query(sweepBoardQuery);
    } catch (err) {
      // No board yet (or one closing to continue as new): nothing published.
      if (err instanceof WorkflowNotFoundError) return emptyBoard();
      throw err;
    }
  }

  async claim(request: ClaimSweepRequest): Promise<SweepLease | undefined> {
    try {
      return await this.send(claimSweepUpdate, updateId('claim', this.claimPrefix, String(++this.claims)), request);
    } catch (err) {
      // The board's validator refused: another process sweeps this round, or already published it.
      if (err instanceof ApplicationFailure && err.type === 'UpdateRefused') return undefined;
      throw err;
    }
  }

  publish(request: PublishSweepRequest): Promise<number> {
    return this.send(publishSweepUpdate, updateId('publish', request.holder, request.startedAt), request);
  }

  private send<Ret, Arg>(update: UpdateDefinition<Ret, [Arg]>, id: string, arg: Arg): Promise<Ret> {
    const input: SweepBoardInput = {
      tenant: this.options.tenant,
      maxHistoryEvents: SWEEP_BOARD_MAX_HISTORY_EVENTS,
      ...(this.options.releaseCheckMs !== undefined ? { releaseCheckMs: this.options.releaseCheckMs } : {}),
    };
    return this.updates.execute({
      update,
      arg,
      updateId: id,
      workflowType: SWEEP_BOARD_WORKFLOW_TYPE,
      start: {
        workflowId: this.workflowId,
        taskQueue: this.options.taskQueue,
        args: [input],
        workflowIdConflictPolicy: 'USE_EXISTING',
      },
    });
  }
}
