/**
 * The uploadData activity: streams the S3 object into the job's data PUT.
 *
 * Exactly once: every attempt first reads the job's state and sends nothing
 * unless the job is still `new`, so a retry after a lost response never
 * uploads an accepted file again. One PUT cannot resume half way, so a retry
 * that finds the job `new` sends the whole file again.
 *
 * The S3 body is the PUT body: the client pulls a chunk only when the socket
 * took the last one, so backpressure holds end to end and memory stays
 * bounded by stream buffers (or the ranged reader's window). The read is
 * pinned to the ETag seen at preflight. Progress is heartbeated; cancellation
 * and an idle watchdog abort both the S3 read and the PUT.
 */
import type { Readable } from 'node:stream';
import { Context, log } from '@temporalio/activity';
import { ApplicationFailure } from '@temporalio/common';
import type { UploadDataInput, UploadDataResult, UploadProgress } from '../workflows/policy/activity-contracts.js';
import type { BudgetGate } from './budget/gate.js';
import { failure } from './failures.js';
import { SourceObjectChanged, SourceObjectMissing, s3Url } from './s3/errors.js';
import { AUTO_MAX_PARTS, type ParallelParts, readRanged } from './s3/ranged-reader.js';
import type { S3Source } from './s3/source.js';
import type { CallOptions, ImportJob, SubmitDataOptions } from './service/types.js';
import { ServiceCalls } from './service-calls.js';
import { IdleWatchdog } from './upload/idle-watchdog.js';

/** What this activity needs of the service client. */
export interface UploadService {
  getJob(jobId: number, options?: CallOptions): Promise<ImportJob>;
  submitData(jobId: number, body: Readable, options: SubmitDataOptions): Promise<ImportJob>;
}

export interface UploadDataDeps {
  service: UploadService;
  s3: S3Source;
  budget: BudgetGate;
  resetMinuteUtc: number;
  /** The attempt fails (retryably) when no byte moved for this long. */
  uploadIdleTimeoutMs: number;
  partSizeBytes: number;
  /** Ranged S3 reads in flight: `auto` adapts them to the PUT; 1 reads the object with one sequential GET. */
  parallelParts: ParallelParts;
  heartbeatIntervalMs?: number;
  /** Metrics hook: called with each chunk's size as it moves. */
  onBytes?: (n: number) => void;
}

export function makeUploadData(deps: UploadDataDeps) {
  const heartbeatIntervalMs = deps.heartbeatIntervalMs ?? 2000;

  return async function uploadData(input: UploadDataInput): Promise<UploadDataResult> {
    const ctx = Context.current();
    const cancelled = ctx.cancellationSignal;
    const calls = ServiceCalls.forCurrentActivity(deps, input.tenant);
    const progress: UploadProgress = { bytesSent: 0, totalBytes: input.sizeBytes };
    const beat = () => ctx.heartbeat({ ...progress });
    // From the start: the status call and a budget reservation may take a while too.
    beat();
    const heartbeats = setInterval(beat, heartbeatIntervalMs);
    try {
      const job = await calls.run('jobStatus', () => deps.service.getJob(input.jobId, { signal: cancelled }));
      if (job.state !== 'new') {
        log.info('Upload skipped: the job already has its data', { jobId: input.jobId, jobState: job.state });
        return { skipped: true, bytesSent: 0, state: job.state, apiCalls: calls.counts };
      }
      log.info('Upload started', { jobId: input.jobId, bytes: input.sizeBytes, etag: input.etag });
      const startedMs = Date.now();
      const accepted = await transfer(deps, input, calls, progress);
      beat();
      log.info('Upload finished', { jobId: input.jobId, ...transferRate(progress.bytesSent, Date.now() - startedMs) });
      return { skipped: false, bytesSent: progress.bytesSent, state: accepted.state, apiCalls: calls.counts };
    } catch (err) {
      if (cancelled.aborted) throw cancelled.reason;
      throw err;
    } finally {
      clearInterval(heartbeats);
    }
  };
}

