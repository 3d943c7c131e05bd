/**
 * A BudgetGate over the ledger's own pure state functions, held in memory.
 * It stands in for the ledger workflow where no Temporal server runs
 * (activity tests); the decisions are the same code the workflow runs.
 */

import type { LedgerClient } from '../../activities/budget/allowance-gate.js';
import type { ExpectedCalls } from '../../activities/budget/gate.js';
import { loadBudgetSettings } from '../../temporal.config.js';
import {
  createState,
  grantAllowance,
  release,
  reportDailyLimit,
  reserve,
  usage,
} from '../../workflows/budget-ledger-state.js';
import type {
  AllowanceRequest,
  AllowanceResult,
  BudgetSettings,
  DailyLimitReport,
  LedgerState,
  LedgerUsage,
  ReserveResult,
} from '../../workflows/contracts/budget.js';
import type { BudgetedEndpoint } from '../../workflows/contracts/endpoints.js';

/** The configuration's default limits, which are the spec's published ones. */
export const SPEC_BUDGET_SETTINGS: BudgetSettings = {
  limits: loadBudgetSettings({}).limits,
  headroomPercent: 0,
  resetMinuteUtc: 0,
  // Tests run at any time of day, also in the last minutes before midnight.
  stopGrantingBeforeResetMs: 0,
};

export class InMemoryBudgetGate implements LedgerClient {
  private state: LedgerState | undefined;
  /** Every reservation asked for, in order (tests assert on it). */
  readonly requests: {
    endpoint: BudgetedEndpoint;
    requestId: string;
    result: ReserveResult;
    alongWith?: ExpectedCalls;
  }[] = [];
  /** Every allowance asked for, in order. */
  readonly allowanceRequests: { request: AllowanceRequest; result: AllowanceResult }[] = [];
  /** Every grant given back. */
  readonly released: { endpoint: BudgetedEndpoint; requestId: string }[] = [];

  constructor(
    private readonly settings: BudgetSettings = SPEC_BUDGET_SETTINGS,
    private readonly now: () => number = Date.now,
    readonly tenant = 'default',
  ) {}

  private current(): LedgerState {
    return this.state ?? createState(this.settings, this.now());
  }

  async reserve(endpoint: BudgetedEndpoint, requestId: string, alongWith?: ExpectedCalls): Promise<ReserveResult> {
    const next = reserve(this.current(), this.settings, { endpoint, requestId }, this.now());
    this.state = next.state;
    this.requests.push({ endpoint, requestId, result: next.result, ...(alongWith ? { alongWith } : {}) });
    return next.result;
  }

  async reserveAllowance(request: AllowanceRequest): Promise<AllowanceResult> {
    const next = grantAllowance(this.current(), this.settings, request, this.now());
    this.state = next.state;
    this.allowanceRequests.push({ request, result: next.result });
    return next.result;
  }

  async release(endpoint: BudgetedEndpoint, requestId: string): Promise<void> {
    this.state = release(this.current(), this.settings, { endpoint, requestId }, this.now());
    this.released.push({ endpoint, requestId });
  }

  async reportDailyLimit(report: DailyLimitReport): Promise<string> {
    const next = reportDailyLimit(this.current(), this.settings, report, this.now());
    this.state = next.state;
    return next.blockedUntil;
  }

  async usage(): Promise<LedgerUsage> {
    return usage(this.current(), this.settings, this.now());
  }
}
