/**
 * The uploadData activity: streams the S3 object into the job's data PUT.
 *
 * Exactly once rests on the job record of the object version
 * (workflows/job-record.ts), never on heartbeat details (held back by the
 * SDK, lost with a killed worker, cleared by an operator's activity reset):
 * they only show progress.
 * - The attempt claims the upload. The record answers `done` when it knows
 *   the job holds its data, else `send` with a settle: how long a body an
 *   earlier attempt may have completed can still arrive and be committed.
 * - After the settle the job's state decides: out of `new`, the job holds the
 *   file (a body short of its length never commits, so any complete body is
 *   the pinned file): success, nothing sent. Still `new`: no earlier body can
 *   arrive any more, so the whole file goes again.
 * - The body's last bytes wait for the fence (activities/job-record/
 *   fenced-body.ts): they leave only within a lease the record grants this
 *   attempt while it still owns the upload, so an attempt cut off from
 *   Temporal, frozen or superseded cannot complete a second body.
 * - A broken connection is reported to the record (best effort) and retried:
 *   the next attempt sends again by itself. An operator is asked
 *   (UploadUnconfirmed) only when the service contradicts itself: it answered
 *   200 to the whole body, yet the job reads `new` past the settle.
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
import type { UploadDataInput, UploadDataResult, UploadProgress } from '../../workflows/contracts/activities.js';
import type { ClaimUploadAnswer } from '../../workflows/contracts/job-record.js';
import type { BudgetGate } from '../budget/gate.js';
import { failure } from '../failures.js';
import { FenceRefused, fencedBody } from '../job-record/fenced-body.js';
import type { JobRecordGate, JobRecordSession } from '../job-record/gate.js';
import { knownJobState, unexpectedJobState } from '../job-state.js';
import { type PartPlan, partBody, type RowPlan, RowStageError } from '../rows/index.js';
import { RangeNotHonoured, SourceAccessDenied, SourceObjectChanged, SourceObjectMissing, s3Url } from '../s3/errors.js';
import { AUTO_MAX_PARTS, openRangedRead, type ParallelParts } from '../s3/ranged-reader.js';
import type { S3Source } from '../s3/source.js';
import type { CallOptions, ImportJob, SubmitDataOptions } from '../service/types.js';
import { ServiceCalls } from '../service-calls.js';
import { IdleWatchdog } from './idle-watchdog.js';

/** What this activity needs of the service client. */
interface UploadService {
  getJob(jobId: string, options?: CallOptions): Promise<ImportJob>;
  submitData(jobId: string, body: AsyncIterable<Uint8Array>, options: SubmitDataOptions): Promise<ImportJob>;
}

/** The body's last bytes held back for the fence: one small block, so the rest streams untouched. */
export const FENCED_TAIL_BYTES = 64 * 1024;

export interface UploadDataDeps {
  service: UploadService;
  s3: S3Source;
  budget: BudgetGate;
  /** The object version's job record: who may upload now, and whether the job holds its file. */
  jobRecord: JobRecordGate;
  /** The attempt fails (retryably) when no byte moved for this long. */
  uploadIdleTimeoutMs: number;
  partSizeBytes: number;
  /** Ranged S3 reads in flight: `auto` adapts them to the PUT; 1 reads the object with one sequential GET. */
  parallelParts: ParallelParts;
  heartbeatIntervalMs?: number;
  /** Metrics hook: called with each chunk's size as it moves. */
  onBytes?: (n: number) => void;
  /**
   * After a 200 whose job still reads `new`: how long to read the job before
   * asking an operator (the service's commit and list lag). Default 15 s.
   */
  unconfirmedWaitMs?: number;
  /** How often the job's state is read during that wait. Default 3 s. */
  unconfirmedPollMs?: number;
}

/** What one attempt knows of the request it is sending. */
interface Sending {
  record: JobRecordSession;
  seq: number;
  /** The body's last bytes left: a complete body may reach the service. */
  tailSent: boolean;
}

