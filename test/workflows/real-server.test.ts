/**
 * The same scenarios as the replay tests, run end to end against a real
 * Temporal server with in-test activities; see test/support/temporal-server.ts
 * for how to name one (none can be had on the machines this project is built on).
 */
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Context } from '@temporalio/activity';
import { WorkflowFailedError, type WorkflowHandle, WorkflowUpdateFailedError } from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import { temporal } from '@temporalio/proto';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { bundleWorkflowCode, Worker } from '@temporalio/worker';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeAwaitJobCompletion } from '../../activities/await-job-completion.js';
import { makeCreateImportJob } from '../../activities/create-import-job.js';
import { ServiceClient } from '../../activities/service/client.js';
import { createTokenSource } from '../../activities/service/token-source.js';
import { Secret } from '../../temporal.config.js';
import type { CliContext } from '../../worker/cli/context.js';
import { statusCommand } from '../../worker/cli/status-command.js';
import type { budgetLedger } from '../../workflows/budget-ledger.js';
import type { importFile } from '../../workflows/import-file.js';
import type {
  AllActivities,
  AwaitJobCompletionInput,
  CreateImportJobInput,
} from '../../workflows/policy/activity-contracts.js';
import {
  EXHAUSTED_SIGNAL,
  type LedgerUsage,
  ledgerWorkflowId,
  pollTaskQueue,
  RESERVE_UPDATE,
  type ReserveRequest,
  type ReserveResult,
  USAGE_QUERY,
  uploadTaskQueue,
} from '../../workflows/policy/budget-contracts.js';
import { BUDGETED_ENDPOINTS, type BudgetedEndpoint } from '../../workflows/policy/endpoints.js';
import type { ImportFileInput } from '../../workflows/policy/import-input.js';
import {
  ABANDON_SIGNAL,
  type ImportProgress,
  PROGRESS_QUERY,
  RETRY_SIGNAL,
} from '../../workflows/policy/import-workflow-contract.js';
import { executionJobScope, jobKeyFor } from '../../workflows/policy/job-key.js';
import { budgetWith } from '../service-activities/environment.js';
import { DEMO_TOKENS, startSimulator } from '../simulator/server.js';
import { createEnvironment } from '../support/temporal-server.js';
import type { FailureSpec } from './history-builder.js';
import {
  budgetExhausted,
  importInput,
  inspected,
  jobCompleted,
  jobCreated,
  mappingsApplied,
  uploaded,
} from './import-fixtures.js';

type Step = keyof AllActivities;
type Outcome = { returns: unknown } | { fails: FailureSpec };

