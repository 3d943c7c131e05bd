/**
 * One importFile run's state and how each of its steps runs, so that
 * import-file.ts reads as the steps in order.
 *
 * The run owns what the `progress` query shows, the operator's `retry` and
 * `abandon` signals, the time each step took and the calls it made. `step()`
 * runs one step until it succeeds: a spent daily budget is a durable wait
 * until the window resets, then the step runs again; a failure an operator
 * can fix waits for a signal when the input asks for it (`onFailure:
 * 'await-retry'`); anything else fails the import.
 */
import {
  ApplicationFailure,
  condition,
  isCancellation,
  log,
  proxyActivities,
  setHandler,
  sleep,
  type WorkflowInfo,
  workflowInfo,
} from '@temporalio/workflow';
import type { ImportActivities, InspectSourceResult, PlanRowsResult } from './contracts/activities.js';
import { pollTaskQueue, uploadTaskQueue } from './contracts/budget.js';
import { type ApiCallCounts, addApiCalls } from './contracts/endpoints.js';
import type { ImportFileInput, OnFailureMode } from './contracts/import-input.js';
import {
  DEFAULT_AWAIT_RETRY_TIMEOUT_MS,
  DEFAULT_JOB_TIMEOUT_MS,
  type ImportFileResult,
  type ImportPhase,
  type ImportProgress,
  type ImportStep,
  type PartResult,
} from './contracts/import-workflow.js';
import { fnv1a64 } from './contracts/job-key.js';
import { abandonSignal, progressQuery, retrySignal } from './contracts/messages.js';
import { budgetWaitOf, classifyFailure, failureMessageOf, failureTypeOf } from './failure-classification.js';
import { ImportMetrics, type ImportOutcome, type OperatorWaitEnd, triggerOf } from './import-metrics.js';
import { notificationId, sendNotification } from './notify.js';
import { activityOptionsFor, type StepOptionsContext } from './retry-policies.js';

/** Workflows released by the same reset are spread over this span so they do not all call at once. */
const BUDGET_WAIT_JITTER_MS = 60_000;
/** A floor on each budget wait, so that a reset instant already in the past cannot spin. */
const MIN_BUDGET_WAIT_MS = 60_000;
/** When a budget failure names no reset instant, look again after this long. */
const UNKNOWN_RESET_WAIT_MS = 60 * 60 * 1000;

const PHASE_OF_STEP: Record<ImportStep, ImportPhase> = {
  inspectSource: 'inspecting',
  planRows: 'checking-rows',
  applyFieldMappings: 'applying-mappings',
  createImportJob: 'creating-job',
  uploadData: 'uploading',
  awaitJobCompletion: 'awaiting-completion',
};

/** What a step's call knows about why it runs again. */
export interface Rerun {
  /** 0 on the first run. */
  run: number;
  /** The failure type that made the previous run end, if any. */
  afterFailureType?: string;
}

/** Where a step's clocks stood when it started. */
interface StepStart {
  atMs: number;
  budgetWaitMs: number;
  timedMs: number;
}

export class ImportRun {
  readonly info: WorkflowInfo = workflowInfo();
  readonly progress: ImportProgress;
  readonly metrics: ImportMetrics;
  private readonly onFailure: OnFailureMode;
  private readonly awaitRetryTimeoutMs: number;
  private readonly stepContext: StepOptionsContext;
  private readonly budgetJitterMs: number;
  private inspected?: InspectSourceResult;
  private planned?: PlanRowsResult;
  private readonly apiCalls: ApiCallCounts = {};
  private budgetWaitMs = 0;
  /** Workflow time of each step, budget waits and steps run inside it left out. */
  private readonly stepMs: Record<ImportStep, number> = {
    inspectSource: 0,
    planRows: 0,
    applyFieldMappings: 0,
    createImportJob: 0,
    uploadData: 0,
    awaitJobCompletion: 0,
  };
  /** The sum of stepMs, so a step can leave out the steps run inside it. */
  private timedMs = 0;
  private retryRequested = false;
  private abandonRequested = false;
  /** Set when the operator abandoned the import, so its outcome says so. */
  private abandoned = false;
  /** Operator waits so far in this run: each is an event of its own for the webhook. */
  private operatorWaits = 0;

  private constructor(readonly input: ImportFileInput) {
    this.onFailure = input.onFailure ?? 'fail';
    this.awaitRetryTimeoutMs = input.awaitRetryTimeoutMs ?? DEFAULT_AWAIT_RETRY_TIMEOUT_MS;
    this.stepContext = {
      jobTimeoutMs: this.jobTimeoutMs,
      uploadTaskQueue: uploadTaskQueue(this.info.taskQueue),
      pollTaskQueue: pollTaskQueue(this.info.taskQueue),
    };
    this.budgetJitterMs = Number.parseInt(fnv1a64(this.info.workflowId).slice(-8), 16) % BUDGET_WAIT_JITTER_MS;
    // Budgets are those of the worker's credential; a tenant named here is only checked against it.
    const tenant = input.tenant;
    this.progress = { phase: 'validating', ...(tenant !== undefined ? { tenant } : {}) };
    this.metrics = new ImportMetrics({ entity_type: input.entityType, trigger: triggerOf(input, this.info) });
  }

