/**
 * A BudgetGate over the ledger's own pure state functions, held in memory.
 * It stands in for the ledger workflow where no Temporal server can run
 * (activity tests here); the decisions are the same code the workflow runs.
 */
import type {
  BudgetSettings,
  LedgerState,
  LedgerUsage,
  ReserveResult,
} from '../../workflows/policy/budget-contracts.js';
import { createState, markExhausted, reserve, usage } from '../../workflows/policy/budget-ledger-state.js';
import { BUDGETED_ENDPOINTS, type BudgetedEndpoint } from '../../workflows/policy/endpoints.js';
import type { BudgetGate } from './gate.js';

export const SPEC_BUDGET_SETTINGS: BudgetSettings = {
  limits: Object.fromEntries(
    Object.entries(BUDGETED_ENDPOINTS).map(([name, e]) => [name, e.defaultDailyLimit]),
  ) as Record<BudgetedEndpoint, number>,
  headroomPercent: 0,
  resetMinuteUtc: 0,
};

export class InMemoryBudgetGate implements BudgetGate {
  private readonly states = new Map<string, LedgerState>();
  /** Every reservation asked for, in order (tests assert on it). */
  readonly requests: { tenant: string; endpoint: BudgetedEndpoint; requestId: string; result: ReserveResult }[] = [];

  constructor(
    private readonly settings: BudgetSettings = SPEC_BUDGET_SETTINGS,
    private readonly now: () => number = Date.now,
  ) {}

  private state(tenant: string): LedgerState {
    return this.states.get(tenant) ?? createState(this.settings, this.now());
  }

  async reserve(tenant: string, endpoint: BudgetedEndpoint, requestId: string): Promise<ReserveResult> {
    const { state, result } = reserve(this.state(tenant), this.settings, { endpoint, requestId }, this.now());
    this.states.set(tenant, state);
    this.requests.push({ tenant, endpoint, requestId, result });
    return result;
  }

  async reportExhausted(tenant: string, endpoint: BudgetedEndpoint, untilIso: string): Promise<void> {
    this.states.set(
      tenant,
      markExhausted(this.state(tenant), this.settings, { endpoint, until: untilIso }, this.now()),
    );
  }

  async usage(tenant: string): Promise<LedgerUsage> {
    return usage(this.state(tenant), this.settings, this.now());
  }
}