export function makeUploadData(deps: UploadDataDeps) {
  const heartbeatIntervalMs = deps.heartbeatIntervalMs ?? 2000;

  return async function uploadData(input: UploadDataInput): Promise<UploadDataResult> {
    const ctx = Context.current();
    const cancelled = ctx.cancellationSignal;
    const calls = ServiceCalls.forCurrentActivity(deps, input.tenant);
    // Only a progress display: nothing here decides what is sent.
    const progress: UploadProgress = { bytesSent: 0, totalBytes: input.sizeBytes };
    const beat = () => ctx.heartbeat({ ...progress });
    // From the start: the record, the status call and a budget reservation may take a while too.
    beat();
    const heartbeats = setInterval(beat, heartbeatIntervalMs);
    try {
      const record = deps.jobRecord.session({
        tenant: deps.budget.tenant,
        bucket: input.bucket,
        key: input.key,
        etag: input.etag,
        ...(input.part ? { part: input.part } : {}),
      });
      const claim = await claimUpload(record, input);
      if (claim.kind === 'done') {
        log.info('Upload skipped: the job record says the job holds its data', { jobId: input.jobId });
        return { skipped: true, bytesSent: 0, state: claim.state, apiCalls: calls.counts };
      }
      if (claim.settleMs > 0) {
        log.info('Upload waits until no earlier body can still arrive', { jobId: input.jobId, ms: claim.settleMs });
        await ctx.sleep(claim.settleMs);
      }
      // The upload follows its status read: one reservation for both.
      calls.expect({ submitData: 1 });
      const state = await jobState(deps, input, calls, 'nothing was sent');
      if (state !== 'new') {
        await record.noteJobState(input.jobId, state);
        log.info('Upload skipped: the job already has its data', { jobId: input.jobId, jobState: state });
        return { skipped: true, bytesSent: 0, state, apiCalls: calls.counts };
      }
      log.info('Upload started', { jobId: input.jobId, bytes: input.sizeBytes, etag: input.etag });
      const startedMs = Date.now();
      const sending: Sending = { record, seq: claim.seq, tailSent: false };
      let answer: ImportJob;
      try {
        answer = await transfer(deps, input, calls, progress, sending);
      } catch (err) {
        if (!answeredWithStatus(err)) await reportBroken(sending);
        throw err;
      }
      beat();
      log.info('Upload finished', { jobId: input.jobId, ...transferRate(progress.bytesSent, Date.now() - startedMs) });
      return await settle(deps, input, calls, progress, sending, answer);
    } catch (err) {
      if (cancelled.aborted) throw cancelled.reason;
      throw err;
    } finally {
      beat();
      clearInterval(heartbeats);
    }
  };
}

/**
 * The record's answer to this attempt: `done` or `send`. Another import that
 * owns the upload is waited for (re-claiming), for as long as this attempt
 * may run.
 */
async function claimUpload(
  record: JobRecordSession,
  input: UploadDataInput,
): Promise<Exclude<ClaimUploadAnswer, { kind: 'wait' | 'refused' }>> {
  const ctx = Context.current();
  for (;;) {
    const claim = await record.claimUpload(input.jobId);
    if (claim.kind === 'done' || claim.kind === 'send') return claim;
    if (claim.kind === 'wait') {
      log.info('Upload waits: another import owns it', { jobId: input.jobId, reason: claim.reason });
      await ctx.sleep(claim.retryAfterMs);
      continue;
    }
    throw refusedUpload(input, claim.reason);
  }
}

function refusedUpload(input: UploadDataInput, reason: string): unknown {
  const where = `uploading ${s3Url(input.bucket, input.key)} to job ${input.jobId}`;
  if (reason === 'the job failed') return failure('JobFailed', `${where}: the service failed the job`);
  // A later attempt owns the upload (this one is a zombie), or the record holds another job of this version.
  return failure('UploadStalled', `${where}: the job record refused this attempt (${reason}); nothing was sent`, {
    jobId: input.jobId,
  });
}

/** The request ended unanswered: the record learns whether a complete body may follow (best effort). */
async function reportBroken(sending: Sending): Promise<void> {
  try {
    await sending.record.uploadEnded(sending.seq, sending.tailSent);
  } catch (err) {
    // The next attempt then settles for the whole lease and lag: slower, never unsafe.
    log.warn('Could not tell the job record the upload broke', { error: String(err) });
  }
}

