/**
 * Turns what an activity caught into the ApplicationFailure that workflows and
 * retry policies match on. The `type` is the error vocabulary's name; whether
 * Temporal retries it follows the spec (never 400/401/403/404 unchanged).
 * No original error is attached as a cause: only our own secret-free fields travel.
 */
import { ApplicationFailure, CancelledFailure } from '@temporalio/common';
import {
  type BudgetWaitDetails,
  type FailureType,
  isRetryableByDefault,
} from '../workflows/contracts/failure-types.js';
import { RateLimited, ServiceError, Unauthorized, UnusableResponse } from './service/errors.js';

/** An unusable answer may be a passing glitch of the service; after this many attempts it is a failure. */
const UNUSABLE_RESPONSE_ATTEMPTS = 3;

export function failure(type: FailureType, message: string, details?: unknown): ApplicationFailure {
  return ApplicationFailure.create({
    type,
    message,
    nonRetryable: !isRetryableByDefault(type),
    details: details === undefined ? undefined : [details],
  });
}

export function budgetWaitFailure(
  type: 'BudgetExhausted' | 'DailyLimitReached',
  message: string,
  details: BudgetWaitDetails,
): ApplicationFailure {
  return failure(type, `${message}; waiting until ${details.resetsAt}`, details);
}

function isAbort(err: unknown): boolean {
  return err instanceof Error && (err.name === 'AbortError' || err instanceof CancelledFailure);
}

/**
 * `attempt`: the activity attempt that failed (1 for the first), for failures
 * retried only a few times. Required: without it an unusable answer would
 * look like a first attempt every time and be retried without end.
 */
export function toApplicationFailure(err: unknown, attempt: number): unknown {
  if (err instanceof ApplicationFailure || isAbort(err)) return err;
  if (err instanceof ServiceError) {
    // A 401 after the token rotated is a changed request, so it may be retried.
    const retryableAuth = err instanceof Unauthorized && err.tokenRotated;
    const glitch = err instanceof UnusableResponse && attempt < UNUSABLE_RESPONSE_ATTEMPTS;
    const nonRetryable = !retryableAuth && !glitch && !isRetryableByDefault(err.type);
    // A 429 that names its wait is retried after exactly that wait, not after the policy's backoff.
    const nextRetryDelay = err instanceof RateLimited ? err.retryAfterMs : undefined;
    return ApplicationFailure.create({
      type: err.type,
      message: err.message,
      nonRetryable,
      details: [err.toJSON()],
      ...(nextRetryDelay !== undefined ? { nextRetryDelay } : {}),
    });
  }
  return err;
}
