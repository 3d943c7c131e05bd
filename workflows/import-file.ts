/**
 * importFile: one CSV object in S3 becomes one completed import job.
 *
 * Steps: inspectSource -> applyFieldMappings (when given) -> createImportJob
 * -> uploadData -> awaitJobCompletion. The long work happens inside
 * heartbeating activities, so a happy path is a fixed, small history (44
 * events with mappings, 29 without) whatever the file size or job duration.
 *
 * Exactly once, across worker crashes, retries and operator Resets:
 * - the job key comes from the execution chain (workflow id and first run id,
 *   which a Reset keeps) and the file's ETag, so the createImportJob activity
 *   finds the job a Reset's earlier run created, and a fresh start makes its own;
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
 */
import {
  ApplicationFailure,
  CancellationScope,
  condition,
  defineQuery,
  defineSignal,
  getExternalWorkflowHandle,
  isCancellation,
  log,
  patched,
  proxyActivities,
  setHandler,
  sleep,
  workflowInfo,
} from '@temporalio/workflow';
import { releaseMappingLockSignal } from './mapping-lock.js';
import type { ImportActivities, InspectSourceResult } from './policy/activity-contracts.js';
import { pollTaskQueue, uploadTaskQueue } from './policy/budget-contracts.js';
import { type ApiCallCounts, addApiCalls } from './policy/endpoints.js';
import { budgetWaitOf, classifyFailure, failureMessageOf, failureTypeOf } from './policy/failure-classification.js';
import {
  DEFAULT_LIST_ACTION,
  type FieldMappingSet,
  type ImportFileInput,
  importInputProblems,
  normaliseImportInput,
} from './policy/import-input.js';
import {
  ABANDON_SIGNAL,
  DEFAULT_AWAIT_RETRY_TIMEOUT_MS,
  DEFAULT_JOB_TIMEOUT_MS,
  type ImportFileResult,
  type ImportPhase,
  type ImportProgress,
  type ImportStep,
  PROGRESS_QUERY,
  RETRY_SIGNAL,
} from './policy/import-workflow-contract.js';
import { executionJobScope, fnv1a64, jobKeyFor } from './policy/job-key.js';
import { mappingLockWorkflowId } from './policy/mapping-lock.js';
import { DEFAULT_POLL_SCHEDULE_MS } from './policy/poll-schedule.js';
import { activityOptionsFor } from './policy/retry-policies.js';

export type { ImportFileInput, ImportFileResult, ImportProgress };

export const progressQuery = defineQuery<ImportProgress>(PROGRESS_QUERY);
export const retrySignal = defineSignal(RETRY_SIGNAL);
export const abandonSignal = defineSignal(ABANDON_SIGNAL);

/** Workflows released by the same reset are spread over this span so they do not all call at once. */
const BUDGET_WAIT_JITTER_MS = 60_000;
/** A floor on each budget wait, so that a reset instant already in the past cannot spin. */
const MIN_BUDGET_WAIT_MS = 60_000;
/** When a budget failure names no reset instant, look again after this long. */
const UNKNOWN_RESET_WAIT_MS = 60 * 60 * 1000;
/** After a budget wait of hours, the job has long been running: poll at the slowest rate. */
const RESUMED_POLL_INDEX = DEFAULT_POLL_SCHEDULE_MS.length - 1;

/** Runs with this marker keep an operator signal that arrives before the step starts waiting for it. */
const KEEP_EARLY_OPERATOR_SIGNALS_PATCH = 'import-keeps-early-operator-signals';
/**
 * Runs with this marker hold the custom source's mapping lock from applying
 * their mappings until they end, and release it then (see mapping-lock.ts).
 */
const HOLD_MAPPING_LOCK_PATCH = 'import-holds-mapping-lock';

const PHASE_OF_STEP: Record<ImportStep, ImportPhase> = {
  inspectSource: 'inspecting',
  applyFieldMappings: 'applying-mappings',
  createImportJob: 'creating-job',
  uploadData: 'uploading',
  awaitJobCompletion: 'awaiting-completion',
};

/** What a step's call knows about why it runs again. */
interface Rerun {
  /** 0 on the first run. */
  run: number;
  /** The failure type that made the previous run end, if any. */
  afterFailureType?: string;
}

