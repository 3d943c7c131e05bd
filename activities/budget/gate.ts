/**
 * How activities spend the daily budgets of the tenant whose credential this
 * worker calls the service with (configuration, never a workflow input: one
 * token, one ledger). Every budgeted call is reserved first; the ledger (an
 * entity workflow, shared by all workers) says yes or "not before resetsAt".
 */
import type { DailyLimitReport, LedgerUsage, ReserveResult } from '../../workflows/contracts/budget.js';
import type { BudgetedEndpoint } from '../../workflows/contracts/endpoints.js';

export type ExpectedCalls = Partial<Record<BudgetedEndpoint, number>>;

export interface BudgetGate {
  /** The tenant of the worker's credential: every reservation counts against its ledger. */
  readonly tenant: string;
  /**
   * Idempotent per requestId: asking again returns the first answer without
   * counting again. `alongWith`: calls the caller expects to make soon after
   * this one, which a gate that reserves ahead may ask for in the same Update.
   */
  reserve(endpoint: BudgetedEndpoint, requestId: string, alongWith?: ExpectedCalls): Promise<ReserveResult>;
  /** Gives back a grant whose call never reached the service. */
  release(endpoint: BudgetedEndpoint, requestId: string): Promise<void>;
  /** The service refused with its daily-limit 429: returns the ISO instant the ledger blocks the endpoint until. */
  reportDailyLimit(report: DailyLimitReport): Promise<string>;
  usage(): Promise<LedgerUsage>;
}
