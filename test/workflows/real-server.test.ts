/**
 * The importFile scenarios end to end on a real Temporal server, with
 * activities that answer from a script (real-server-harness.ts). Most run on
 * the dev server; the budget waits (at least a minute each) run on the
 * time-skipping test server, where timers pass at once and which handles
 * everything these runs use (no Updates here).
 *
 * With RECORD_HISTORIES_DIR set (`npm run record:histories`), each scenario
 * also writes its history as a replay fixture (recorded-histories.ts).
 */
import { randomUUID } from 'node:crypto';
import { Context } from '@temporalio/activity';
import type { WorkflowHandle } from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import { temporal } from '@temporalio/proto';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CliContext } from '../../worker/cli/context.js';
import { statusCommand } from '../../worker/cli/status-command.js';
import type { importFile } from '../../workflows/import-file.js';
import type {
  AllActivities,
  AwaitJobCompletionInput,
  CreateImportJobInput,
  InspectSourceInput,
  UploadDataInput,
} from '../../workflows/policy/activity-contracts.js';
import { pollTaskQueue, uploadTaskQueue } from '../../workflows/policy/budget-contracts.js';
import type { ImportFileInput } from '../../workflows/policy/import-input.js';
import { ABANDON_SIGNAL, RETRY_SIGNAL } from '../../workflows/policy/import-workflow-contract.js';
import { jobKeyForWorkflow } from '../../workflows/policy/job-key.js';
import { createEnvironment, createTimeSkippingEnvironment } from '../support/temporal-server.js';
import { budgetExhausted, importInput, inspected, jobCreated, uploaded } from './import-fixtures.js';
import {
  bundleWorkflows,
  failure,
  progressWhen,
  scriptedActivities,
  WorkflowHarness,
  workflowFailureOf,
} from './real-server-harness.js';
import { type RecordingServer, recordHistory } from './recorded-histories.js';

const EventType = temporal.api.enums.v1.EventType;
const withoutMappings: ImportFileInput = { ...importInput, fieldMappings: undefined };
const awaitingRetry: ImportFileInput = { ...withoutMappings, onFailure: 'await-retry' };

/** Sets up a server and a bundle for one describe block; `record` writes a finished run as fixture `name`. */
function onServer(server: RecordingServer, create: () => Promise<TestWorkflowEnvironment>) {
  const ctx = {} as { harness: WorkflowHarness; record: (name: string, handle: WorkflowHandle) => Promise<void> };
  let env: TestWorkflowEnvironment | undefined;
  beforeAll(async () => {
    env = await create();
    ctx.harness = new WorkflowHarness(env, await bundleWorkflows(), server === 'dev-server' ? 'dev' : 'skip');
    ctx.record = (name, handle) =>
      recordHistory(ctx.harness.env.client, {
        name,
        scenario: expect.getState().currentTestName ?? name,
        server,
        workflowId: handle.workflowId,
      });
  }, 120_000);
  afterAll(async () => {
    await env?.teardown();
  });
  return ctx;
}

