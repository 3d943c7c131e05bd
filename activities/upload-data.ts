/**
 * The uploadData activity: streams the S3 object into the job's data PUT.
 *
 * Exactly once: every attempt first reads the job's state and sends nothing
 * unless the job is still `new`, so a retry after a lost response never
 * uploads an accepted file again. One PUT cannot resume half way, so a retry
 * that finds the job `new` after a partial send sends the whole file again.
 *
 * Once every byte went out, nothing is sent again blindly: the attempt waits
 * for the service's answer (the client's response timeout, not the idle
 * watchdog), and records `allBytesSent` in its heartbeat details. A later
 * attempt that finds it sends nothing: it waits a bounded time for the job to
 * leave `new` and, if it does not, asks an operator (UploadUnconfirmed),
 * since a service that commits late would otherwise take the file twice.
 * Success needs every byte sent and a state that left `new`.
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
import type { UploadDataInput, UploadDataResult, UploadProgress } from '../workflows/contracts/activities.js';
import type { BudgetGate } from './budget/gate.js';
import { failure } from './failures.js';
import { knownJobState, unexpectedJobState } from './job-state.js';
import { RangeNotHonoured, SourceAccessDenied, SourceObjectChanged, SourceObjectMissing, s3Url } from './s3/errors.js';
import { AUTO_MAX_PARTS, openRangedRead, type ParallelParts } from './s3/ranged-reader.js';
import type { S3Source } from './s3/source.js';
import type { CallOptions, ImportJob, SubmitDataOptions } from './service/types.js';
import { ServiceCalls } from './service-calls.js';
import { IdleWatchdog } from './upload/idle-watchdog.js';

/** What this activity needs of the service client. */
interface UploadService {
  getJob(jobId: string, options?: CallOptions): Promise<ImportJob>;
  submitData(jobId: string, body: Readable, options: SubmitDataOptions): Promise<ImportJob>;
}

export interface UploadDataDeps {
  service: UploadService;
  s3: S3Source;
  budget: BudgetGate;
  /** The attempt fails (retryably) when no byte moved for this long. */
  uploadIdleTimeoutMs: number;
  partSizeBytes: number;
  /** Ranged S3 reads in flight: `auto` adapts them to the PUT; 1 reads the object with one sequential GET. */
  parallelParts: ParallelParts;
  heartbeatIntervalMs?: number;
  /** Metrics hook: called with each chunk's size as it moves. */
  onBytes?: (n: number) => void;
  /**
   * After an earlier attempt sent every byte unanswered: how long to wait for
   * the job to leave `new`. Longer than the client's response timeout (5 min),
   * so that an attempt overlapping one still awaiting its answer outwaits it.
   * Default 6 min.
   */
  unconfirmedWaitMs?: number;
  /** How often the job's state is read during that wait. Default 15 s. */
  unconfirmedPollMs?: number;
}

