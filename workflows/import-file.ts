/**
 * importFile: one CSV object in S3 becomes one completed import job, or
 * one per part when its body is too large for one job.
 *
 * Steps: inspectSource -> planRows -> applyFieldMappings (when given) ->
 * createImportJob -> uploadData -> awaitJobCompletion, the last three once
 * per part of a file split at row boundaries (in order). planRows checks
 * every row before any job exists: the rows the service would refuse go to a
 * rejects report (and fail the import under `onRejectedRows: 'fail'`), and
 * its plan lets every upload attempt send exactly the same body. The long work happens inside
 * heartbeating activities, so a happy path is a fixed, small history (40
 * events with mappings, 29 without) whatever the file size or job duration.
 *
 * Exactly once, across worker crashes, retries and operator Resets:
 * - the object version (bucket, key, ETag; and the part's number and planned
 *   sha256 for a split file) names a job record that keeps its one job,
 *   whichever workflow imports it;
 * - uploadData reads the job's state first and skips an upload the service
 *   already accepted;
 * - this code is deterministic (time from the workflow clock, jitter from the
 *   workflow id), so a replay after a crash takes the same path.
 *
 * A spent daily budget is a durable wait until the window resets, never a
 * failure. A failure an operator can fix (token, permission, file, mapping)
 * fails the import, or with `onFailure: 'await-retry'` waits for a `retry`
 * or `abandon` signal. A failed or timed-out job always fails the import.
 *
 * An import with field mappings holds its custom source's mapping lock from
 * applying them until it ends, so no other import changes the source's set
 * while this job depends on it (a different set is refused: MappingConflict).
 *
 * Under Worker Versioning an import is pinned: it finishes on the release
 * that started it, so changing this code needs no patch (see versioning.ts).
 */
import {
  ApplicationFailure,
  CancellationScope,
  getExternalWorkflowHandle,
  log,
  workflowInfo,
} from '@temporalio/workflow';
import type {
  ApplyFieldMappingsResult,
  AwaitJobCompletionResult,
  CreateImportJobResult,
  InspectSourceResult,
  PartPlan,
  PlanRowsResult,
  UploadDataResult,
} from './contracts/activities.js';
import {
  DEFAULT_LIST_ACTION,
  DEFAULT_ON_REJECTED_ROWS,
  type FieldMappingSet,
  type ImportFileInput,
  importInputProblems,
  inspectSourceInput,
  normaliseImportInput,
} from './contracts/import-input.js';
import type { ImportFileResult, ImportProgress, PartResult } from './contracts/import-workflow.js';
import { mappingLockWorkflowId } from './contracts/mapping-lock.js';
import { releaseMappingLockSignal } from './contracts/messages.js';
import type { ObjectVersion } from './contracts/object-version.js';
import { failureMessageOf, failureTypeOf } from './failure-classification.js';
import { ImportRun, type Rerun } from './import-run.js';
import { DEFAULT_POLL_SCHEDULE_MS } from './poll-schedule.js';

export type { ImportFileInput, ImportFileResult, ImportProgress };

/** After a budget wait of hours, the job has long been running: poll at the slowest rate. */
const RESUMED_POLL_INDEX = DEFAULT_POLL_SCHEDULE_MS.length - 1;

/**
 * The job this import sends its file to, and the object version whose job
 * record holds it: a file replaced after its job was made gets a job of its
 * own under its own record.
 */
interface JobRef {
  current: CreateImportJobResult;
  version: ObjectVersion;
}

export async function importFile(rawInput: ImportFileInput): Promise<ImportFileResult> {
  const problems = importInputProblems(rawInput);
  if (problems.length > 0) {
    throw ApplicationFailure.nonRetryable(`invalid importFile input: ${problems.join('; ')}`, 'InvalidInput');
  }
  const input = normaliseImportInput(rawInput);
  const lockedSet = input.fieldMappings;
  if (!lockedSet) return importSteps(input);
  try {
    return await importSteps(input);
  } finally {
    await releaseMappingLock(lockedSet);
  }
}

/** Starts the run; its outcome (and the metrics of it) is the run's to report. */
async function importSteps(input: ImportFileInput): Promise<ImportFileResult> {
  const run = ImportRun.start(input);
  return run.outcomeOf(() => steps(run));
}

/** The steps in order. How a step runs again, waits and fails is the run's business (import-run.ts). */
async function steps(run: ImportRun): Promise<ImportFileResult> {
  const { input } = run;
  const inspected = await run.step('inspectSource', inspectSource(run));
  for (const warning of inspected.warnings) log.warn(`source ${input.source.bucket}/${input.source.key}: ${warning}`);
  await run.step('planRows', planRows(run));
  if (input.fieldMappings) {
    await run.step('applyFieldMappings', applyFieldMappings(run, input.fieldMappings));
  }
  if (run.plan.plan.parts.length > 1) return run.splitResult(await importParts(run));
  const version = versionOf(run);
  const job: JobRef = { current: await run.step('createImportJob', createImportJob(run, version)), version };
  const uploaded = await run.step('uploadData', uploadData(run, job));
  await run.step('awaitJobCompletion', awaitJobCompletion(run, job));
  return run.result(job.current, uploaded.skipped);
}

