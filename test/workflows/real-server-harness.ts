/**
 * Running the real workflow code on a real Temporal server with activities
 * that answer from a script: the harness shared by the real-server tests and
 * `npm run measure:history`. The workflows see a real server's events,
 * timers, signals and Updates; only the activities' answers are scripted.
 */
import { Context } from '@temporalio/activity';
import {
  WorkflowFailedError,
  type WorkflowHandle,
  type WorkflowHandleWithFirstExecutionRunId,
} from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { Worker } from '@temporalio/worker';
import type { AllActivities } from '../../workflows/contracts/all-activities.js';
import { pollTaskQueue, uploadTaskQueue } from '../../workflows/contracts/budget.js';
import type { ImportFileInput } from '../../workflows/contracts/import-input.js';
import type { ImportProgress } from '../../workflows/contracts/import-workflow.js';
import { progressQuery } from '../../workflows/contracts/messages.js';
import type { importFile } from '../../workflows/import-file.js';
import { WORKFLOW_SINKS } from '../support/workflow-bundle.js';
import type { FailureSpec } from './history-builder.js';
import {
  importInput,
  inspected,
  jobCompleted,
  jobCreated,
  mappingsApplied,
  rowsPlanned,
  uploaded,
} from './import-fixtures.js';

export type Step = keyof AllActivities;
type Outcome = { returns: unknown } | { fails: FailureSpec };

/** Activities that answer from a script, one outcome per call, and record what they were asked. */
export function scriptedActivities(script: Partial<Record<Step, Outcome[]>>) {
  const calls: { step: Step; input: unknown; taskQueue: string }[] = [];
  const defaults: Record<Step, unknown> = {
    inspectSource: inspected,
    planRows: rowsPlanned,
    applyFieldMappings: mappingsApplied,
    createImportJob: jobCreated,
    uploadData: uploaded,
    awaitJobCompletion: jobCompleted,
    readBudgetUsage: {},
    readImportStates: {},
    listFeedObjects: { objects: [] },
    countWindowSpend: { createJob: 0, submitData: 0, listJobs: 0 },
    dryRunPreflight: { ok: true, value: inspected, apiCalls: {} },
    diffFieldMappings: { ok: true, value: { inPlace: true, missing: [], unexpected: [] }, apiCalls: {} },
    findImportJobs: { ok: true, value: { via: 'none', jobs: [] }, apiCalls: {} },
    notify: undefined,
  };
  const answer = (step: Step) => async (input: unknown) => {
    calls.push({ step, input, taskQueue: Context.current().info.taskQueue });
    const outcome = script[step]?.shift() ?? { returns: defaults[step] };
    if ('fails' in outcome) {
      const { message, type, details } = outcome.fails;
      throw ApplicationFailure.create({ message, type, nonRetryable: true, details });
    }
    return outcome.returns;
  };
  const steps = Object.keys(defaults) as Step[];
  const activities = Object.fromEntries(steps.map((s) => [s, answer(s)])) as unknown as AllActivities;
  return { activities, calls, callsOf: (step: Step) => calls.filter((c) => c.step === step) };
}

export const failure = (type: string, message: string): FailureSpec => ({ type, message });

/** One server and one bundle; each `withWorkers` call gets task queues of its own. */
export class WorkflowHarness {
  private testNumber = 0;

  constructor(
    readonly env: TestWorkflowEnvironment,
    private readonly code: string,
    private readonly prefix: string,
  ) {}

  nextTaskQueue(kind = 'wf'): string {
    return `${this.prefix}-${kind}-${process.pid}-${++this.testNumber}`;
  }

  /** A worker for the main queue (workflows and short activities) serving `activities`. */
  createWorker(taskQueue: string, activities: object): Promise<Worker> {
    return Worker.create({
      connection: this.env.nativeConnection,
      taskQueue,
      workflowBundle: { code: this.code },
      sinks: WORKFLOW_SINKS,
      activities,
    });
  }

  /** Runs `body` with a workflow worker, an upload worker and a completion-poll worker, all serving `activities`. */
  async withWorkers<T>(
    activities: Pick<AllActivities, 'uploadData' | 'planRows' | 'awaitJobCompletion'>,
    body: (taskQueue: string) => Promise<T>,
  ): Promise<T> {
    const taskQueue = this.nextTaskQueue();
    const main = await this.createWorker(taskQueue, activities);
    const uploads = await Worker.create({
      connection: this.env.nativeConnection,
      taskQueue: uploadTaskQueue(taskQueue),
      activities: { uploadData: activities.uploadData, planRows: activities.planRows },
    });
    const polls = await Worker.create({
      connection: this.env.nativeConnection,
      taskQueue: pollTaskQueue(taskQueue),
      activities: { awaitJobCompletion: activities.awaitJobCompletion },
    });
    return main.runUntil(uploads.runUntil(polls.runUntil(body(taskQueue))));
  }

  startImport(
    taskQueue: string,
    input: ImportFileInput = importInput,
  ): Promise<WorkflowHandleWithFirstExecutionRunId<typeof importFile>> {
    return this.env.client.workflow.start<typeof importFile>('importFile', {
      taskQueue,
      workflowId: `${taskQueue}-import`,
      args: [input],
    });
  }
}

/** Polls the progress query until `ready` holds. */
export async function progressWhen(
  handle: WorkflowHandle<typeof importFile>,
  ready: (p: ImportProgress) => boolean,
): Promise<ImportProgress> {
  for (;;) {
    const progress = await handle.query(progressQuery);
    if (ready(progress)) return progress;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** The ApplicationFailure a workflow failed with; throws on anything else. */
export async function workflowFailureOf(promise: Promise<unknown>): Promise<ApplicationFailure> {
  const err = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  if (!(err instanceof WorkflowFailedError)) throw new Error(`expected a WorkflowFailedError, got ${String(err)}`);
  if (!(err.cause instanceof ApplicationFailure)) {
    throw new Error(`expected an ApplicationFailure cause, got ${String(err.cause)}`);
  }
  return err.cause;
}