describe('importFile on the dev server', () => {
  const ctx = onServer('dev-server', createEnvironment);

  /** Runs an import to its end with scripted activities; records it as fixture `name`. */
  async function runImport(name: string, activities: ReturnType<typeof scriptedActivities>, input = importInput) {
    return ctx.harness.withWorkers(activities.activities, async (taskQueue) => {
      const handle = await ctx.harness.startImport(taskQueue, input);
      const outcome = await handle.result().then(
        (result) => ({ result, taskQueue, workflowId: handle.workflowId }),
        (err: unknown) => ({ err, taskQueue, workflowId: handle.workflowId }),
      );
      await ctx.record(name, handle);
      return outcome;
    });
  }

  async function failedImport(name: string, activities: ReturnType<typeof scriptedActivities>, input = importInput) {
    const outcome = await runImport(name, activities, input);
    return workflowFailureOf('err' in outcome ? Promise.reject(outcome.err) : Promise.resolve(outcome.result));
  }

  it('imports a file: every step once, the upload and the completion poll on queues of their own, calls summed', async () => {
    const scripted = scriptedActivities({});
    const outcome = await runImport('import-happy-path-with-mappings', scripted);
    if (!('result' in outcome)) throw outcome.err;
    const { result, workflowId, taskQueue } = outcome;
    expect(scripted.calls.map((c) => c.step)).toEqual([
      'inspectSource',
      'applyFieldMappings',
      'createImportJob',
      'uploadData',
      'awaitJobCompletion',
    ]);
    expect(scripted.callsOf('createImportJob')[0]?.input as CreateImportJobInput).toMatchObject({
      jobKey: jobKeyForWorkflow(workflowId),
    });
    const upload = scripted.callsOf('uploadData')[0];
    expect(upload?.taskQueue).toBe(uploadTaskQueue(taskQueue));
    expect(scripted.callsOf('awaitJobCompletion')[0]?.taskQueue).toBe(pollTaskQueue(taskQueue));
    expect(upload?.input).toMatchObject({ listAction: 'noop', etag: inspected.etag, tenant: 'acme' });
    expect(result).toMatchObject({
      jobId: jobCreated.jobId,
      state: 'completed',
      bytes: inspected.sizeBytes,
      etag: inspected.etag,
      apiCalls: { getFieldMappings: 2, putFieldMappings: 1, listJobs: 1, createJob: 1, jobStatus: 4, submitData: 1 },
      jobReused: false,
      uploadSkipped: false,
    });
    expect(result.seconds.waitingForBudget).toBe(0);
  });

  it('without field mappings, skips the mapping step', async () => {
    const scripted = scriptedActivities({});
    const outcome = await runImport('import-happy-path-without-mappings', scripted, withoutMappings);
    if (!('result' in outcome)) throw outcome.err;
    expect(scripted.calls.map((c) => c.step)).toEqual([
      'inspectSource',
      'createImportJob',
      'uploadData',
      'awaitJobCompletion',
    ]);
    expect(outcome.result.apiCalls).toEqual({ listJobs: 1, createJob: 1, jobStatus: 4, submitData: 1 });
  });

  it('fails when the job fails', async () => {
    const scripted = scriptedActivities({
      awaitJobCompletion: [{ fails: failure('JobFailed', 'job 4242 failed') }],
    });
    const cause = await failedImport('import-job-failed', scripted);
    expect(cause.type).toBe('JobFailed');
    expect(cause.message).toBe('awaitJobCompletion failed (JobFailed): job 4242 failed');
  });

  it('fails when the job times out, even with await-retry', async () => {
    const scripted = scriptedActivities({
      awaitJobCompletion: [{ fails: failure('JobTimedOut', 'job 4242 still running after 24 h') }],
    });
    const cause = await failedImport('import-job-timed-out-await-retry', scripted, awaitingRetry);
    expect(cause.type).toBe('JobTimedOut');
    expect(scripted.callsOf('awaitJobCompletion')).toHaveLength(1);
  });

  it('fails at once on an operator-fixable error when onFailure is fail', async () => {
    const scripted = scriptedActivities({
      inspectSource: [{ fails: failure('InvalidCsvHeader', 'header lacks "Name"') }],
    });
    const cause = await failedImport('import-fixable-failure-fails', scripted);
    expect(cause.type).toBe('InvalidCsvHeader');
    expect(cause.message).toBe('inspectSource failed (InvalidCsvHeader): header lacks "Name"');
    expect(scripted.callsOf('createImportJob')).toHaveLength(0);
  });

  it('with await-retry, waits for the operator, and a retry signal re-runs the failed step', async () => {
    const { activities, callsOf } = scriptedActivities({
      uploadData: [{ fails: failure('Forbidden', 'no import permission') }],
    });
    const result = await ctx.harness.withWorkers(activities, async (taskQueue) => {
      const handle = await ctx.harness.startImport(taskQueue, awaitingRetry);
      const waiting = await progressWhen(handle, (p) => p.awaitingRetry !== undefined);
      expect(waiting.awaitingRetry).toMatchObject({ step: 'uploadData', failureType: 'Forbidden' });
      expect(waiting.lastError).toEqual({ step: 'uploadData', type: 'Forbidden', message: 'no import permission' });
      await handle.signal(RETRY_SIGNAL);
      const result = await handle.result();
      await ctx.record('import-await-retry-retried', handle);
      return result;
    });
    expect(callsOf('uploadData')).toHaveLength(2);
    expect(callsOf('createImportJob')).toHaveLength(1);
    expect(result.state).toBe('completed');
  });

  it('with await-retry, a retry sent while the failing step still runs is kept and honoured', async () => {
    const { activities, callsOf } = scriptedActivities({});
    let attempts = 0;
    const withEarlyRetry: AllActivities = {
      ...activities,
      async uploadData(input) {
        attempts += 1;
        if (attempts > 1) return activities.uploadData(input);
        // The operator saw the step fail in `status` and sent retry before the workflow began to wait.
        const workflowId = Context.current().info.workflowExecution?.workflowId ?? '';
        await ctx.harness.env.client.workflow.getHandle(workflowId).signal(RETRY_SIGNAL);
        throw ApplicationFailure.create({ type: 'Forbidden', message: 'no import permission', nonRetryable: true });
      },
    };
    // Short enough that a dropped signal fails the test instead of waiting the default 7 days.
    const input: ImportFileInput = { ...importInput, onFailure: 'await-retry', awaitRetryTimeoutMs: 30_000 };
    const result = await ctx.harness.withWorkers(withEarlyRetry, async (taskQueue) => {
      const handle = await ctx.harness.startImport(taskQueue, input);
      const result = await handle.result();
      await ctx.record('import-await-retry-early-signal', handle);
      return result;
    });
    expect(attempts).toBe(2);
    expect(callsOf('createImportJob')).toHaveLength(1);
    expect(result.state).toBe('completed');
  });

  it('status shows the attempt and last failure of a step Temporal keeps retrying', async () => {
    const { activities } = scriptedActivities({});
    const failing: AllActivities = {
      ...activities,
      async createImportJob() {
        throw ApplicationFailure.create({ type: 'ServerError', message: 'POST /import/v1/job: the service failed' });
      },
    };
    const lines = await ctx.harness.withWorkers(failing, async (taskQueue) => {
      const handle = await ctx.harness.startImport(taskQueue);
      for (;;) {
        const pending = (await handle.describe()).raw.pendingActivities ?? [];
        if ((pending[0]?.attempt ?? 0) >= 2 && pending[0]?.lastFailure) break;
        await new Promise((resolve) => setTimeout(resolve, 200));
      }
      const printed: string[] = [];
      const cli: CliContext = {
        env: {},
        connect: async () => ({ client: ctx.harness.env.client, close: async () => {} }),
        print: (line) => printed.push(line),
        warn: (line) => printed.push(line),
        now: () => new Date(),
      };
      await statusCommand(handle.workflowId, cli);
      await handle.terminate('test done');
      return printed;
    });
    expect(lines).toContainEqual(
      expect.stringMatching(
        /^retrying {2}createImportJob: attempt \d+, next attempt .+; last failure ServerError: POST \/import\/v1\/job: the service failed$/,
      ),
    );
  });

  it('with await-retry after the file changed, the retry inspects the new file and uploads it pinned to its ETag', async () => {
    const changed = { ...inspected, etag: '"fedcba9876543210"', sizeBytes: 2_097_152 };
    const { activities, callsOf } = scriptedActivities({
      inspectSource: [{ returns: inspected }, { returns: changed }],
      uploadData: [{ fails: failure('SourceChanged', 'the object changed since it was inspected') }],
    });
    const result = await ctx.harness.withWorkers(activities, async (taskQueue) => {
      const handle = await ctx.harness.startImport(taskQueue, awaitingRetry);
      await progressWhen(handle, (p) => p.awaitingRetry !== undefined);
      await handle.signal(RETRY_SIGNAL);
      const result = await handle.result();
      await ctx.record('import-source-changed-retried', handle);
      return result;
    });
    expect(callsOf('inspectSource').map((c) => (c.input as InspectSourceInput).key)).toEqual([
      importInput.source.key,
      importInput.source.key,
    ]);
    expect(callsOf('uploadData').map((c) => (c.input as UploadDataInput).etag)).toEqual([inspected.etag, changed.etag]);
    expect(result).toMatchObject({ etag: changed.etag, bytes: changed.sizeBytes, state: 'completed' });
  });

  it('with await-retry, an abandon signal fails the import with the step and its cause', async () => {
    const { activities } = scriptedActivities({
      inspectSource: [{ fails: failure('SourceNotFound', 'no such object') }],
    });
    const cause = await ctx.harness.withWorkers(activities, async (taskQueue) => {
      const handle = await ctx.harness.startImport(taskQueue, awaitingRetry);
      await progressWhen(handle, (p) => p.awaitingRetry !== undefined);
      await handle.signal(ABANDON_SIGNAL);
      const cause = await workflowFailureOf(handle.result());
      await ctx.record('import-await-retry-abandoned', handle);
      return cause;
    });
    expect(cause.type).toBe('SourceNotFound');
    expect(cause.message).toBe('inspectSource failed (SourceNotFound): no such object (abandoned by the operator)');
  });

  it('with await-retry, no signal within the timeout fails the import', async () => {
    const scripted = scriptedActivities({
      inspectSource: [{ fails: failure('SourceNotFound', 'no such object') }],
    });
    const cause = await failedImport('import-await-retry-timed-out', scripted, {
      ...awaitingRetry,
      awaitRetryTimeoutMs: 1_000,
    });
    expect(cause.type).toBe('SourceNotFound');
    expect(cause.message).toBe(
      'inspectSource failed (SourceNotFound): no such object (no retry signal within 1000 ms)',
    );
  });

  it('after a Reset to the first workflow task, the new run finds the job and skips the accepted upload', async () => {
    const { activities, callsOf } = scriptedActivities({
      createImportJob: [{ returns: jobCreated }, { returns: { ...jobCreated, reused: true, state: 'queued' } }],
      uploadData: [{ returns: uploaded }, { returns: { ...uploaded, skipped: true, bytesSent: 0 } }],
    });
    const { first, again, workflowId } = await ctx.harness.withWorkers(activities, async (taskQueue) => {
      const handle = await ctx.harness.startImport(taskQueue);
      const first = await handle.result();
      const history = await handle.fetchHistory();
      const firstTask = history.events?.find((e) => e.eventType === EventType.EVENT_TYPE_WORKFLOW_TASK_COMPLETED);
      const { runId } = await ctx.harness.env.client.workflowService.resetWorkflowExecution({
        namespace: ctx.harness.env.namespace ?? 'default',
        workflowExecution: { workflowId: handle.workflowId, runId: (await handle.describe()).runId },
        workflowTaskFinishEventId: firstTask?.eventId,
        reason: 'operator reset in a test',
        requestId: randomUUID(),
      });
      const resetRun = ctx.harness.env.client.workflow.getHandle<typeof importFile>(handle.workflowId, runId ?? '');
      const again = await resetRun.result();
      await ctx.record('import-reset-after-upload', resetRun);
      return { first, again, workflowId: handle.workflowId };
    });
    // The reset run ran every step again; the activities (here scripted) found the job and the accepted upload.
    const jobKey = jobKeyForWorkflow(workflowId);
    expect(callsOf('createImportJob').map((c) => (c.input as CreateImportJobInput).jobKey)).toEqual([jobKey, jobKey]);
    expect(callsOf('uploadData')).toHaveLength(2);
    expect(first).toMatchObject({ jobReused: false, uploadSkipped: false });
    expect(again).toMatchObject({ jobId: first.jobId, jobReused: true, uploadSkipped: true, state: 'completed' });
  });

  it('rejects invalid input before calling any activity', async () => {
    const scripted = scriptedActivities({});
    const bad = { ...importInput, entityType: 'Lead' } as unknown as ImportFileInput;
    const cause = await failedImport('import-invalid-input', scripted, bad);
    expect(cause.type).toBe('InvalidInput');
    expect(cause.message).toContain('entityType must be one of Account, Opportunity, Person, Activity, got "Lead"');
    expect(scripted.calls).toHaveLength(0);
  });
});