async function jobState(
  deps: UploadDataDeps,
  input: UploadDataInput,
  calls: ServiceCalls,
  context: string,
): Promise<string> {
  const signal = Context.current().cancellationSignal;
  const job = await calls.run('jobStatus', () => deps.service.getJob(input.jobId, { signal }));
  const state = knownJobState(job.state);
  if (state === undefined) throw unexpectedJobState(input.jobId, job.state, context);
  return state;
}

/** Bytes, seconds and MB/s of a finished transfer, for the log. */
function transferRate(
  bytes: number,
  elapsedMs: number,
): { bytes: number; seconds: number; megabytesPerSecond: number } {
  const seconds = Math.max(elapsedMs, 1) / 1000;
  return { bytes, seconds: Number(seconds.toFixed(3)), megabytesPerSecond: Number((bytes / 1e6 / seconds).toFixed(2)) };
}

/** The service answered before it had the whole body: it may hold part of the file, and cannot take the rest. */
function partialFile(input: UploadDataInput, bytesSent: number, state: string): unknown {
  return failure(
    'UploadIncomplete',
    `uploading ${s3Url(input.bucket, input.key)} to job ${input.jobId}: the service answered while only ${bytesSent} ` +
      `of ${input.sizeBytes} bytes were sent (job ${JSON.stringify(state)}), so it may hold part of the file and ` +
      'cannot take the rest; check the job in the service and import the file again as a new import',
    { jobId: input.jobId, bytesSent, totalBytes: input.sizeBytes, state },
  );
}

/** A 200 to the whole body (and only to it): the job left `new`, or it does within the service's lag. */
async function settle(
  deps: UploadDataDeps,
  input: UploadDataInput,
  calls: ServiceCalls,
  progress: UploadProgress,
  sending: Sending,
  answer: ImportJob,
): Promise<UploadDataResult> {
  if (!sending.tailSent || progress.bytesSent < input.sizeBytes) {
    throw partialFile(input, progress.bytesSent, answer.state);
  }
  const answered = knownJobState(answer.state);
  if (answered === undefined) {
    throw unexpectedJobState(input.jobId, answer.state, 'every byte was sent and answered 200');
  }
  const state = answered === 'new' ? await awaitLeftNew(deps, input, calls) : answered;
  await sending.record.noteJobState(input.jobId, state);
  return { skipped: false, bytesSent: input.sizeBytes, state, apiCalls: calls.counts };
}

/**
 * The service answered 200 to the whole body with the job still `new`: read
 * it until it leaves `new`, within the service's lag. Past it the service
 * contradicts itself, and only an operator can say whether it holds the file.
 */
