/**
 * Timeouts and retries per import step. Transient failures (5xx, timeouts,
 * network, a concurrency 429) are retried by Temporal with backoff for as long
 * as they last: an outage is waited out, not turned into a failed import. The
 * failures in NON_RETRYABLE_FAILURES (derived from the failure table) and the
 * single failures flagged non-retryable reach the workflow at once, which
 * decides (budget wait, operator retry, or fail).
 */
import type { ActivityOptions, RetryPolicy } from '@temporalio/common';
import { NON_RETRYABLE_FAILURES } from './contracts/failure-types.js';
import type { ImportStep } from './contracts/import-workflow.js';

export const ACTIVITY_RETRY_POLICY: RetryPolicy = {
  initialInterval: '1s',
  backoffCoefficient: 2,
  maximumInterval: '5m',
  // No maximumAttempts: unlimited (the SDK rejects 0), since only transient failures are retried.
  nonRetryableErrorTypes: [...NON_RETRYABLE_FAILURES],
};

/** One or a few service calls, or an S3 HEAD and header read. */
export const SHORT_CALL_TIMEOUT_MS = 2 * 60 * 1000;
/**
 * Creating the job through its record: the create, and after an uncertain
 * one a wait for it to settle and a search of the `new` jobs, which a retry
 * starts again from the first page. It heartbeats while it waits; a dead
 * worker is noticed after the heartbeat timeout, which is longer than the
 * create's settle time.
 */
const CREATE_JOB_TIMEOUT_MS = 10 * 60 * 1000;
const CREATE_JOB_HEARTBEAT_MS = 2 * 60 * 1000;
/**
 * The row check reads the whole file (decompressing, checking every row),
 * and a file that could have gone as it is again up to its first refused
 * row: 2 x 5 GB at a pessimistic 1 MB/s is under 3 h. It heartbeats as it
 * reads, so a dead worker is noticed early.
 */
const PLAN_ROWS_TIMEOUT_MS = 6 * 60 * 60 * 1000;
const PLAN_ROWS_HEARTBEAT_MS = 60 * 1000;
/** A 5 GB upload at a pessimistic 1 MB/s takes under 1.5 h; 6 h leaves room for a slow link. */
const UPLOAD_TIMEOUT_MS = 6 * 60 * 60 * 1000;
const UPLOAD_HEARTBEAT_MS = 60 * 1000;
/**
 * The wait heartbeats every few seconds whether the process's job watcher
 * tells it of the job's end or, as a fallback, it polls the job itself (at
 * most every 72 s: 60 s and jitter).
 */
const AWAIT_HEARTBEAT_MS = 2 * 60 * 1000;
/** Room after the job timeout for the last status read and the JobTimedOut report. */
export const AWAIT_TIMEOUT_MARGIN_MS = 10 * 60 * 1000;

export interface StepOptionsContext {
  /** The overall job timeout of this import (ms). */
  jobTimeoutMs: number;
  /** The queue the upload worker listens on. */
  uploadTaskQueue: string;
  /** The queue the job-completion wait's worker listens on. */
  pollTaskQueue: string;
}

export function activityOptionsFor(step: ImportStep, ctx: StepOptionsContext): ActivityOptions {
  const retry = ACTIVITY_RETRY_POLICY;
  switch (step) {
    case 'inspectSource':
    case 'applyFieldMappings':
      return { startToCloseTimeout: SHORT_CALL_TIMEOUT_MS, retry };
    case 'planRows':
      return {
        taskQueue: ctx.uploadTaskQueue,
        startToCloseTimeout: PLAN_ROWS_TIMEOUT_MS,
        heartbeatTimeout: PLAN_ROWS_HEARTBEAT_MS,
        retry,
      };
    case 'createImportJob':
      return { startToCloseTimeout: CREATE_JOB_TIMEOUT_MS, heartbeatTimeout: CREATE_JOB_HEARTBEAT_MS, retry };
    case 'uploadData':
      return {
        taskQueue: ctx.uploadTaskQueue,
        startToCloseTimeout: UPLOAD_TIMEOUT_MS,
        heartbeatTimeout: UPLOAD_HEARTBEAT_MS,
        retry,
      };
    case 'awaitJobCompletion':
      return {
        taskQueue: ctx.pollTaskQueue,
        startToCloseTimeout: ctx.jobTimeoutMs + AWAIT_TIMEOUT_MARGIN_MS,
        heartbeatTimeout: AWAIT_HEARTBEAT_MS,
        retry,
      };
  }
}
