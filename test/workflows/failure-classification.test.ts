import {
  ActivityFailure,
  ApplicationFailure,
  compileRetryPolicy,
  RetryState,
  TimeoutFailure,
  TimeoutType,
} from '@temporalio/common';
import { describe, expect, it } from 'vitest';
import { failure, toApplicationFailure } from '../../activities/failures.js';
import { Unauthorized, UnusableResponse } from '../../activities/service/errors.js';
import {
  BUDGET_WAIT_FAILURES,
  FAILURE_HANDLING,
  NON_RETRYABLE_FAILURES,
  OPERATOR_FIXABLE_FAILURES,
} from '../../workflows/contracts/failure-types.js';
import {
  budgetWaitOf,
  classifyFailure,
  failureMessageOf,
  failureTypeOf,
} from '../../workflows/failure-classification.js';
import { ACTIVITY_RETRY_POLICY, AWAIT_TIMEOUT_MARGIN_MS, activityOptionsFor } from '../../workflows/retry-policies.js';

function activityFailed(cause: Error): ActivityFailure {
  return new ActivityFailure('activity failed', 'uploadData', '5', RetryState.NON_RETRYABLE_FAILURE, 'worker', cause);
}

describe('failure classification', () => {
  it('finds the type of the ApplicationFailure inside an ActivityFailure', () => {
    const err = activityFailed(ApplicationFailure.nonRetryable('token expired', 'Unauthorized'));
    expect(failureTypeOf(err)).toBe('Unauthorized');
    expect(failureMessageOf(err)).toBe('token expired');
  });

  it('names a timeout Timeout and anything unknown undefined', () => {
    expect(failureTypeOf(activityFailed(new TimeoutFailure('hb', undefined, TimeoutType.HEARTBEAT)))).toBe('Timeout');
    expect(failureTypeOf(new Error('boom'))).toBeUndefined();
    expect(classifyFailure(new Error('boom'))).toBe('fatal');
  });

  it('classifies a spent budget as a wait, whichever of the two names it carries', () => {
    const details = { endpoint: 'createJob', resetsAt: '2026-11-23T00:00:00.000Z' };
    for (const type of ['BudgetExhausted', 'DailyLimitReached']) {
      const err = activityFailed(ApplicationFailure.create({ type, nonRetryable: true, details: [details] }));
      expect(classifyFailure(err)).toBe('budget-wait');
      expect(budgetWaitOf(err)).toEqual(details);
    }
  });

  it('waits until the fallback instant when a budget failure names no reset', () => {
    const err = activityFailed(ApplicationFailure.nonRetryable('spent', 'BudgetExhausted'));
    expect(budgetWaitOf(err)).toBeUndefined();
    expect(budgetWaitOf(err, Date.parse('2026-11-22T11:00:00Z'))).toEqual({
      endpoint: 'unknown',
      resetsAt: '2026-11-22T11:00:00.000Z',
    });
  });

  it('does not read a budget wait out of any other failure', () => {
    const err = activityFailed(ApplicationFailure.nonRetryable('nope', 'Forbidden'));
    expect(budgetWaitOf(err, 0)).toBeUndefined();
  });

  it('classifies operator-fixable failures apart from the ones that always fail the import', () => {
    const typed = (type: string) => activityFailed(ApplicationFailure.nonRetryable('x', type));
    for (const type of ['Unauthorized', 'Forbidden', 'InvalidCsvHeader', 'SourceChanged', 'MappingMismatch']) {
      expect(classifyFailure(typed(type))).toBe('operator-fixable');
    }
    for (const type of ['JobFailed', 'JobTimedOut', 'InvalidInput', 'ServerError']) {
      expect(classifyFailure(typed(type))).toBe('fatal');
    }
  });
});