  /** A run of a validated, normalised input, answering its query and signals from now on. */
  static start(input: ImportFileInput): ImportRun {
    const run = new ImportRun(input);
    run.answerMessages();
    return run;
  }

  get jobTimeoutMs(): number {
    return this.input.jobTimeoutMs ?? DEFAULT_JOB_TIMEOUT_MS;
  }

  /** The file as last inspected: a file replaced after a failure is inspected again before it is sent. */
  get source(): InspectSourceResult {
    if (!this.inspected) throw new Error('importFile: the source is read before inspectSource ran');
    return this.inspected;
  }

  activitiesFor(step: ImportStep): ImportActivities {
    return proxyActivities<ImportActivities>(activityOptionsFor(step, this.stepContext));
  }

  sourceInspected(source: InspectSourceResult): void {
    this.countCalls(source.apiCalls);
    this.inspected = source;
    this.progress.totalBytes = source.sizeBytes;
  }

  /** The row check's plan of the body: what the upload sends, and the rows the result reports. */
  rowsPlanned(planned: PlanRowsResult): void {
    this.planned = planned;
    this.progress.totalBytes = this.bodyBytes;
    this.progress.rows = planned.rows;
  }

  /** The body's plan, once the rows were checked. */
  get plan(): PlanRowsResult {
    if (!this.planned) throw new Error('importFile: the plan is read before planRows ran');
    return this.planned;
  }

  /** The bytes the service receives: the object's, or the canonical body's (all its parts'). */
  get bodyBytes(): number {
    const { parts } = this.plan.plan;
    return parts.length > 0 ? parts.reduce((sum, part) => sum + part.bytes, 0) : this.source.sizeBytes;
  }

  countCalls(calls: ApiCallCounts | undefined): void {
    addApiCalls(this.apiCalls, calls);
  }

  /** Runs one step until it succeeds: budget waits and operator retries re-run it; anything else fails the import. */
  async step<T>(step: ImportStep, call: (rerun: Rerun) => Promise<T>): Promise<T> {
    this.progress.phase = PHASE_OF_STEP[step];
    const start: StepStart = { atMs: Date.now(), budgetWaitMs: this.budgetWaitMs, timedMs: this.timedMs };
    let rerun: Rerun = { run: 0 };
    for (;;) {
      try {
        const value = await call(rerun);
        this.succeeded(step, start);
        return value;
      } catch (err) {
        if (isCancellation(err)) throw err;
        rerun = { run: rerun.run + 1, afterFailureType: await this.recover(step, err) };
      }
    }
  }

  /** Runs the import's steps and counts how it ended (completed, failed, abandoned or cancelled). */
  async outcomeOf(steps: () => Promise<ImportFileResult>): Promise<ImportFileResult> {
    const sinceStartMs = () => Date.now() - this.info.startTime.getTime();
    try {
      const result = await steps();
      this.metrics.ended('completed', sinceStartMs());
      this.metrics.delivered(result.bytes, result.parts?.length ?? 1);
      return result;
    } catch (err) {
      const outcome: ImportOutcome = isCancellation(err) ? 'cancelled' : this.abandoned ? 'abandoned' : 'failed';
      this.metrics.ended(outcome, sinceStartMs());
      if (outcome === 'failed') await this.notifyFailed(err);
      throw err;
    }
  }

  /** Marks the run completed and reports it. */
  result(job: { jobId: string; reused: boolean }, uploadSkipped: boolean): ImportFileResult {
    this.progress.phase = 'completed';
    const seconds = (ms: number) => ms / 1000;
    return {
      jobId: job.jobId,
      state: 'completed',
      bytes: this.bodyBytes,
      etag: this.source.etag,
      seconds: {
        inspect: seconds(this.stepMs.inspectSource),
        checkRows: seconds(this.stepMs.planRows),
        mappings: seconds(this.stepMs.applyFieldMappings),
        createJob: seconds(this.stepMs.createImportJob),
        upload: seconds(this.stepMs.uploadData),
        awaitCompletion: seconds(this.stepMs.awaitJobCompletion),
        waitingForBudget: seconds(this.budgetWaitMs),
      },
      rows: this.progress.rows!,
      apiCalls: this.apiCalls,
      jobReused: job.reused,
      uploadSkipped,
    };
  }

  /** Marks a run whose file went in several jobs completed, and reports them. */
  splitResult(parts: PartResult[]): ImportFileResult {
    this.progress.part = undefined;
    const first = parts[0]!;
    const all = (of: (part: PartResult) => boolean) => parts.every(of);
    return {
      ...this.result(
        { jobId: first.jobId, reused: all((p) => p.jobReused) },
        all((p) => p.uploadSkipped),
      ),
      parts,
    };
  }