/** Bytes, seconds and MB/s of a finished transfer, for the log. */
function transferRate(
  bytes: number,
  elapsedMs: number,
): { bytes: number; seconds: number; megabytesPerSecond: number } {
  const seconds = Math.max(elapsedMs, 1) / 1000;
  return { bytes, seconds: Number(seconds.toFixed(3)), megabytesPerSecond: Number((bytes / 1e6 / seconds).toFixed(2)) };
}

async function transfer(
  deps: UploadDataDeps,
  input: UploadDataInput,
  calls: ServiceCalls,
  progress: UploadProgress,
): Promise<ImportJob> {
  const { bucket, key, sizeBytes } = input;
  const cancelled = Context.current().cancellationSignal;
  const abort = new AbortController();
  const onCancel = () => abort.abort(cancelled.reason);
  if (cancelled.aborted) onCancel();
  else cancelled.addEventListener('abort', onCancel, { once: true });

  const watchdog = new IdleWatchdog(deps.uploadIdleTimeoutMs, () =>
    abort.abort(
      failure(
        'UploadStalled',
        `uploading ${s3Url(bucket, key)} to job ${input.jobId}: no byte moved for ${deps.uploadIdleTimeoutMs} ms ` +
          `after ${progress.bytesSent} of ${sizeBytes} bytes`,
        { ...progress },
      ),
    ),
  );
  const onProgress = (bytesSent: number) => {
    deps.onBytes?.(bytesSent - progress.bytesSent);
    progress.bytesSent = bytesSent;
    watchdog.touch();
  };
  let source: Readable | undefined;
  let sourceError: unknown;
  try {
    watchdog.arm();
    source = await openSource(deps, input, abort.signal);
    source.on('error', (e) => {
      sourceError ??= e;
    });
    // The ledger may take a moment to grant the call: that wait is not a stall.
    watchdog.disarm();
    return await calls.run('submitData', () => {
      watchdog.arm();
      return deps.service.submitData(input.jobId, source!, {
        contentLength: sizeBytes,
        listAction: input.listAction,
        signal: abort.signal,
        onProgress,
      });
    });
  } catch (err) {
    if (abort.signal.aborted) throw abort.signal.reason;
    throw sourceFailure(sourceError ?? err) ?? stalledFailure(err, input, progress) ?? err;
  } finally {
    watchdog.disarm();
    cancelled.removeEventListener('abort', onCancel);
    if (!abort.signal.aborted) abort.abort();
    source?.destroy();
  }
}

function openSource(deps: UploadDataDeps, input: UploadDataInput, signal: AbortSignal): Promise<Readable> {
  const { bucket, key, etag, sizeBytes } = input;
  const { parallelParts, partSizeBytes } = deps;
  if (parallelParts === 1 || sizeBytes <= partSizeBytes) return deps.s3.read(bucket, key, { etag, signal });
  const adaptive = parallelParts === 'auto';
  return Promise.resolve(
    readRanged(deps.s3, bucket, key, {
      etag,
      sizeBytes,
      partSizeBytes,
      maxParts: adaptive ? AUTO_MAX_PARTS : parallelParts,
      adaptive,
      signal,
    }),
  );
}

/**
 * The client's own upload time limits are idle ones too (no byte moved, or no
 * answer after the last byte): whichever watchdog fires first, it is a stall.
 */
function stalledFailure(err: unknown, input: UploadDataInput, progress: UploadProgress): unknown {
  if (!(err instanceof ApplicationFailure) || err.type !== 'Timeout') return undefined;
  return failure('UploadStalled', `uploading ${s3Url(input.bucket, input.key)}: ${err.message}`, { ...progress });
}

/** The pipeline failure for an S3 problem; undefined for anything else. */
function sourceFailure(err: unknown): unknown {
  if (err instanceof SourceObjectChanged) return failure('SourceChanged', `${err.message}; inspect the file again`);
  if (err instanceof SourceObjectMissing) {
    return failure('SourceChanged', `${err.message}: it was removed after it was inspected`);
  }
  return undefined;
}
