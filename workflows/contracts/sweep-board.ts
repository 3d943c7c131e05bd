/**
 * The tenant's sweep board (an entity workflow, id `sweepBoardWorkflowId`):
 * where the worker processes of one tenant share their sweeps of the
 * service's `processing` list, so that the tenant pays for one sweep per
 * interval whatever the number of processes. A process claims a round
 * (`claimSweep`), lists, and publishes what it saw (`publishSweep`); every
 * process reads the published sweeps (`sweepBoard` query) and tells its own
 * waiting imports. The board only removes duplicate sweeps: no import's
 * correctness rests on it (every sweep a process reads is a true picture of
 * the list when it began, and every list call is reserved with the ledger).
 */
export const SWEEP_BOARD_WORKFLOW_TYPE = 'sweepBoard';

export function sweepBoardWorkflowId(tenant: string): string {
  return `sweep-board-${tenant}`;
}

/** One published sweep: the jobs the service listed in `processing` when it began. */
export interface PublishedSweep {
  /** The board's count of published sweeps, 1 for the first (carried across runs). */
  seq: number;
  /** The process that made it (its pid first), for operators and tests. */
  holder: string;
  /** ISO instant the sweep began, on the clock of the process that made it. */
  startedAt: string;
  /** Every job id listed; undefined when the service showed other states under the filter (it ignores it). */
  listed?: string[];
  /** List calls the sweep made: the next sweep's cost, for the pace. */
  calls: number;
  /** Its first answer held every job it saw, on a short page: no job can have been skipped between pages. */
  onePage?: boolean;
  /** Its maker had no job left to watch: it will not sweep the next round, so nobody need leave it that round. */
  makerDone?: boolean;
}

export interface SweepLease {
  holder: string;
  /** The round it was granted for: the board's `seq` then. */
  forSeq: number;
  /** When the board granted it (the board's clock). */
  grantedAt: string;
}

export interface SweepBoardView {
  seq: number;
  /** The most recent sweeps, oldest first (a few, so a process that read late misses none). */
  sweeps: PublishedSweep[];
  lease?: SweepLease;
}

export interface ClaimSweepRequest {
  holder: string;
  /** The newest sweep the claimer has read: a claim for a round already published is refused. */
  afterSeq: number;
  /** The holder of a lease the claimer judged expired: the claim takes that lease over. */
  takeOverFrom?: string;
}

export interface PublishSweepRequest {
  holder: string;
  startedAt: string;
  listed?: string[];
  calls: number;
  onePage?: boolean;
  makerDone?: boolean;
}

export interface SweepBoardInput {
  tenant: string;
  view?: SweepBoardView;
  maxHistoryEvents?: number;
  /**
   * On a Worker Deployment, how often an idle board looks for a new current
   * release (IMPORT_RECORD_RELEASE_CHECK, as job records do); unset: never.
   */
  releaseCheckMs?: number;
}

/** A run continues as new past this many history events (a sweep costs about ten). */
export const SWEEP_BOARD_MAX_HISTORY_EVENTS = 1_000;