  private answerMessages(): void {
    setHandler(progressQuery, () => this.progress);
    // A signal sent while the failing step still runs (an operator who saw its
    // retries in `status`) is kept for the operator wait that follows; a step that
    // succeeds drops it.
    setHandler(retrySignal, () => {
      this.retryRequested = true;
    });
    setHandler(abandonSignal, () => {
      this.abandonRequested = true;
    });
  }

  private succeeded(step: ImportStep, start: StepStart): void {
    this.progress.lastError = undefined;
    this.dropOperatorSignals();
    const ms = Date.now() - start.atMs - (this.budgetWaitMs - start.budgetWaitMs);
    // A step run inside this one (inspectSource inside uploadData) has counted its own time.
    const ownMs = ms - (this.timedMs - start.timedMs);
    this.stepMs[step] += ownMs;
    this.timedMs += ownMs;
  }

  /** Waits out a failure the step may recover from and answers its type; throws the import's failure otherwise. */
  private async recover(step: ImportStep, err: unknown): Promise<string> {
    const type = failureTypeOf(err) ?? 'Unknown';
    const kind = classifyFailure(err);
    if (kind === 'budget-wait') {
      await this.waitForBudget(err);
      return type;
    }
    const message = failureMessageOf(err);
    this.progress.lastError = { step, type, message };
    if (kind !== 'operator-fixable' || this.onFailure !== 'await-retry') throw this.stepFailure(step, type, message);
    await this.awaitOperator(step, type, message);
    return type;
  }

  private async waitForBudget(err: unknown): Promise<void> {
    const now = Date.now();
    const wait = budgetWaitOf(err, now + UNKNOWN_RESET_WAIT_MS);
    const resetMs = wait ? Date.parse(wait.resetsAt) : now + UNKNOWN_RESET_WAIT_MS;
    const untilMs = Math.max(resetMs + this.budgetJitterMs, now + MIN_BUDGET_WAIT_MS);
    this.progress.waitingForBudgetUntil = new Date(untilMs).toISOString();
    log.info(
      `daily budget of ${wait?.endpoint ?? 'an endpoint'} is spent; waiting until ${this.progress.waitingForBudgetUntil}`,
    );
    const endpoint = wait?.endpoint ?? 'unknown';
    this.metrics.budgetWaitStarted(endpoint);
    await sleep(untilMs - now);
    this.metrics.budgetWaitEnded(endpoint, Date.now() - now);
    this.budgetWaitMs += Date.now() - now;
    this.progress.waitingForBudgetUntil = undefined;
  }

  private async awaitOperator(step: ImportStep, type: string, message: string): Promise<void> {
    const since = Date.now();
    this.progress.awaitingRetry = {
      step,
      failureType: type,
      failure: message,
      since: new Date(since).toISOString(),
      until: new Date(since + this.awaitRetryTimeoutMs).toISOString(),
    };
    this.metrics.operatorWaitStarted(step, type);
    this.operatorWaits += 1;
    await sendNotification({
      id: notificationId('import-awaiting-operator', this.info.runId, this.operatorWaits),
      kind: 'import-awaiting-operator',
      text: `Import ${this.info.workflowId} waits for an operator: ${step} failed (${type}). Fix the cause, then \`retry\` or \`abandon\` it by ${this.progress.awaitingRetry.until}.`,
      fields: { ...this.notificationFields(), step, failureType: type, failure: message },
    });
    const signalled = await condition(() => this.retryRequested || this.abandonRequested, this.awaitRetryTimeoutMs);
    this.progress.awaitingRetry = undefined;
    this.abandoned = this.abandonRequested;
    this.dropOperatorSignals();
    const end: OperatorWaitEnd = !signalled ? 'timed-out' : this.abandoned ? 'abandoned' : 'retried';
    this.metrics.operatorWaitEnded(end);
    if (!signalled) {
      throw this.stepFailure(step, type, `${message} (no retry signal within ${this.awaitRetryTimeoutMs} ms)`);
    }
    if (this.abandoned) throw this.stepFailure(step, type, `${message} (abandoned by the operator)`);
  }

  private async notifyFailed(err: unknown): Promise<void> {
    const failure = this.progress.lastError;
    await sendNotification({
      id: notificationId('import-failed', this.info.runId),
      kind: 'import-failed',
      text: `Import ${this.info.workflowId} failed${failure ? `: ${failure.step} failed (${failure.type})` : ''}.`,
      fields: {
        ...this.notificationFields(),
        ...(failure ? { step: failure.step, failureType: failure.type } : {}),
        failure: failureMessageOf(err),
      },
    });
  }

  /** What every notification of this import says: which import, which file. */
  private notificationFields(): Record<string, string> {
    const { workflowId, runId, namespace } = this.info;
    const { bucket, key } = this.input.source;
    return { workflowId, runId, namespace, file: `s3://${bucket}/${key}`, entityType: this.input.entityType };
  }

  private dropOperatorSignals(): void {
    this.retryRequested = false;
    this.abandonRequested = false;
  }

  private stepFailure(step: ImportStep, type: string, message: string): ApplicationFailure {
    this.progress.phase = 'failed';
    return ApplicationFailure.create({ message: `${step} failed (${type}): ${message}`, type, nonRetryable: true });
  }
}
