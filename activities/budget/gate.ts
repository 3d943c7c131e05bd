/**
 * How activities spend the tenant's daily budgets. Every budgeted call is
 * reserved first; the ledger (an entity workflow, shared by all workers) says
 * yes or "not before resetsAt".
 */
import type { LedgerUsage, ReserveResult } from '../../workflows/policy/budget-contracts.js';
import type { BudgetedEndpoint } from '../../workflows/policy/endpoints.js';

export interface BudgetGate {
  /** Idempotent per requestId: asking again returns the first answer without counting again. */
  reserve(tenant: string, endpoint: BudgetedEndpoint, requestId: string): Promise<ReserveResult>;
  /** The service answered 429 for a daily limit before our count ran out (another client shares the tenant). */
  reportExhausted(tenant: string, endpoint: BudgetedEndpoint, untilIso: string): Promise<void>;
  usage(tenant: string): Promise<LedgerUsage>;
}