export function makeUploadData(deps: UploadDataDeps) {
  const heartbeatIntervalMs = deps.heartbeatIntervalMs ?? 2000;

  return async function uploadData(input: UploadDataInput): Promise<UploadDataResult> {
    const ctx = Context.current();
    const cancelled = ctx.cancellationSignal;
    const calls = ServiceCalls.forCurrentActivity(deps, input.tenant);
    const before = earlierAttempt(ctx.info.heartbeatDetails, input);
    const progress: UploadProgress = before.allBytesSent
      ? { bytesSent: input.sizeBytes, totalBytes: input.sizeBytes, allBytesSent: true }
      : { bytesSent: 0, totalBytes: input.sizeBytes, ...(before.sendBroken ? { sendBroken: true } : {}) };
    const beat = () => ctx.heartbeat({ ...progress });
    // From the start: the status call and a budget reservation may take a while too.
    beat();
    const heartbeats = setInterval(beat, heartbeatIntervalMs);
    try {
      if (before.allBytesSent) return await confirmSent(deps, input, calls, 'an earlier attempt');
      const job = await calls.run('jobStatus', () => deps.service.getJob(input.jobId, { signal: cancelled }));
      const state = knownJobState(job.state);
      if (state === undefined) throw unexpectedJobState(input.jobId, job.state, 'nothing was sent');
      if (state !== 'new') {
        if (before.sendBroken) throw partialFile(input, { ...progress, state: job.state }, 'an earlier attempt');
        log.info('Upload skipped: the job already has its data', { jobId: input.jobId, jobState: state });
        return { skipped: true, bytesSent: 0, state, apiCalls: calls.counts };
      }
      log.info('Upload started', { jobId: input.jobId, bytes: input.sizeBytes, etag: input.etag });
      const startedMs = Date.now();
      let answer: ImportJob;
      try {
        answer = await transfer(deps, input, calls, progress, beat);
      } catch (err) {
        const taken = await takenMeanwhile(deps, input, calls, err);
        if (taken) return taken;
        throw err;
      }
      beat();
      log.info('Upload finished', { jobId: input.jobId, ...transferRate(progress.bytesSent, Date.now() - startedMs) });
      return await settle(deps, input, calls, progress, answer);
    } catch (err) {
      if (cancelled.aborted) throw cancelled.reason;
      throw err;
    } finally {
      // The last details travel with a failure to the next attempt: they must say whether every byte went out.
      beat();
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

/** What the previous attempt's last heartbeat says about the file's bytes (nothing, for another file). */
function earlierAttempt(details: unknown, input: UploadDataInput): Pick<UploadProgress, 'allBytesSent' | 'sendBroken'> {
  const d = details as Partial<UploadProgress> | undefined;
  if (d?.totalBytes !== input.sizeBytes) return {};
  return { allBytesSent: d.allBytesSent === true, sendBroken: d.sendBroken === true };
}

function partialFile(input: UploadDataInput, facts: UploadProgress & { state: string }, sender: string): unknown {
  return failure(
    'UploadIncomplete',
    `uploading ${s3Url(input.bucket, input.key)} to job ${input.jobId}: the job is ${JSON.stringify(facts.state)} although ` +
      `${sender} sent only ${facts.bytesSent} of ${input.sizeBytes} bytes, so it may hold part of the file and cannot take ` +
      'the rest; check the job in the service and import the file again as a new import',
    { jobId: input.jobId, bytesSent: facts.bytesSent, totalBytes: input.sizeBytes, state: facts.state },
  );
}

/**
 * A 400 to the PUT may only say that the job is no longer new: an attempt
 * that overlapped this one (a heartbeat timeout) got its upload accepted
 * first. Then the file is in, and failing the import would make a nightly
 * import it again; one status read tells.
 */
async function takenMeanwhile(
  deps: UploadDataDeps,
  input: UploadDataInput,
  calls: ServiceCalls,
  err: unknown,
): Promise<UploadDataResult | undefined> {
  if (!(err instanceof ApplicationFailure) || err.type !== 'BadRequest') return undefined;
  const signal = Context.current().cancellationSignal;
  const job = await calls.run('jobStatus', () => deps.service.getJob(input.jobId, { signal }));
  const state = knownJobState(job.state);
  if (state === undefined || state === 'new') return undefined;
  return { skipped: true, bytesSent: 0, state, apiCalls: calls.counts };
}

/** Success needs every byte sent and a state that left `new`. */
async function settle(
  deps: UploadDataDeps,
  input: UploadDataInput,
  calls: ServiceCalls,
  progress: UploadProgress,
  answer: ImportJob,
): Promise<UploadDataResult> {
  if (progress.bytesSent < input.sizeBytes || !progress.allBytesSent) {
    throw partialFile(input, { ...progress, state: answer.state }, 'this attempt');
  }
  const state = knownJobState(answer.state);
  if (state === undefined) throw unexpectedJobState(input.jobId, answer.state, 'every byte was sent and answered 200');
  if (state === 'new') return confirmSent(deps, input, calls, 'this attempt (answered with the job still new)');
  return { skipped: false, bytesSent: progress.bytesSent, state, apiCalls: calls.counts };
}

/**
 * Every byte went out but the service's acceptance is not known: read the
 * job until it leaves `new`, for a bounded time, and never send it again.
 */
async function confirmSent(
  deps: UploadDataDeps,
  input: UploadDataInput,
  calls: ServiceCalls,
  sentBy: string,
): Promise<UploadDataResult> {
  const ctx = Context.current();
  const waitMs = deps.unconfirmedWaitMs ?? 6 * 60_000;
  const pollMs = deps.unconfirmedPollMs ?? 15_000;
  const until = Date.now() + waitMs;
  for (;;) {
    const job = await calls.run('jobStatus', () =>
      deps.service.getJob(input.jobId, { signal: ctx.cancellationSignal }),
    );
    const state = knownJobState(job.state);
    if (state === undefined) {
      throw unexpectedJobState(input.jobId, job.state, `every byte was sent by ${sentBy}; nothing is sent again`);
    }
    if (state !== 'new') return { skipped: true, bytesSent: input.sizeBytes, state, apiCalls: calls.counts };
    if (Date.now() >= until) {
      throw failure(
        'UploadUnconfirmed',
        `all ${input.sizeBytes} bytes of ${s3Url(input.bucket, input.key)} were sent to job ${input.jobId} by ${sentBy}, ` +
          `but no answer confirmed them and the job is still new after ${waitMs} ms; sending again could import the file twice. ` +
          'Check the job in the service: retry sends the file again, abandon gives up',
        { jobId: input.jobId, bytesSent: input.sizeBytes, waitedMs: waitMs },
      );
    }
    await ctx.sleep(Math.min(pollMs, Math.max(0, until - Date.now())));
  }
}

async function transfer(
  deps: UploadDataDeps,
  input: UploadDataInput,
  calls: ServiceCalls,
  progress: UploadProgress,
  beat: () => void,
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
  const onBodySent = () => {
    // Only the answer is awaited now, within the client's response timeout: no byte has to move.
    watchdog.disarm();
    progress.allBytesSent = true;
    beat();
  };
  let source: Readable | undefined;
  let sourceError: unknown;
  try {
    watchdog.arm();
    try {
      source = await openSource(deps, input, abort.signal);
    } catch (err) {
      if (abort.signal.aborted) throw abort.signal.reason;
      throw sourceFailure(err, input);
    }
    source.on('error', (e) => {
      sourceError ??= e;
    });
    progress.sendBroken = undefined;
    // The ledger may take a moment to grant the call: that wait is not a stall.
    watchdog.disarm();
    // Armed from the first byte: before it, the client's own idle limit covers connecting and its answer grace.
    let armed = false;
    return await calls.run('submitData', () =>
      deps.service.submitData(input.jobId, source!, {
        contentLength: sizeBytes,
        listAction: input.listAction,
        signal: abort.signal,
        onProgress: (bytesSent) => {
          if (!armed) {
            armed = true;
            watchdog.arm();
          }
          onProgress(bytesSent);
        },
        onBodySent,
      }),
    );
  } catch (err) {
    if (answeredWithStatus(err)) progress.allBytesSent = undefined;
    else if (!progress.allBytesSent && progress.bytesSent > 0) progress.sendBroken = true;
    if (abort.signal.aborted) throw abort.signal.reason;
    if (sourceError !== undefined) throw sourceFailure(sourceError, input);
    throw stalledFailure(err, input, progress) ?? err;
  } finally {
    watchdog.disarm();
    cancelled.removeEventListener('abort', onCancel);
    if (!abort.signal.aborted) abort.abort();
    source?.destroy();
  }
}

/** The service answered with an HTTP status (a refusal): its answer, not a lost one. */
function answeredWithStatus(err: unknown): boolean {
  if (!(err instanceof ApplicationFailure)) return false;
  if (err.type === 'DailyLimitReached' || err.type === 'BudgetExhausted') return true;
  const details = err.details?.[0] as { status?: unknown } | undefined;
  return typeof details?.status === 'number';
}

/**
 * The S3 body to send: parallel ranged reads when configured and the server
 * honours Range, else one sequential GET.
 */
async function openSource(deps: UploadDataDeps, input: UploadDataInput, signal: AbortSignal): Promise<Readable> {
  const { bucket, key, etag, sizeBytes } = input;
  const { parallelParts, partSizeBytes } = deps;
  const sequential = () => deps.s3.read(bucket, key, { etag, signal });
  if (parallelParts === 1 || sizeBytes <= partSizeBytes) return sequential();
  const adaptive = parallelParts === 'auto';
  const ranged = await openRangedRead(deps.s3, bucket, key, {
    etag,
    sizeBytes,
    partSizeBytes,
    maxParts: adaptive ? AUTO_MAX_PARTS : parallelParts,
    adaptive,
    signal,
  });
  return ranged ?? sequential();
}

/**
 * The client's own upload time limits are idle ones too (no byte moved, or no
 * answer after the last byte): whichever watchdog fires first, it is a stall.
 */
function stalledFailure(err: unknown, input: UploadDataInput, progress: UploadProgress): unknown {
  if (!(err instanceof ApplicationFailure) || err.type !== 'Timeout') return undefined;
  const where = `uploading ${s3Url(input.bucket, input.key)} to job ${input.jobId}`;
  const sent = progress.allBytesSent ? 'every byte was sent, then ' : '';
  return failure('UploadStalled', `${where}: ${sent}${err.message}`, { ...progress });
}

/** The pipeline failure for an S3 problem while reading the source: always typed, never a bare `aborted`. */
function sourceFailure(err: unknown, input: UploadDataInput): unknown {
  if (err instanceof ApplicationFailure) return err;
  const where = s3Url(input.bucket, input.key);
  if (err instanceof SourceObjectChanged) return failure('SourceChanged', `${err.message}; inspect the file again`);
  if (err instanceof SourceAccessDenied) {
    return failure('SourceAccessDenied', `${err.message}; nothing more was sent`, { bucket: err.bucket, key: err.key });
  }
  if (err instanceof SourceObjectMissing) {
    return failure('SourceChanged', `${err.message}: it was removed after it was inspected`);
  }
  if (err instanceof RangeNotHonoured) return failure('SourceReadFailed', err.message);
  const reason = err instanceof Error ? `${err.name}: ${err.message}` : String(err);
  return failure('SourceReadFailed', `reading ${where} from S3 failed during the upload (${reason}); retried`, {
    bucket: input.bucket,
    key: input.key,
  });
}