describe('activity options per step', () => {
  const ctx = { jobTimeoutMs: 3_600_000, uploadTaskQueue: 'imports-uploads', pollTaskQueue: 'imports-polls' };

  it('retries transient failures with backoff and never the non-retryable ones', () => {
    expect(ACTIVITY_RETRY_POLICY).toMatchObject({
      initialInterval: '1s',
      backoffCoefficient: 2,
      maximumInterval: '5m',
    });
    expect(ACTIVITY_RETRY_POLICY.nonRetryableErrorTypes).toEqual([...NON_RETRYABLE_FAILURES]);
    expect(ACTIVITY_RETRY_POLICY.nonRetryableErrorTypes).toContain('BudgetExhausted');
  });

  it('leaves the types a single failure decides on out of the list the server applies', () => {
    // The server refuses to retry a listed type even when the failure says it may be retried.
    expect(ACTIVITY_RETRY_POLICY.nonRetryableErrorTypes).not.toContain('Unauthorized');
    expect(ACTIVITY_RETRY_POLICY.nonRetryableErrorTypes).not.toContain('UnusableResponse');
    const details = { endpoint: 'jobStatus' as const, method: 'GET', path: '/import/v1/job/1', status: 401 };
    const rotated = toApplicationFailure(new Unauthorized({ ...details, tokenRotated: true }), 1) as ApplicationFailure;
    const badToken = toApplicationFailure(new Unauthorized(details), 1) as ApplicationFailure;
    expect([rotated.nonRetryable, badToken.nonRetryable]).toEqual([false, true]);
    expect(failure('Unauthorized', 'no').nonRetryable).toBe(true);
  });

  it('retries an unusable answer twice, then gives up on it', () => {
    const unusable = new UnusableResponse({
      endpoint: 'jobStatus',
      method: 'GET',
      path: '/import/v1/job/1',
      status: 200,
    });
    const flags = [1, 2, 3, 4].map(
      (attempt) => (toApplicationFailure(unusable, attempt) as ApplicationFailure).nonRetryable,
    );
    expect(flags).toEqual([false, false, true, true]);
    expect(classifyFailure(ApplicationFailure.nonRetryable('x', 'UnusableResponse'))).toBe('operator-fixable');
  });

  it('places every failure type, and derives the lists from that one table', () => {
    for (const type of Object.keys(FAILURE_HANDLING)) {
      const handling = FAILURE_HANDLING[type as keyof typeof FAILURE_HANDLING];
      expect(OPERATOR_FIXABLE_FAILURES.includes(type as never)).toBe(handling === 'operator');
      expect(BUDGET_WAIT_FAILURES.includes(type as never)).toBe(handling === 'budget-wait');
    }
    expect(NON_RETRYABLE_FAILURES).toEqual(
      expect.arrayContaining(['InvalidInput', 'Forbidden', 'JobFailed', 'JobTimedOut', 'BudgetExhausted']),
    );
    expect(NON_RETRYABLE_FAILURES).not.toContain('ServerError');
    expect(NON_RETRYABLE_FAILURES).not.toContain('UploadStalled');
  });

  it('is a retry policy the SDK accepts, with unlimited attempts', () => {
    const compiled = compileRetryPolicy(ACTIVITY_RETRY_POLICY);
    expect(compiled.maximumAttempts).toBeUndefined();
    expect(compiled.backoffCoefficient).toBe(2);
  });

  it('gives short calls two minutes and no heartbeat', () => {
    for (const step of ['inspectSource', 'applyFieldMappings'] as const) {
      expect(activityOptionsFor(step, ctx)).toEqual({ startToCloseTimeout: 120_000, retry: ACTIVITY_RETRY_POLICY });
    }
  });

  it('lets the job search run ten minutes and keep its place in heartbeats sent at least every two', () => {
    expect(activityOptionsFor('createImportJob', ctx)).toEqual({
      startToCloseTimeout: 600_000,
      heartbeatTimeout: 120_000,
      retry: ACTIVITY_RETRY_POLICY,
    });
  });

  it('runs the upload on the upload queue with a long timeout and a one-minute heartbeat', () => {
    expect(activityOptionsFor('uploadData', ctx)).toMatchObject({
      taskQueue: 'imports-uploads',
      startToCloseTimeout: 6 * 3_600_000,
      heartbeatTimeout: 60_000,
    });
  });

  it('lets the completion wait run for the job timeout plus a margin, in slots of its own', () => {
    expect(activityOptionsFor('awaitJobCompletion', ctx)).toMatchObject({
      taskQueue: 'imports-polls',
      startToCloseTimeout: 3_600_000 + AWAIT_TIMEOUT_MARGIN_MS,
      heartbeatTimeout: 120_000,
    });
  });
});
