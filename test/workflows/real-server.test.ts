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
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Context } from '@temporalio/activity';
import type { WorkflowHandle } from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import { temporal } from '@temporalio/proto';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeAwaitJobCompletion } from '../../activities/await-job-completion.js';
import { makeCreateImportJob } from '../../activities/create-job/create-import-job.js';
import { ServiceClient } from '../../activities/service/client.js';
import { createTokenSource } from '../../activities/service/token-source.js';
import { Secret } from '../../temporal.config.js';
import type { CliContext } from '../../worker/cli/context.js';
import { statusCommand } from '../../worker/cli/status-command.js';
import type {
  AwaitJobCompletionInput,
  CreateImportJobInput,
  InspectSourceInput,
  PlanRowsInput,
  UploadDataInput,
} from '../../workflows/contracts/activities.js';
import type { AllActivities } from '../../workflows/contracts/all-activities.js';
import { pollTaskQueue, uploadTaskQueue } from '../../workflows/contracts/budget.js';
import type { ImportFileInput } from '../../workflows/contracts/import-input.js';
import { abandonSignal, retrySignal } from '../../workflows/contracts/messages.js';
import type { importFile } from '../../workflows/import-file.js';
import { budgetWith } from '../activities/environment.js';
import { DEMO_TOKENS, startSimulator } from '../simulator/server.js';
import { InMemoryJobRecordGate } from '../support/in-memory-job-record-gate.js';
import { createEnvironment, createTimeSkippingEnvironment } from '../support/temporal-server.js';
import { bundleWorkflows } from '../support/workflow-bundle.js';
import { budgetExhausted, importInput, inspected, jobCreated, rowsPlanned, uploaded } from './import-fixtures.js';
import {
  failure,
  progressWhen,
  scriptedActivities,
  WorkflowHarness,
  workflowFailureOf,
} from './real-server-harness.js';
import { type RecordingServer, recordHistory } from './recorded-histories.js';

