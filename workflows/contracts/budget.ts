/**
 * The contract of the budget ledger entity workflow (one per tenant), shared by
 * the workflow that implements it and the activity-side gate that calls it
 * (its Updates, Signals and Query are defined in messages.ts).
 */
import type { EndpointUsage } from './activities.js';
import type { BudgetedEndpoint } from './endpoints.js';

export const LEDGER_WORKFLOW_TYPE = 'budgetLedger';

export function ledgerWorkflowId(tenant: string): string {
  return `budget-ledger-${tenant}`;
}

export interface BudgetSettings {
  limits: Record<BudgetedEndpoint, number>;
  headroomPercent: number;
  resetMinuteUtc: number;
  /**
   * Nothing is granted this long before the reset: such a call may reach the
   * service after its window turned and count against the next one, which
   * the ledger starts from zero. Absent (settings of older ledgers): the default.
   */
  stopGrantingBeforeResetMs?: number;
}

export interface ReserveRequest {
  endpoint: BudgetedEndpoint;
  /** Idempotency: a retried reservation with the same id is answered, not counted, again. */
  requestId: string;
  /**
   * The caller's configured settings. A running ledger would otherwise keep
   * the settings it was started with forever: the stricter of the two applies
   * at once, the caller's as a whole from the next window.
   */
  settings?: BudgetSettings;
}

export type ReserveResult = { granted: true; remaining: number } | { granted: false; resetsAt: string };

/**
 * A worker process asks for an allowance: several calls on one or more
 * endpoints, counted as used when granted, which the process then spends
 * without asking again until they run out or expire. It gives back in the
 * same Update what its earlier allowances left unspent.
 */
export interface AllowanceRequest {
  /** Idempotency, as for `reserve`; it also names the allowance when it is settled later. */
  requestId: string;
  /** Calls wanted per endpoint (at least 1 each); the ledger may grant fewer. */
  calls: Partial<Record<BudgetedEndpoint, number>>;
  /** How long the process means to hold the calls; the ledger may shorten it. */
  holdMs: number;
  /** Earlier allowances of this process that ended, with the calls each left unspent. */
  settle?: AllowanceSettlement[];
  settings?: BudgetSettings;
}

export interface AllowanceSettlement {
  allowanceId: string;
  unspent: Partial<Record<BudgetedEndpoint, number>>;
}

export interface AllowanceResult {
  /** Calls granted per endpoint (absent: none). */
  granted: Partial<Record<BudgetedEndpoint, number>>;
  /** Endpoints refused outright, each with the ISO instant to wait for. */
  refused: Partial<Record<BudgetedEndpoint, string>>;
  /** How long from the grant the calls may be spent; none is sent after that. */
  validForMs: number;
  /** Per granted endpoint, what the window has left besides this allowance. */
  remaining: Partial<Record<BudgetedEndpoint, number>>;
}

/** The requestId of the reservation whose call the service refused; it is also the Update id. */
export interface DailyLimitReport {
  endpoint: BudgetedEndpoint;
  requestId: string;
  /** The service's Retry-After, when it sent one: honoured as given. */
  retryAfterMs?: number;
}

export interface DailyLimitAnswer {
  /** ISO instant until which the ledger grants nothing on the endpoint. */
  blockedUntil: string;
}

export interface ClearExhaustedSignal {
  /** Absent: every endpoint. */
  endpoint?: BudgetedEndpoint;
}

export interface ExhaustedSignal {
  endpoint: BudgetedEndpoint;
  /** ISO instant until which the service refuses (normally the window reset). */
  until: string;
}

export type LedgerUsage = Record<BudgetedEndpoint, EndpointUsage>;

/** The ledger's state, carried across continue-as-new within a window. */
export interface LedgerState {
  windowStartMs: number;
  used: Record<string, number>;
  exhaustedUntil: Record<string, string>;
  /**
   * Daily-limit 429s reported per endpoint in this window: each one blocks
   * longer (15, 30, 60 min ...), since the service's reset time is unknown.
   * Absent in the state of older ledgers.
   */
  dailyLimitStrikes?: Record<string, number>;
  /** requestId -> the answer it got, for this window only. */
  answered: Record<string, ReserveResult>;
  /**
   * Allowances granted in this window and not yet settled: requestId -> the
   * answer it got. Their calls count as used until their holder gives back
   * what it left unspent; a holder that died never does, so they stay used.
   * Absent in the state of older ledgers.
   */
  allowances?: Record<string, AllowanceResult>;
}

/**
 * The history length at which new ledger runs continue as new: well below the
 * server's 50k-event warning, and the carried state is small, so a fresh run
 * is cheap. Changing it is safe: each run reads its own from its input.
 */
export const LEDGER_MAX_HISTORY_EVENTS = 2_000;

export interface LedgerInput {
  tenant: string;
  settings: BudgetSettings;
  state?: LedgerState;
  /**
   * History length at which this run continues as new. A run's threshold
   * must never change while it runs (replay would take another path), so it
   * travels in the input (LEDGER_MAX_HISTORY_EVENTS when absent).
   */
  maxHistoryEvents?: number;
}

/** The task queue the upload activity runs on: a second worker with its own, lower concurrency. */
export function uploadTaskQueue(taskQueue: string): string {
  return `${taskQueue}-uploads`;
}

/**
 * The task queue awaitJobCompletion runs on: a poll holds its slot for up to a
 * day, so polls get slots of their own and never starve the short activities.
 */
export function pollTaskQueue(taskQueue: string): string {
  return `${taskQueue}-polls`;
}
