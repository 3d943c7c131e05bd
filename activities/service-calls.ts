/**
 * One activity invocation's calls to the service: each budgeted call is
 * reserved with the ledger of the worker's tenant first, every call is
 * counted per endpoint for the workflow's result, and a failure comes out as
 * the ApplicationFailure the workflow understands (a spent daily window
 * becomes a durable wait there).
 */
import { createHash } from 'node:crypto';
import { Context } from '@temporalio/activity';
import { type ApiCallCounts, isBudgetedEndpoint, type ServiceEndpoint } from '../workflows/contracts/endpoints.js';
import type { BudgetGate, ExpectedCalls } from './budget/gate.js';
import { budgetWaitFailure, failure, toApplicationFailure } from './failures.js';
import { neverSent, RateLimited } from './service/errors.js';

export interface ServiceCallsDeps {
  budget: BudgetGate;
}

export class ServiceCalls {
  readonly counts: ApiCallCounts = {};
  private sequence = 0;
  /** Budgeted calls this activity said it makes next: reserved along with the first call that needs a reservation. */
  private expected: ExpectedCalls = {};

  constructor(
    private readonly deps: ServiceCallsDeps,
    /** Unique per activity attempt, so a retried attempt's calls are counted again (they are made again). */
    private readonly requestIdBase: string,
    /** The activity's cancellation: a call cancelled before it was sent gives its grant back. */
    private readonly signal?: AbortSignal,
    /** The activity attempt (1 for the first): some failures are retried only a few times. */
    private readonly attempt = 1,
  ) {}

  /**
   * For the activity running now. The budgets are the worker's tenant's (its
   * credential is what the service counts against); an input naming another
   * tenant is refused before any call. Request ids hash workflow, run,
   * activity and attempt, so any workflow id gives a short, valid id.
   */
  static forCurrentActivity(deps: ServiceCallsDeps, inputTenant: string | undefined): ServiceCalls {
    const tenant = deps.budget.tenant;
    if (inputTenant !== undefined && inputTenant !== tenant) {
      throw failure(
        'TenantMismatch',
        `the input names tenant "${inputTenant}", but this worker calls the service with the credential of tenant "${tenant}" (IMPORT_TENANT); start it on the task queue of a worker that holds "${inputTenant}"'s credential, or without a tenant`,
      );
    }
    const info = Context.current().info;
    const run = info.workflowExecution;
    const identity = JSON.stringify([
      run?.workflowId ?? 'standalone',
      run?.runId ?? '-',
      info.activityId,
      info.attempt,
    ]);
    const base = createHash('sha256').update(identity).digest('base64url');
    return new ServiceCalls(deps, base, Context.current().cancellationSignal, info.attempt);
  }

  /** Says which budgeted calls this activity makes after the next one, so that they can be reserved together. */
  expect(calls: ExpectedCalls): void {
    this.expected = { ...calls };
  }

  async run<T>(endpoint: ServiceEndpoint, call: () => Promise<T>): Promise<T> {
    if (!isBudgetedEndpoint(endpoint)) return this.unbudgeted(endpoint, call);
    const requestId = `${this.requestIdBase}/${++this.sequence}`;
    const expected = this.expected[endpoint];
    if (expected) this.expected = { ...this.expected, [endpoint]: expected - 1 };
    // A reservation the ledger refuses fails as UpdateRefused (activities/entity-updates): it would be refused forever.
    const answer = await this.deps.budget.reserve(endpoint, requestId, alongWith(this.expected));
    if (!answer.granted) {
      throw budgetWaitFailure('BudgetExhausted', `The daily budget for ${endpoint} is spent`, {
        endpoint,
        resetsAt: answer.resetsAt,
      });
    }
    if (this.signal?.aborted) {
      // Cancelled while the reservation was on its way: nothing was sent.
      await this.deps.budget.release(endpoint, requestId);
      throw this.signal.reason;
    }
    this.count(endpoint, 1);
    try {
      return await call();
    } catch (err) {
      if (neverSent(err)) {
        // Nothing reached the service (not even a token was had), so nothing was spent: give the grant back.
        this.count(endpoint, -1);
        await this.deps.budget.release(endpoint, requestId);
      }
      if (err instanceof RateLimited && err.isDailyLimit) {
        // Tell the ledger, so that other workers stop spending calls the service refuses.
        const resetsAt = await this.deps.budget.reportDailyLimit({
          endpoint,
          requestId,
          ...(err.retryAfterMs !== undefined ? { retryAfterMs: err.retryAfterMs } : {}),
        });
        throw budgetWaitFailure('DailyLimitReached', `The service refused ${endpoint}: ${err.message}`, {
          endpoint,
          resetsAt,
        });
      }
      throw toApplicationFailure(err, this.attempt);
    }
  }

  private async unbudgeted<T>(endpoint: ServiceEndpoint, call: () => Promise<T>): Promise<T> {
    this.count(endpoint, 1);
    try {
      return await call();
    } catch (err) {
      if (neverSent(err)) this.count(endpoint, -1);
      throw toApplicationFailure(err, this.attempt);
    }
  }

  private count(endpoint: ServiceEndpoint, n: number): void {
    this.counts[endpoint] = (this.counts[endpoint] ?? 0) + n;
    if (this.counts[endpoint] === 0) delete this.counts[endpoint];
  }
}

/** The expected calls still to come, without the spent ones. */
function alongWith(expected: ExpectedCalls): ExpectedCalls {
  return Object.fromEntries(Object.entries(expected).filter(([, n]) => (n ?? 0) > 0));
}