export async function importFile(rawInput: ImportFileInput): Promise<ImportFileResult> {
  const problems = importInputProblems(rawInput);
  if (problems.length > 0) {
    throw ApplicationFailure.nonRetryable(`invalid importFile input: ${problems.join('; ')}`, 'InvalidInput');
  }
  const input = normaliseImportInput(rawInput);
  const lockedSet =
    input.fieldMappings !== undefined && patched(HOLD_MAPPING_LOCK_PATCH) ? input.fieldMappings : undefined;
  if (!lockedSet) return importSteps(input, false);
  try {
    return await importSteps(input, true);
  } finally {
    await releaseMappingLock(lockedSet);
  }
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

async function importSteps(input: ImportFileInput, holdsMappingLock: boolean): Promise<ImportFileResult> {
  // Budgets are those of the worker's credential; a tenant named here is only checked against it.
  const tenant = input.tenant;
  const onFailure = input.onFailure ?? 'fail';
  const awaitRetryTimeoutMs = input.awaitRetryTimeoutMs ?? DEFAULT_AWAIT_RETRY_TIMEOUT_MS;
  const jobTimeoutMs = input.jobTimeoutMs ?? DEFAULT_JOB_TIMEOUT_MS;
  const info = workflowInfo();

  const progress: ImportProgress = { phase: 'validating', ...(tenant !== undefined ? { tenant } : {}) };
  let retryRequested = false;
  let abandonRequested = false;
  setHandler(progressQuery, () => progress);
  // A signal sent while the failing step still runs (an operator who saw its
  // retries in `status`) is kept for the operator wait that follows; a step that
  // succeeds drops it. Runs recorded before this keep ignoring such signals.
  const keepsEarlySignals = patched(KEEP_EARLY_OPERATOR_SIGNALS_PATCH);
  setHandler(retrySignal, () => {
    if (progress.awaitingRetry || keepsEarlySignals) retryRequested = true;
    else log.warn('retry signal ignored: no step is waiting for one');
  });
  setHandler(abandonSignal, () => {
    if (progress.awaitingRetry || keepsEarlySignals) abandonRequested = true;
    else log.warn('abandon signal ignored: no step is waiting for one');
  });

  const stepContext = {
    jobTimeoutMs,
    uploadTaskQueue: uploadTaskQueue(info.taskQueue),
    pollTaskQueue: pollTaskQueue(info.taskQueue),
  };
  const activitiesFor = (step: ImportStep) => proxyActivities<ImportActivities>(activityOptionsFor(step, stepContext));

  const budgetJitterMs = Number.parseInt(fnv1a64(info.workflowId).slice(-8), 16) % BUDGET_WAIT_JITTER_MS;
  let budgetWaitMs = 0;

  async function waitForBudget(err: unknown): Promise<void> {
    const now = Date.now();
    const wait = budgetWaitOf(err, now + UNKNOWN_RESET_WAIT_MS);
    const resetMs = wait ? Date.parse(wait.resetsAt) : now + UNKNOWN_RESET_WAIT_MS;
    const untilMs = Math.max(resetMs + budgetJitterMs, now + MIN_BUDGET_WAIT_MS);
    progress.waitingForBudgetUntil = new Date(untilMs).toISOString();
    log.info(
      `daily budget of ${wait?.endpoint ?? 'an endpoint'} is spent; waiting until ${progress.waitingForBudgetUntil}`,
    );
    await sleep(untilMs - now);
    budgetWaitMs += Date.now() - now;
    progress.waitingForBudgetUntil = undefined;
  }

  async function awaitOperator(step: ImportStep, type: string, message: string): Promise<void> {
    if (!keepsEarlySignals) {
      retryRequested = false;
      abandonRequested = false;
    }
    const since = Date.now();
    progress.awaitingRetry = {
      step,
      failureType: type,
      failure: message,
      since: new Date(since).toISOString(),
      until: new Date(since + awaitRetryTimeoutMs).toISOString(),
    };
    const signalled = await condition(() => retryRequested || abandonRequested, awaitRetryTimeoutMs);
    progress.awaitingRetry = undefined;
    const abandoned = abandonRequested;
    retryRequested = false;
    abandonRequested = false;
    if (!signalled) {
      throw stepFailure(step, type, `${message} (no retry signal within ${awaitRetryTimeoutMs} ms)`);
    }
    if (abandoned) throw stepFailure(step, type, `${message} (abandoned by the operator)`);
  }

  function stepFailure(step: ImportStep, type: string, message: string): ApplicationFailure {
    progress.phase = 'failed';
    return ApplicationFailure.create({ message: `${step} failed (${type}): ${message}`, type, nonRetryable: true });
  }

  /** Runs one step until it succeeds: budget waits and operator retries re-run it; anything else fails the import. */
  async function runStep<T>(step: ImportStep, call: (rerun: Rerun) => Promise<T>): Promise<{ value: T; ms: number }> {
    progress.phase = PHASE_OF_STEP[step];
    const started = Date.now();
    const budgetBefore = budgetWaitMs;
    let rerun: Rerun = { run: 0 };
    for (;;) {
      try {
        const value = await call(rerun);
        progress.lastError = undefined;
        if (keepsEarlySignals) {
          retryRequested = false;
          abandonRequested = false;
        }
        return { value, ms: Date.now() - started - (budgetWaitMs - budgetBefore) };
      } catch (err) {
        if (isCancellation(err)) throw err;
        const type = failureTypeOf(err) ?? 'Unknown';
        const kind = classifyFailure(err);
        if (kind === 'budget-wait') {
          await waitForBudget(err);
        } else {
          const message = failureMessageOf(err);
          progress.lastError = { step, type, message };
          if (kind === 'operator-fixable' && onFailure === 'await-retry') {
            await awaitOperator(step, type, message);
          } else {
            throw stepFailure(step, type, message);
          }
        }
        rerun = { run: rerun.run + 1, afterFailureType: type };
      }
    }
  }

  const inspect = () =>
    runStep('inspectSource', () =>
      activitiesFor('inspectSource').inspectSource({
        tenant,
        bucket: input.source.bucket,
        key: input.source.key,
        mappings: input.fieldMappings?.mappings,
        entityType: input.entityType,
        importSource: input.importSource,
        activityTypeId: input.activityTypeId,
      }),
    );

  const apiCalls: ApiCallCounts = {};
  const inspected = await inspect();
  addApiCalls(apiCalls, inspected.value.apiCalls);
  let source: InspectSourceResult = inspected.value;
  progress.totalBytes = source.sizeBytes;
  for (const warning of source.warnings) log.warn(`source ${input.source.bucket}/${input.source.key}: ${warning}`);

  let mappingsMs = 0;
  const fieldMappings = input.fieldMappings;
  if (fieldMappings) {
    const applied = await runStep('applyFieldMappings', () =>
      activitiesFor('applyFieldMappings').applyFieldMappings({
        tenant,
        set: fieldMappings,
        ...(holdsMappingLock ? { mappingLockHolder: info.workflowId } : {}),
      }),
    );
    addApiCalls(apiCalls, applied.value.apiCalls);
    mappingsMs = applied.ms;
  }

  const created = await runStep('createImportJob', () =>
    activitiesFor('createImportJob').createImportJob({
      tenant,
      jobKey: jobKeyFor(input.jobScope ?? executionJobScope(info.workflowId, info.firstExecutionRunId), source.etag),
      dataImportName: input.dataImportName,
      entityType: input.entityType,
      importSource: input.importSource,
      activityTypeId: input.activityTypeId,
      // A Reset run (or an earlier execution of the same jobScope) may have sent the job its data already.
      searchAllStates: input.jobScope !== undefined || info.runId !== info.firstExecutionRunId,
    }),
  );
  const job = created.value;
  addApiCalls(apiCalls, job.apiCalls);
  progress.jobId = job.jobId;
  progress.jobState = job.state;

  let reinspectMs = 0;
  const uploaded = await runStep('uploadData', async (rerun) => {
    if (rerun.afterFailureType === 'SourceChanged') {
      // The operator replaced the file: check the new one and pin its ETag before sending it.
      const again = await inspect();
      addApiCalls(apiCalls, again.value.apiCalls);
      progress.phase = 'uploading';
      source = again.value;
      reinspectMs += again.ms;
      progress.totalBytes = source.sizeBytes;
    }
    return activitiesFor('uploadData').uploadData({
      tenant,
      jobId: job.jobId,
      bucket: input.source.bucket,
      key: input.source.key,
      etag: source.etag,
      sizeBytes: source.sizeBytes,
      listAction: input.listAction ?? DEFAULT_LIST_ACTION,
    });
  });
  addApiCalls(apiCalls, uploaded.value.apiCalls);
  progress.jobState = uploaded.value.state;

  const waitingSince = new Date(Date.now()).toISOString();
  const completed = await runStep('awaitJobCompletion', (rerun) =>
    activitiesFor('awaitJobCompletion').awaitJobCompletion({
      tenant,
      jobId: job.jobId,
      timeoutMs: jobTimeoutMs,
      waitingSince,
      ...(rerun.run > 0 ? { startPollIndex: RESUMED_POLL_INDEX } : {}),
    }),
  );
  addApiCalls(apiCalls, completed.value.apiCalls);
  progress.jobState = completed.value.state;
  progress.phase = 'completed';

  const seconds = (ms: number) => ms / 1000;
  return {
    jobId: job.jobId,
    state: 'completed',
    bytes: source.sizeBytes,
    etag: source.etag,
    seconds: {
      inspect: seconds(inspected.ms + reinspectMs),
      mappings: seconds(mappingsMs),
      createJob: seconds(created.ms),
      upload: seconds(uploaded.ms - reinspectMs),
      awaitCompletion: seconds(completed.ms),
      waitingForBudget: seconds(budgetWaitMs),
    },
    apiCalls,
    jobReused: job.reused,
    uploadSkipped: uploaded.value.skipped,
  };
}
