/**
 * The contract of the budget ledger entity workflow (one per tenant), shared by
 * the workflow that implements it and the activity-side gate that calls it.
 */
import type { EndpointUsage } from './activity-contracts.js';
import type { BudgetedEndpoint } from './endpoints.js';

export const LEDGER_WORKFLOW_TYPE = 'budgetLedger';
export const RESERVE_UPDATE = 'reserve';
export const EXHAUSTED_SIGNAL = 'exhausted';
export const USAGE_QUERY = 'usage';

export function ledgerWorkflowId(tenant: string): string {
  return `budget-ledger-${tenant}`;
}

export interface BudgetSettings {
  limits: Record<BudgetedEndpoint, number>;
  headroomPercent: number;
  resetMinuteUtc: number;
}

export interface ReserveRequest {
  endpoint: BudgetedEndpoint;
  /** Idempotency: a retried reservation with the same id is answered, not counted, again. */
  requestId: string;
}

export type ReserveResult = { granted: true; remaining: number } | { granted: false; resetsAt: string };

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
  /** requestId -> the answer it got, for this window only. */
  answered: Record<string, ReserveResult>;
}

export interface LedgerInput {
  tenant: string;
  settings: BudgetSettings;
  state?: LedgerState;
}

/** The task queue the upload activity runs on: a second worker with its own, lower concurrency. */
export function uploadTaskQueue(taskQueue: string): string {
  return `${taskQueue}-uploads`;
}
