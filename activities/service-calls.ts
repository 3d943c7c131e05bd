/**
 * One activity invocation's calls to the service: each budgeted call is
 * reserved with the ledger first, every call is counted per endpoint for the
 * workflow's result, and a failure comes out as the ApplicationFailure the
 * workflow understands (a spent daily window becomes a durable wait there).
 */
import { Context } from '@temporalio/activity';
import { nextResetMs } from '../workflows/policy/budget-window.js';
import { type ApiCallCounts, isBudgetedEndpoint, type ServiceEndpoint } from '../workflows/policy/endpoints.js';
import { isTransientRateLimit } from '../workflows/policy/failure-types.js';
import type { BudgetGate } from './budget/gate.js';
import { budgetWaitFailure, toApplicationFailure } from './failures.js';
import { RateLimited } from './service/errors.js';

export interface ServiceCallsDeps {
  budget: BudgetGate;
  /** The service's daily reset, minutes after midnight UTC (for a 429 that beat our ledger). */
  resetMinuteUtc: number;
  now?: () => number;
}

export class ServiceCalls {
  readonly counts: ApiCallCounts = {};
  private sequence = 0;

  constructor(
    private readonly deps: ServiceCallsDeps,
    private readonly tenant: string,
    /** Unique per activity attempt, so a retried attempt's calls are counted again (they are made again). */
    private readonly requestIdBase: string,
    /** The activity attempt (1 for the first): some failures are retried only a few times. */
    private readonly attempt = 1,
  ) {}

  /** For the activity running now: request ids from workflow, run, activity and attempt. */
  static forCurrentActivity(deps: ServiceCallsDeps, tenant: string): ServiceCalls {
    const info = Context.current().info;
    const run = info.workflowExecution;
    const base = `${run?.workflowId ?? 'standalone'}/${run?.runId ?? '-'}/${info.activityId}/${info.attempt}`;
    return new ServiceCalls(deps, tenant, base, info.attempt);
  }

  async run<T>(endpoint: ServiceEndpoint, call: () => Promise<T>): Promise<T> {
    if (isBudgetedEndpoint(endpoint)) {
      const requestId = `${this.requestIdBase}/${++this.sequence}`;
      const answer = await this.deps.budget.reserve(this.tenant, endpoint, requestId);
      if (!answer.granted) {
        throw budgetWaitFailure('BudgetExhausted', `The daily budget for ${endpoint} is spent`, {
          endpoint,
          resetsAt: answer.resetsAt,
        });
      }
    }
    this.counts[endpoint] = (this.counts[endpoint] ?? 0) + 1;
    try {
      return await call();
    } catch (err) {
      if (err instanceof RateLimited && !isTransientRateLimit(err.errorCode) && isBudgetedEndpoint(endpoint)) {
        const now = this.deps.now?.() ?? Date.now();
        const resetsAt = new Date(nextResetMs(now, this.deps.resetMinuteUtc)).toISOString();
        // Tell the ledger so other workers stop spending calls the service will refuse.
        await this.deps.budget.reportExhausted(this.tenant, endpoint, resetsAt);
        throw budgetWaitFailure('DailyLimitReached', `The service refused ${endpoint}: ${err.message}`, {
          endpoint,
          resetsAt,
        });
      }
      throw toApplicationFailure(err, this.attempt);
    }
  }
}