describe('importFile budget waits on the time-skipping server', () => {
  const ctx = onServer('time-skipping-server', createTimeSkippingEnvironment);

  it('waits for the budget window when createJob is spent, then creates the job and completes', async () => {
    const resetsAt = new Date(Date.now() + 3_600_000).toISOString();
    const { activities, callsOf } = scriptedActivities({
      createImportJob: [{ fails: budgetExhausted('createJob', resetsAt) }],
    });
    const result = await ctx.harness.withWorkers(activities, async (taskQueue) => {
      const handle = await ctx.harness.startImport(taskQueue);
      const waiting = await progressWhen(handle, (p) => p.waitingForBudgetUntil !== undefined);
      expect(Date.parse(waiting.waitingForBudgetUntil ?? '')).toBeGreaterThan(Date.parse(resetsAt));
      expect(waiting.phase).toBe('creating-job');
      const result = await handle.result();
      await ctx.record('import-budget-wait-create-job', handle);
      return result;
    });
    expect(callsOf('createImportJob')).toHaveLength(2);
    expect(result.seconds.waitingForBudget).toBeGreaterThan(0);
  });

  it('resumes the completion wait after a budget wait with the same start instant, at the slowest poll rate', async () => {
    const resetsAt = new Date(Date.now() + 3_600_000).toISOString();
    const { activities, callsOf } = scriptedActivities({
      awaitJobCompletion: [{ fails: { ...budgetExhausted('jobStatus', resetsAt), type: 'DailyLimitReached' } }],
    });
    await ctx.harness.withWorkers(activities, async (taskQueue) => {
      const handle = await ctx.harness.startImport(taskQueue);
      const result = await handle.result();
      await ctx.record('import-budget-wait-job-status', handle);
      return result;
    });
    const [first, second] = callsOf('awaitJobCompletion').map((c) => c.input as AwaitJobCompletionInput);
    expect(first?.startPollIndex).toBeUndefined();
    expect(second?.startPollIndex).toBe(4);
    expect(second?.waitingSince).toBe(first?.waitingSince);
  });
});