/** Activities that answer from a script, one outcome per call, and record what they were asked. */
function scriptedActivities(script: Partial<Record<Step, Outcome[]>>) {
  const calls: { step: Step; input: unknown; taskQueue: string }[] = [];
  const defaults: Record<Step, unknown> = {
    inspectSource: inspected,
    applyFieldMappings: mappingsApplied,
    createImportJob: jobCreated,
    uploadData: uploaded,
    awaitJobCompletion: jobCompleted,
    readBudgetUsage: {},
    readImportStates: {},
    listFeedObjects: { objects: [] },
    countWindowSpend: { createJob: 0, submitData: 0, listJobs: 0 },
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

const failure = (type: string, message: string): FailureSpec => ({ type, message });

describe('workflows on a real Temporal server', () => {
  let env: TestWorkflowEnvironment;
  let code: string;
  let testNumber = 0;

  beforeAll(async () => {
    env = await createEnvironment();
    ({ code } = await bundleWorkflowCode({
      workflowsPath: path.resolve(import.meta.dirname, '../../workflows/index.ts'),
    }));
  }, 120_000);

  afterAll(async () => {
    await env?.teardown();
  });

  /** Runs `body` with a workflow worker and an upload worker, both serving `activities`. */
  async function withWorkers<T>(activities: AllActivities, body: (taskQueue: string) => Promise<T>): Promise<T> {
    const taskQueue = `wf-test-${process.pid}-${++testNumber}`;
    const main = await Worker.create({
      connection: env.nativeConnection,
      taskQueue,
      workflowBundle: { code },
      activities,
    });
    const uploads = await Worker.create({
      connection: env.nativeConnection,
      taskQueue: uploadTaskQueue(taskQueue),
      activities: { uploadData: activities.uploadData },
    });
    const polls = await Worker.create({
      connection: env.nativeConnection,
      taskQueue: pollTaskQueue(taskQueue),
      activities: { awaitJobCompletion: activities.awaitJobCompletion },
    });
    return main.runUntil(uploads.runUntil(polls.runUntil(body(taskQueue))));
  }

  function startImport(taskQueue: string, input: ImportFileInput = importInput) {
    return env.client.workflow.start<typeof importFile>('importFile', {
      taskQueue,
      workflowId: `${taskQueue}-import`,
      args: [input],
    });
  }

  async function progressWhen(
    handle: WorkflowHandle<typeof importFile>,
    ready: (p: ImportProgress) => boolean,
  ): Promise<ImportProgress> {
    for (;;) {
      const progress = await handle.query<ImportProgress>(PROGRESS_QUERY);
      if (ready(progress)) return progress;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }

  async function failureOf(promise: Promise<unknown>): Promise<ApplicationFailure> {
    const err = await promise.then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(WorkflowFailedError);
    const cause = (err as WorkflowFailedError).cause;
    expect(cause).toBeInstanceOf(ApplicationFailure);
    return cause as ApplicationFailure;
  }

  it('imports a file: every step once, the upload and the completion poll on queues of their own, calls summed', async () => {
    const { activities, calls, callsOf } = scriptedActivities({});
    const { result, workflowId, firstRunId, taskQueue } = await withWorkers(activities, async (taskQueue) => {
      const handle = await startImport(taskQueue);
      return {
        result: await handle.result(),
        workflowId: handle.workflowId,
        firstRunId: handle.firstExecutionRunId,
        taskQueue,
      };
    });
    expect(calls.map((c) => c.step)).toEqual([
      'inspectSource',
      'applyFieldMappings',
      'createImportJob',
      'uploadData',
      'awaitJobCompletion',
    ]);
    expect(callsOf('createImportJob')[0]?.input as CreateImportJobInput).toMatchObject({
      jobKey: jobKeyFor(executionJobScope(workflowId, firstRunId), inspected.etag),
      searchAllStates: false,
    });
    const upload = callsOf('uploadData')[0];
    expect(upload?.taskQueue).toBe(uploadTaskQueue(taskQueue));
    expect(callsOf('awaitJobCompletion')[0]?.taskQueue).toBe(pollTaskQueue(taskQueue));
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

  it('waits for the budget window when createJob is spent, then creates the job and completes', async () => {
    const resetsAt = new Date(Date.now() + 1_000).toISOString();
    const { activities, callsOf } = scriptedActivities({
      createImportJob: [{ fails: budgetExhausted('createJob', resetsAt) }],
    });
    const result = await withWorkers(activities, async (taskQueue) => {
      const handle = await startImport(taskQueue);
      const waiting = await progressWhen(handle, (p) => p.waitingForBudgetUntil !== undefined);
      expect(Date.parse(waiting.waitingForBudgetUntil ?? '')).toBeGreaterThan(Date.parse(resetsAt));
      expect(waiting.phase).toBe('creating-job');
      return handle.result();
    });
    expect(callsOf('createImportJob')).toHaveLength(2);
    expect(result.seconds.waitingForBudget).toBeGreaterThan(0);
  }, 240_000);

  it('resumes the completion wait after a budget wait with the same start instant, at the slowest poll rate', async () => {
    const resetsAt = new Date(Date.now() + 1_000).toISOString();
    const { activities, callsOf } = scriptedActivities({
      awaitJobCompletion: [{ fails: { ...budgetExhausted('jobStatus', resetsAt), type: 'DailyLimitReached' } }],
    });
    await withWorkers(activities, async (taskQueue) => (await startImport(taskQueue)).result());
    const [first, second] = callsOf('awaitJobCompletion').map((c) => c.input as AwaitJobCompletionInput);
    expect(first?.startPollIndex).toBeUndefined();
    expect(second?.startPollIndex).toBe(4);
    expect(second?.waitingSince).toBe(first?.waitingSince);
  }, 240_000);

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
        budget: budgetWith({}, importInput.tenant),
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
      const result = await withWorkers(activities, async (taskQueue) =>
        (await startImport(taskQueue, { ...importInput, jobTimeoutMs: 1_000 })).result(),
      );
      expect(result).toMatchObject({ jobId: job.id, state: 'completed' });
      expect(result.seconds.waitingForBudget).toBeGreaterThan(1);
      expect(sim.requests().filter((r) => r.endpoint === 'jobStatus')).toHaveLength(1);
    } finally {
      await service.close();
      await sim.close();
    }
  }, 240_000);

  it('fails when the job fails', async () => {
    const { activities } = scriptedActivities({
      awaitJobCompletion: [{ fails: failure('JobFailed', 'job 4242 failed') }],
    });
    const cause = await withWorkers(activities, async (taskQueue) =>
      failureOf((await startImport(taskQueue)).result()),
    );
    expect(cause.type).toBe('JobFailed');
    expect(cause.message).toBe('awaitJobCompletion failed (JobFailed): job 4242 failed');
  });

  it('fails at once on an operator-fixable error when onFailure is fail', async () => {
    const { activities, callsOf } = scriptedActivities({
      inspectSource: [{ fails: failure('InvalidCsvHeader', 'header lacks "Name"') }],
    });
    const cause = await withWorkers(activities, async (taskQueue) =>
      failureOf((await startImport(taskQueue)).result()),
    );
    expect(cause.type).toBe('InvalidCsvHeader');
    expect(cause.message).toBe('inspectSource failed (InvalidCsvHeader): header lacks "Name"');
    expect(callsOf('createImportJob')).toHaveLength(0);
  });

  it('with await-retry, waits for the operator, and a retry signal re-runs the failed step', async () => {
    const { activities, callsOf } = scriptedActivities({
      uploadData: [{ fails: failure('Forbidden', 'no import permission') }],
    });
    const input: ImportFileInput = { ...importInput, onFailure: 'await-retry' };
    const result = await withWorkers(activities, async (taskQueue) => {
      const handle = await startImport(taskQueue, input);
      const waiting = await progressWhen(handle, (p) => p.awaitingRetry !== undefined);
      expect(waiting.awaitingRetry).toMatchObject({ step: 'uploadData', failureType: 'Forbidden' });
      expect(waiting.lastError).toEqual({ step: 'uploadData', type: 'Forbidden', message: 'no import permission' });
      await handle.signal(RETRY_SIGNAL);
      return handle.result();
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
        await env.client.workflow.getHandle(workflowId).signal(RETRY_SIGNAL);
        throw ApplicationFailure.create({ type: 'Forbidden', message: 'no import permission', nonRetryable: true });
      },
    };
    // Short enough that a dropped signal fails the test instead of waiting the default 7 days.
    const input: ImportFileInput = { ...importInput, onFailure: 'await-retry', awaitRetryTimeoutMs: 30_000 };
    const result = await withWorkers(withEarlyRetry, async (taskQueue) =>
      (await startImport(taskQueue, input)).result(),
    );
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
    const lines = await withWorkers(failing, async (taskQueue) => {
      const handle = await startImport(taskQueue);
      for (;;) {
        const pending = (await handle.describe()).raw.pendingActivities ?? [];
        if ((pending[0]?.attempt ?? 0) >= 2 && pending[0]?.lastFailure) break;
        await new Promise((resolve) => setTimeout(resolve, 200));
      }
      const printed: string[] = [];
      const ctx: CliContext = {
        env: {},
        connect: async () => ({ client: env.client, close: async () => {} }),
        print: (line) => printed.push(line),
        warn: (line) => printed.push(line),
        now: () => new Date(),
      };
      await statusCommand(handle.workflowId, ctx);
      await handle.terminate('test done');
      return printed;
    });
    expect(lines).toContainEqual(
      expect.stringMatching(
        /^retrying {2}createImportJob: attempt \d+, next attempt .+; last failure ServerError: POST \/import\/v1\/job: the service failed$/,
      ),
    );
  });

  it('with await-retry, an abandon signal fails the import with the step and its cause', async () => {
    const { activities } = scriptedActivities({
      inspectSource: [{ fails: failure('SourceNotFound', 'no such object') }],
    });
    const input: ImportFileInput = { ...importInput, onFailure: 'await-retry' };
    const cause = await withWorkers(activities, async (taskQueue) => {
      const handle = await startImport(taskQueue, input);
      await progressWhen(handle, (p) => p.awaitingRetry !== undefined);
      await handle.signal(ABANDON_SIGNAL);
      return failureOf(handle.result());
    });
    expect(cause.type).toBe('SourceNotFound');
    expect(cause.message).toBe('inspectSource failed (SourceNotFound): no such object (abandoned by the operator)');
  });

  it('after a reset past the upload, reuses the job and skips the upload', async () => {
    const { activities } = scriptedActivities({
      createImportJob: [{ returns: { ...jobCreated, reused: true, state: 'queued' } }],
      uploadData: [{ returns: { ...uploaded, skipped: true, bytesSent: 0 } }],
    });
    const result = await withWorkers(activities, async (taskQueue) => (await startImport(taskQueue)).result());
    expect(result).toMatchObject({ jobReused: true, uploadSkipped: true, state: 'completed' });
  });

  describe('the job key', () => {
    const keysAsked = (calls: { step: Step; input: unknown }[]) =>
      calls
        .filter((c) => c.step === 'createImportJob')
        .map((c) => c.input as CreateImportJobInput)
        .map(({ jobKey, searchAllStates }) => ({ jobKey, searchAllStates }));

    it('survives a Reset (same first run id) and looks beyond new jobs after it', async () => {
      const { activities, calls } = scriptedActivities({});
      await withWorkers(activities, async (taskQueue) => {
        const handle = await startImport(taskQueue);
        await handle.result();
        const history = await handle.fetchHistory();
        const firstTask = history.events?.find(
          (e) => e.eventType === temporal.api.enums.v1.EventType.EVENT_TYPE_WORKFLOW_TASK_COMPLETED,
        );
        const { runId } = await env.client.workflowService.resetWorkflowExecution({
          namespace: env.namespace ?? 'default',
          workflowExecution: { workflowId: handle.workflowId, runId: handle.firstExecutionRunId },
          workflowTaskFinishEventId: firstTask?.eventId,
          reason: 'job key test',
          requestId: randomUUID(),
        });
        const resetRun = env.client.workflow.getHandle<typeof importFile>(handle.workflowId, runId ?? undefined);
        await resetRun.result();
        const { raw } = await resetRun.describe();
        // What the key rests on: the reset run is a new run that keeps the chain's first run id.
        expect(runId).not.toBe(handle.firstExecutionRunId);
        expect(raw.workflowExecutionInfo?.firstRunId).toBe(handle.firstExecutionRunId);
      });
      const [first, afterReset] = keysAsked(calls);
      expect(first?.searchAllStates).toBe(false);
      expect(afterReset).toEqual({ jobKey: first?.jobKey, searchAllStates: true });
    });

    it('changes for a fresh start with the same workflow id, which imports anew', async () => {
      const { activities, calls } = scriptedActivities({});
      await withWorkers(activities, async (taskQueue) => {
        await (await startImport(taskQueue)).result();
        await (await startImport(taskQueue)).result();
      });
      const [first, second] = keysAsked(calls);
      expect(second?.jobKey).not.toBe(first?.jobKey);
      expect(second?.searchAllStates).toBe(false);
    });

    it('is shared by executions given the same jobScope (the nightly retrying an object)', async () => {
      const { activities, calls } = scriptedActivities({});
      const input: ImportFileInput = { ...importInput, jobScope: 'import-feed-0123456789abcdef' };
      await withWorkers(activities, async (taskQueue) => {
        await (await startImport(taskQueue, input)).result();
        await (await startImport(taskQueue, input)).result();
      });
      const [first, second] = keysAsked(calls);
      expect(first).toEqual({ jobKey: jobKeyFor(input.jobScope as string, inspected.etag), searchAllStates: true });
      expect(second).toEqual(first);
    });
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
      activities.createImportJob = makeCreateImportJob({ service, budget: budgetWith({}, importInput.tenant) });
      // The service is slow to refuse the expired token; the sidecar rotates the file meanwhile.
      sim.delayNext('listJobs', 1_000);
      const result = await withWorkers(activities, async (taskQueue) => {
        const handle = await startImport(taskQueue);
        while (!sim.requests().some((r) => r.endpoint === 'listJobs')) await new Promise((r) => setTimeout(r, 10));
        await writeFile(tokenFile, DEMO_TOKENS.importer);
        return handle.result();
      });
      const lists = sim.requests().filter((r) => r.endpoint === 'listJobs');
      expect(lists.map((r) => r.status)).toEqual([401, 200]);
      expect(result.state).toBe('completed');
      expect(sim.jobs()).toHaveLength(1);
    } finally {
      await service.close();
      await sim.close();
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('rejects invalid input before calling any activity', async () => {
    const { activities, calls } = scriptedActivities({});
    const bad = { ...importInput, entityType: 'Lead' } as unknown as ImportFileInput;
    const cause = await withWorkers(activities, async (taskQueue) =>
      failureOf((await startImport(taskQueue, bad)).result()),
    );
    expect(cause.type).toBe('InvalidInput');
    expect(cause.message).toContain('entityType must be one of Account, Opportunity, Person, Activity, got "Lead"');
    expect(calls).toHaveLength(0);
  });

  describe('budget ledger', () => {
    const settings = {
      limits: Object.fromEntries(
        Object.entries(BUDGETED_ENDPOINTS).map(([n, e]) => [n, e.defaultDailyLimit]),
      ) as Record<BudgetedEndpoint, number>,
      headroomPercent: 0,
      resetMinuteUtc: 0,
    };

    async function startLedger(tenant: string) {
      const { activities } = scriptedActivities({});
      const taskQueue = `ledger-${process.pid}-${++testNumber}`;
      const worker = await Worker.create({
        connection: env.nativeConnection,
        taskQueue,
        workflowBundle: { code },
        activities,
      });
      const handle = await env.client.workflow.start<typeof budgetLedger>('budgetLedger', {
        taskQueue,
        workflowId: ledgerWorkflowId(tenant),
        args: [{ tenant, settings }],
      });
      const reserve = (request: ReserveRequest) =>
        handle.executeUpdate<ReserveResult, [ReserveRequest]>(RESERVE_UPDATE, { args: [request] });
      return { worker, handle, reserve };
    }

    it('grants once per requestId, rejects unknown endpoints, and honours the exhausted signal', async () => {
      const { worker, handle, reserve } = await startLedger(`t${process.pid}a`);
      await worker.runUntil(async () => {
        const first = await reserve({ endpoint: 'createJob', requestId: 'wf/1/1' });
        expect(first).toEqual({ granted: true, remaining: 1199 });
        expect(await reserve({ endpoint: 'createJob', requestId: 'wf/1/1' })).toEqual(first);
        await expect(
          reserve({ endpoint: 'getFieldMappings' as BudgetedEndpoint, requestId: 'wf/1/2' }),
        ).rejects.toBeInstanceOf(WorkflowUpdateFailedError);
        const until = new Date(Date.now() + 3_600_000).toISOString();
        await handle.signal(EXHAUSTED_SIGNAL, { endpoint: 'submitData', until });
        expect(await reserve({ endpoint: 'submitData', requestId: 'wf/1/3' })).toEqual({
          granted: false,
          resetsAt: until,
        });
        const usage = await handle.query<LedgerUsage>(USAGE_QUERY);
        expect(usage.createJob).toMatchObject({ used: 1, limit: 1200, remaining: 1199 });
        await handle.terminate('test done');
      });
    });

    // The time-skipping server neither orders this ledger's signal and Updates as a real server does nor
    // lets the 25 h sleep pass here (it timed out); the dev-server version of this scenario is still to write.
    it.skip('starts a fresh window after the reset by continuing as new (time-skipping server)', async () => {
      const { worker, handle, reserve } = await startLedger(`t${process.pid}b`);
      await worker.runUntil(async () => {
        await reserve({ endpoint: 'createJob', requestId: 'before-reset' });
        const firstRunId = (await handle.describe()).runId;
        await env.sleep(25 * 3_600_000);
        const usage = await handle.query<LedgerUsage>(USAGE_QUERY);
        expect(usage.createJob.used).toBe(0);
        expect((await handle.describe()).runId).not.toBe(firstRunId);
        await handle.terminate('test done');
      });
    });
  });
});