const EventType = temporal.api.enums.v1.EventType;
/** The tenant of budgetWith()'s gate: an import its real activities serve must name it (or none). */
const GATE_TENANT = 't1';
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
      const ids = { taskQueue, workflowId: handle.workflowId, firstRunId: handle.firstExecutionRunId };
      const outcome = await handle.result().then(
        (result) => ({ result, ...ids }),
        (err: unknown) => ({ err, ...ids }),
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
    const { result, taskQueue } = outcome;
    expect(scripted.calls.map((c) => c.step)).toEqual([
      'inspectSource',
      'planRows',
      'applyFieldMappings',
      'createImportJob',
      'uploadData',
      'awaitJobCompletion',
    ]);
    expect(scripted.callsOf('createImportJob')[0]?.input as CreateImportJobInput).toMatchObject({
      // The object version's job record decides which job imports it.
      objectVersion: { ...importInput.source, etag: inspected.etag },
    });
    expect(scripted.callsOf('awaitJobCompletion')[0]?.input).toMatchObject({
      objectVersion: { ...importInput.source, etag: inspected.etag },
    });
    const upload = scripted.callsOf('uploadData')[0];
    expect(upload?.taskQueue).toBe(uploadTaskQueue(taskQueue));
    // The row check reads the whole file: it runs where the uploads run.
    expect(scripted.callsOf('planRows')[0]?.taskQueue).toBe(uploadTaskQueue(taskQueue));
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
      'planRows',
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
      await handle.signal(retrySignal);
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
        await ctx.harness.env.client.workflow.getHandle(workflowId).signal(retrySignal);
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
      await statusCommand(handle.workflowId, {}, cli);
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
    const changedPlan = {
      ...rowsPlanned,
      plan: { ...rowsPlanned.plan, parts: [{ ...rowsPlanned.plan.parts[0]!, bytes: changed.sizeBytes }] },
    };
    const { activities, callsOf } = scriptedActivities({
      inspectSource: [{ returns: inspected }, { returns: changed }],
      planRows: [{ returns: rowsPlanned }, { returns: changedPlan }],
      uploadData: [{ fails: failure('SourceChanged', 'the object changed since it was inspected') }],
    });
    const result = await ctx.harness.withWorkers(activities, async (taskQueue) => {
      const handle = await ctx.harness.startImport(taskQueue, awaitingRetry);
      await progressWhen(handle, (p) => p.awaitingRetry !== undefined);
      await handle.signal(retrySignal);
      const result = await handle.result();
      await ctx.record('import-source-changed-retried', handle);
      return result;
    });
    expect(callsOf('inspectSource').map((c) => (c.input as InspectSourceInput).key)).toEqual([
      importInput.source.key,
      importInput.source.key,
    ]);
    expect(callsOf('uploadData').map((c) => (c.input as UploadDataInput).etag)).toEqual([inspected.etag, changed.etag]);
    // The new file's rows are checked again, against its own ETag, before it is sent.
    expect(callsOf('planRows').map((c) => (c.input as PlanRowsInput).etag)).toEqual([inspected.etag, changed.etag]);
    // The replaced file is another object version: a job of its own, under its own record; the old one let go.
    const creates = callsOf('createImportJob').map((c) => c.input as CreateImportJobInput);
    expect(creates.map((c) => c.objectVersion?.etag)).toEqual([inspected.etag, changed.etag]);
    expect(creates[1]?.supersedes).toEqual({ ...importInput.source, etag: inspected.etag });
    expect(result).toMatchObject({ etag: changed.etag, bytes: changed.sizeBytes, state: 'completed' });
  });

  it('with await-retry, an abandon signal fails the import with the step and its cause', async () => {
    const { activities } = scriptedActivities({
      inspectSource: [{ fails: failure('SourceNotFound', 'no such object') }],
    });
    const cause = await ctx.harness.withWorkers(activities, async (taskQueue) => {
      const handle = await ctx.harness.startImport(taskQueue, awaitingRetry);
      await progressWhen(handle, (p) => p.awaitingRetry !== undefined);
      await handle.signal(abandonSignal);
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
    const { first, again } = await ctx.harness.withWorkers(activities, async (taskQueue) => {
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
      return { first, again };
    });
    // The reset run ran every step again; the activities (here scripted) found the job and the accepted upload.
    // Both runs name the same object version: its job record knows the job the first run made.
    const objectVersion = { ...importInput.source, etag: inspected.etag };
    expect(callsOf('createImportJob').map((c) => (c.input as CreateImportJobInput).objectVersion)).toEqual([
      objectVersion,
      objectVersion,
    ]);
    expect(callsOf('uploadData')).toHaveLength(2);
    expect(first).toMatchObject({ jobReused: false, uploadSkipped: false });
    expect(again).toMatchObject({ jobId: first.jobId, jobReused: true, uploadSkipped: true, state: 'completed' });
  });

  it('retries a 401 that came back after the token rotated (the server applies the policy, not only the flag)', async () => {
    const dir = await mkdtemp(path.join(tmpdir(), 'token-'));
    const tokenFile = path.join(dir, 'token');
    await writeFile(tokenFile, DEMO_TOKENS.expired);
    const sim = await startSimulator();
    const service = new ServiceClient({
      baseUrl: sim.baseUrl,
      tokens: createTokenSource({ kind: 'file', path: tokenFile }),
    });
    try {
      const { activities } = scriptedActivities({});
      const jobRecord = new InMemoryJobRecordGate();
      activities.createImportJob = makeCreateImportJob({ service, budget: budgetWith(), jobRecord });
      // The service is slow to refuse the expired token; the sidecar rotates the file meanwhile.
      sim.delayNext('createJob', 1_000);
      const result = await ctx.harness.withWorkers(activities, async (taskQueue) => {
        // Without mappings the create is the import's first call to the service (a mapped import reads its
        // custom source's name first), so the expired token meets the create.
        const input = { ...importInput, fieldMappings: undefined, tenant: GATE_TENANT };
        const handle = await ctx.harness.startImport(taskQueue, input);
        while (!sim.requests().some((r) => r.endpoint === 'createJob')) await new Promise((r) => setTimeout(r, 10));
        await writeFile(tokenFile, DEMO_TOKENS.importer);
        return handle.result();
      });
      // The create is sent again with the new token, its body fenced again: the record granted two confirms.
      const creates = sim.requests().filter((r) => r.endpoint === 'createJob');
      expect(creates.map((r) => r.status)).toEqual([401, 200]);
      expect(jobRecord.messages.filter((m) => m.step === 'confirm')).toHaveLength(2);
      expect(sim.requests().filter((r) => r.endpoint === 'listJobs')).toHaveLength(0);
      expect(result.state).toBe('completed');
      expect(sim.jobs()).toHaveLength(1);
    } finally {
      await service.close();
      await sim.close();
      await rm(dir, { recursive: true, force: true });
    }
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

  it('reports a job that completed during a budget wait past the job timeout as completed, not timed out', async () => {
    const sim = await startSimulator({ processingMs: 10 });
    const service = new ServiceClient({
      baseUrl: sim.baseUrl,
      tokens: createTokenSource({ kind: 'env', token: new Secret(DEMO_TOKENS.importer) }),
    });
    try {
      const job = await service.createJob({ dataImportName: 'hole 7', entityType: 'Account' });
      const csv = Buffer.from('Account Name,Account Domain\nAcme,acme.example\n');
      await service.submitData(job.id, [csv], { contentLength: csv.length });
      const realAwait = makeAwaitJobCompletion({
        service,
        budget: budgetWith(),
        poll: { scheduleMs: [50], jitterRatio: 0 },
      });
      let awaits = 0;
      const { activities } = scriptedActivities({
        createImportJob: [{ returns: { ...jobCreated, jobId: job.id } }],
      });
      activities.awaitJobCompletion = async (input) => {
        awaits += 1;
        // The first wait hits the service's daily limit at once; the workflow waits for the window
        // (at least a minute), far past this import's one-second job timeout.
        if (awaits === 1) {
          const { message, type, details } = budgetExhausted('jobStatus', new Date(Date.now() + 1_000).toISOString());
          throw ApplicationFailure.create({ message, type, nonRetryable: true, details });
        }
        return realAwait(input);
      };
      const result = await ctx.harness.withWorkers(activities, async (taskQueue) =>
        (
          await ctx.harness.startImport(taskQueue, { ...importInput, tenant: GATE_TENANT, jobTimeoutMs: 1_000 })
        ).result(),
      );
      expect(result).toMatchObject({ jobId: job.id, state: 'completed' });
      expect(result.seconds.waitingForBudget).toBeGreaterThan(1);
      expect(sim.requests().filter((r) => r.endpoint === 'jobStatus')).toHaveLength(1);
    } finally {
      await service.close();
      await sim.close();
    }
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