/**
 * A body too large for one job: each planned part, one after another, is a
 * job of its own, created, sent and awaited as a whole file is. A part is
 * named by its number and planned digest, so its record (and so its job and
 * upload) is the part's own, whichever run or attempt reaches it.
 */
async function importParts(run: ImportRun): Promise<PartResult[]> {
  const { parts } = run.plan.plan;
  const done: PartResult[] = [];
  for (const part of parts) {
    run.progress.part = { number: part.number, of: parts.length };
    const version: ObjectVersion = { ...versionOf(run), part: { number: part.number, sha256: part.sha256 } };
    const job: JobRef = { current: await run.step('createImportJob', createImportJob(run, version)), version };
    const uploaded = await run.step('uploadData', uploadPart(run, job, part, done));
    await run.step('awaitJobCompletion', awaitJobCompletion(run, job));
    done.push({
      number: part.number,
      jobId: job.current.jobId,
      bytes: part.bytes,
      firstRow: part.firstRow,
      lastRow: part.lastRow,
      rowsSent: part.rowsSent,
      jobReused: job.current.reused,
      uploadSkipped: uploaded.skipped,
    });
  }
  return done;
}

/**
 * Gives the source's mapping lock back, completed or failed (a no-op when this
 * import never took it). Sent even when the import was cancelled; a lock that
 * has already ended needs nothing.
 */
async function releaseMappingLock(set: FieldMappingSet): Promise<void> {
  const lock = getExternalWorkflowHandle(mappingLockWorkflowId(set.sourceId, set.objectType));
  try {
    await CancellationScope.nonCancellable(() =>
      lock.signal(releaseMappingLockSignal, { workflowId: workflowInfo().workflowId }),
    );
  } catch (err) {
    log.info(`mapping lock ${lock.workflowId} was not signalled (it is not running): ${err}`);
  }
}

// Each step's call, run (and run again) by run.step(). A call also records
// what its answer changes in the run: API calls, the source, the job's state.

function inspectSource(run: ImportRun): () => Promise<InspectSourceResult> {
  const { input } = run;
  return async () => {
    const source = await run.activitiesFor('inspectSource').inspectSource(inspectSourceInput(input));
    run.sourceInspected(source);
    return source;
  };
}

function planRows(run: ImportRun): () => Promise<PlanRowsResult> {
  const { input } = run;
  return async () => {
    const planned = await run.activitiesFor('planRows').planRows({
      tenant: input.tenant,
      bucket: input.source.bucket,
      key: input.source.key,
      etag: run.source.etag,
      dialect: run.source.dialect,
      entityType: input.entityType,
      fieldMappings: input.fieldMappings,
      onRejectedRows: input.rows?.onRejectedRows ?? DEFAULT_ON_REJECTED_ROWS,
      rejectsPrefix: input.rows?.rejectsPrefix,
    });
    run.rowsPlanned(planned);
    return planned;
  };
}

function applyFieldMappings(run: ImportRun, set: FieldMappingSet): () => Promise<ApplyFieldMappingsResult> {
  return async () => {
    const applied = await run.activitiesFor('applyFieldMappings').applyFieldMappings({
      tenant: run.input.tenant,
      set,
      mappingLockHolder: run.info.workflowId,
    });
    run.countCalls(applied.apiCalls);
    return applied;
  };
}

/** The object version as last inspected. */
function versionOf(run: ImportRun): ObjectVersion {
  return { bucket: run.input.source.bucket, key: run.input.source.key, etag: run.source.etag };
}

/** The version's record decides which job imports it; `supersedes` names the version this import left. */
function createImportJob(
  run: ImportRun,
  version: ObjectVersion,
  supersedes?: ObjectVersion,
): () => Promise<CreateImportJobResult> {
  const { input } = run;
  return async () => {
    const job = await run.activitiesFor('createImportJob').createImportJob({
      tenant: input.tenant,
      dataImportName: input.dataImportName,
      entityType: input.entityType,
      importSource: input.importSource,
      ...(input.fieldMappings ? { customSourceId: input.fieldMappings.sourceId } : {}),
      activityTypeId: input.activityTypeId,
      objectVersion: version,
      ...(supersedes ? { supersedes } : {}),
    });
    run.countCalls(job.apiCalls);
    run.progress.jobId = job.jobId;
    run.progress.jobState = job.state;
    return job;
  };
}

