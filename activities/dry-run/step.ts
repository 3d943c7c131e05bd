/**
 * How a dry-run activity answers: the finding the import would meet is the
 * answer, not a failure of the dry run. A failure the import would not retry
 * (a missing file, a refused token, a spent budget) comes back as a problem,
 * with the calls spent before it, so the report says exactly what was read.
 * A passing failure (a 5xx, S3 unavailable) is thrown, for Temporal to retry
 * a few times.
 */
import { ApplicationFailure } from '@temporalio/common';
import type { DryRunStep } from '../../workflows/contracts/dry-run.js';
import type { ServiceCalls } from '../service-calls.js';

export async function dryRunStep<T>(calls: ServiceCalls, work: () => Promise<T>): Promise<DryRunStep<T>> {
  try {
    return { ok: true, value: await work(), apiCalls: calls.counts };
  } catch (err) {
    if (err instanceof ApplicationFailure && err.nonRetryable) {
      return { ok: false, type: err.type ?? 'Unknown', message: err.message, apiCalls: calls.counts };
    }
    throw err;
  }
}

/** A failure before any call could be counted (the tenant check), as the same answer. */
export function refusedStep(err: unknown): DryRunStep<never> {
  if (err instanceof ApplicationFailure && err.nonRetryable) {
    return { ok: false, type: err.type ?? 'Unknown', message: err.message, apiCalls: {} };
  }
  throw err;
}