async function awaitLeftNew(deps: UploadDataDeps, input: UploadDataInput, calls: ServiceCalls): Promise<string> {
  const ctx = Context.current();
  const waitMs = deps.unconfirmedWaitMs ?? 15_000;
  const pollMs = deps.unconfirmedPollMs ?? 3_000;
  const until = Date.now() + waitMs;
  for (;;) {
    const state = await jobState(deps, input, calls, 'every byte was sent and answered 200; nothing is sent again');
    if (state !== 'new') return state;
    if (Date.now() >= until) {
      throw failure(
        'UploadUnconfirmed',
        `the service answered 200 to all ${input.sizeBytes} bytes of ${s3Url(input.bucket, input.key)} for job ` +
          `${input.jobId}, yet the job is still new after ${waitMs} ms; sending again could import the file twice. ` +
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
  sending: Sending,
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
  // Only the answer is awaited now, within the client's response timeout: no byte has to move.
  const onBodySent = () => watchdog.disarm();
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
    const body = fencedBody(source, {
      contentLength: sizeBytes,
      tailBytes: FENCED_TAIL_BYTES,
      release: () => releaseTail(sending, watchdog),
      onTailSent: () => {
        sending.tailSent = true;
      },
    });
    // The ledger may take a moment to grant the call: that wait is not a stall.
    watchdog.disarm();
    // Armed from the first byte: before it, the client's own idle limit covers connecting and its answer grace.
    let armed = false;
    return await calls.run('submitData', () =>
      deps.service.submitData(input.jobId, body, {
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
    if (abort.signal.aborted) throw abort.signal.reason;
    if (err instanceof FenceRefused) throw fenceFailure(err, input);
    if (sourceError !== undefined) throw sourceFailure(sourceError, input);
    throw stalledFailure(err, input, progress) ?? err;
  } finally {
    watchdog.disarm();
    cancelled.removeEventListener('abort', onCancel);
    if (!abort.signal.aborted) abort.abort();
    source?.destroy();
  }
}

/**
 * The fence: the last bytes go only while this attempt still owns the upload
 * and its lease has time left. The confirm is a round trip to Temporal, not
 * a stall of the service: the idle watchdog waits for it.
 */
async function releaseTail(sending: Sending, watchdog: IdleWatchdog): Promise<boolean> {
  watchdog.disarm();
  try {
    const lease = await sending.record.confirm('upload', sending.seq);
    return lease?.valid() === true;
  } finally {
    watchdog.arm();
  }
}

/** Another attempt owns the upload now: this one held its last bytes back and sent no complete body. */
function fenceFailure(err: FenceRefused, input: UploadDataInput): unknown {
  return failure(
    'UploadStalled',
    `uploading ${s3Url(input.bucket, input.key)} to job ${input.jobId}: ${err.message}; no complete body was sent`,
    { jobId: input.jobId },
  );
}

/** The service answered with an HTTP status (a refusal): its answer, not a lost one. */
function answeredWithStatus(err: unknown): boolean {
  if (!(err instanceof ApplicationFailure)) return false;
  if (err.type === 'DailyLimitReached' || err.type === 'BudgetExhausted') return true;
  const details = err.details?.[0] as { status?: unknown } | undefined;
  return typeof details?.status === 'number';
}

/**
 * The body to send. A file the row stage rewrites (its plan is in the input)
 * is regenerated from that plan, the same bytes on every attempt, read from a
 * pinned sequential GET. Any other is the S3 object itself: parallel ranged
 * reads when configured and the server honours Range, else one sequential GET.
 */
async function openSource(deps: UploadDataDeps, input: UploadDataInput, signal: AbortSignal): Promise<Readable> {
  const { bucket, key, etag, sizeBytes } = input;
  if (input.rowPlan) {
    const open = (fromByte: number) =>
      deps.s3.read(bucket, key, { etag, signal, ...(fromByte > 0 ? { start: fromByte } : {}) });
    return partBody(input.rowPlan, plannedPart(input.rowPlan, input).number, open);
  }
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
 * The plan's part this job receives: part 1 of a file sent whole, else the
 * part its record is named for, which must be the one the plan holds.
 */
function plannedPart(plan: RowPlan, input: UploadDataInput): PartPlan {
  const number = input.part?.number ?? 1;
  const planned = plan.parts[number - 1];
  if (!planned || (input.part && planned.sha256 !== input.part.sha256) || planned.bytes !== input.sizeBytes) {
    throw failure(
      'InvalidInput',
      `uploading ${s3Url(input.bucket, input.key)} to job ${input.jobId}: the input names part ${number} ` +
        `(${input.sizeBytes} bytes), which the plan of ${plan.parts.length} part(s) does not hold; nothing was sent`,
    );
  }
  return planned;
}

/**
 * The client's own upload time limits are idle ones too (no byte moved, or no
 * answer after the last byte): whichever watchdog fires first, it is a stall.
 */
function stalledFailure(err: unknown, input: UploadDataInput, progress: UploadProgress): unknown {
  if (!(err instanceof ApplicationFailure) || err.type !== 'Timeout') return undefined;
  const where = `uploading ${s3Url(input.bucket, input.key)} to job ${input.jobId}`;
  return failure('UploadStalled', `${where}: ${err.message}`, { ...progress });
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
  // The regenerated body came out other than planned: the object at the key is no longer the planned one
  // (a store that ignored the pinned ETag). Sending it again would send another body, so it is not retried.
  if (err instanceof RowStageError && err.code === 'PartChanged') {
    return failure('SourceChanged', `${where}: ${err.message}; no complete body was sent`);
  }
  if (err instanceof RowStageError) return failure('SourceReadFailed', `${where}: ${err.message}; retried`);
  const reason = err instanceof Error ? `${err.name}: ${err.message}` : String(err);
  return failure('SourceReadFailed', `reading ${where} from S3 failed during the upload (${reason}); retried`, {
    bucket: input.bucket,
    key: input.key,
  });
}