function uploadData(run: ImportRun, job: JobRef): (rerun: Rerun) => Promise<UploadDataResult> {
  const { input } = run;
  return async (rerun) => {
    if (rerun.afterFailureType === 'SourceChanged') {
      // The operator replaced the file: check the new one and pin its ETag before sending it.
      await run.step('inspectSource', inspectSource(run));
      await run.step('planRows', planRows(run));
      await jobForReplacedFile(run, job);
      run.progress.phase = 'uploading';
    }
    const uploaded = await run.activitiesFor('uploadData').uploadData({
      tenant: input.tenant,
      jobId: job.current.jobId,
      bucket: input.source.bucket,
      key: input.source.key,
      etag: run.source.etag,
      sizeBytes: run.bodyBytes,
      listAction: input.listAction ?? DEFAULT_LIST_ACTION,
      ...(run.plan.plan.body === 'canonical' ? { rowPlan: run.plan.plan } : {}),
    });
    run.countCalls(uploaded.apiCalls);
    run.progress.jobState = uploaded.state;
    return uploaded;
  };
}

/**
 * One part's upload: exactly the planned part's bytes, to its job. A file
 * replaced at its key after the plan cannot go on: the rest of the planned
 * version can no longer be read, and the new file's rows would mix with the
 * parts already sent. Unless the operator puts the planned version back, the
 * import fails, saying which parts were imported.
 */
function uploadPart(
  run: ImportRun,
  job: JobRef,
  part: PartPlan,
  done: readonly PartResult[],
): (rerun: Rerun) => Promise<UploadDataResult> {
  const { input } = run;
  return async (rerun) => {
    if (rerun.afterFailureType === 'SourceChanged') {
      await run.step('inspectSource', inspectSource(run));
      if (run.source.etag !== job.version.etag) throw replacedBetweenParts(run, job, part, done);
      run.progress.phase = 'uploading';
    }
    try {
      const uploaded = await run.activitiesFor('uploadData').uploadData({
        tenant: input.tenant,
        jobId: job.current.jobId,
        bucket: input.source.bucket,
        key: input.source.key,
        etag: job.version.etag,
        sizeBytes: part.bytes,
        listAction: input.listAction ?? DEFAULT_LIST_ACTION,
        rowPlan: run.plan.plan,
        part: { number: part.number, sha256: part.sha256 },
      });
      run.countCalls(uploaded.apiCalls);
      run.progress.jobState = uploaded.state;
      return uploaded;
    } catch (err) {
      if (failureTypeOf(err) === 'SourceChanged') throw replacedBetweenParts(run, job, part, done, err);
      throw err;
    }
  };
}

function replacedBetweenParts(
  run: ImportRun,
  job: JobRef,
  part: PartPlan,
  done: readonly PartResult[],
  cause?: unknown,
): ApplicationFailure {
  const { bucket, key } = run.input.source;
  const of = run.plan.plan.parts.length;
  const imported =
    done.length === 0
      ? 'no part was imported yet'
      : `part(s) 1-${done.length} of ${of} were imported (job(s) ${done.map((d) => d.jobId).join(', ')})`;
  return ApplicationFailure.create({
    type: 'SourceChanged',
    nonRetryable: true,
    message:
      `s3://${bucket}/${key} is no longer the version planned in ${of} parts (ETag ${job.version.etag})` +
      `${cause === undefined ? '' : ` (${failureMessageOf(cause)})`}: ${imported}; part ${part.number} was not ` +
      `sent (its job ${job.current.jobId} stays empty). Put that version back and retry, or import the new file ` +
      'as a new import (its rows would join those already imported)',
  });
}

/**
 * A replaced file is another object version: it gets its own record and job
 * (the old job stays empty, and its record is told this import let it go).
 */
async function jobForReplacedFile(run: ImportRun, job: JobRef): Promise<void> {
  const old = job.version;
  if (old.etag === run.source.etag) return;
  const version = versionOf(run);
  job.current = await run.step('createImportJob', createImportJob(run, version, old));
  job.version = version;
}

function awaitJobCompletion(run: ImportRun, job: JobRef): (rerun: Rerun) => Promise<AwaitJobCompletionResult> {
  // Taken once, before the first call: a call run again keeps the job's deadline.
  const waitingSince = new Date(Date.now()).toISOString();
  return async (rerun) => {
    const completed = await run.activitiesFor('awaitJobCompletion').awaitJobCompletion({
      tenant: run.input.tenant,
      jobId: job.current.jobId,
      timeoutMs: run.jobTimeoutMs,
      waitingSince,
      objectVersion: job.version,
      ...(rerun.run > 0 ? { startPollIndex: RESUMED_POLL_INDEX } : {}),
    });
    run.countCalls(completed.apiCalls);
    run.progress.jobState = completed.state;
    return completed;
  };
}
