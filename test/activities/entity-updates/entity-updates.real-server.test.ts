/**
 * The one client for entity workflows reached by update-with-start
 * (activities/entity-updates), on a real dev server of its own that admits
 * only two Updates in flight per workflow (the production default is 10, the
 * behaviour the same):
 * - a burst past the bound, from one process or several, is granted once per
 *   request, none lost;
 * - an Update the entity's workflow task ended without (Temporal's
 *   `UnprocessedUpdate`) is sent again and answered once;
 * - a "no" (a validator, an argument Temporal refuses) fails at once,
 *   non-retryable, saying why;
 * - update ids stay within Temporal's limit whatever the workflow id, so a
 *   job record answers an import whose id is 1,000 characters long;
 * - a mapping lock answers one activity attempt's request once.
 */
import { randomUUID } from 'node:crypto';
import { temporal } from '@temporalio/proto';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { Worker } from '@temporalio/worker';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TemporalBudgetGate } from '../../../activities/budget/temporal-gate.js';
import { EntityUpdates } from '../../../activities/entity-updates/client.js';
import { MAX_UPDATE_ID_BYTES, updateId } from '../../../activities/entity-updates/update-id.js';
import { TemporalJobRecordGate } from '../../../activities/job-record/gate.js';
import { temporalMappingLocks } from '../../../activities/mapping-lock.js';
import { ServiceCalls } from '../../../activities/service-calls.js';
import type { ReserveResult } from '../../../workflows/contracts/budget.js';
import { JOB_RECORD_WORKFLOW_TYPE, type TenantObjectVersion } from '../../../workflows/contracts/job-record.js';
import { mappingLockWorkflowId } from '../../../workflows/contracts/mapping-lock.js';
import { claimCreateUpdate, releaseMappingLockSignal } from '../../../workflows/contracts/messages.js';
import { failureOf, runActivity } from '../../support/activities.js';
import { SPEC_BUDGET_SETTINGS } from '../../support/in-memory-budget-gate.js';
import { createDevServerWith } from '../../support/temporal-server.js';
import { bundleWorkflows, WORKFLOW_SINKS } from '../../support/workflow-bundle.js';

let env: TestWorkflowEnvironment;

beforeAll(async () => {
  env = await createDevServerWith({ 'history.maxInFlightUpdates': 2 });
}, 120_000);

afterAll(async () => {
  await env?.teardown();
});

/** A worker process's gate to the tenant's ledger, which runs on the worker's task queue. */
function processGate(taskQueue: string, tenant: string): TemporalBudgetGate {
  return new TemporalBudgetGate({
    client: env.client,
    taskQueue,
    tenant,
    settings: { ...SPEC_BUDGET_SETTINGS, stopGrantingBeforeResetMs: 0 },
    // These tests are about answers, not time: on a loaded machine the Updates that several processes
    // send past the bound can take longer than the production patience, after which an activity is retried.
    burstPatienceMs: 240_000,
  });
}

async function entityWorker(taskQueue = `entities-${randomUUID()}`): Promise<{ worker: Worker; taskQueue: string }> {
  const worker = await Worker.create({
    connection: env.nativeConnection,
    taskQueue,
    workflowBundle: { code: await bundleWorkflows() },
    sinks: WORKFLOW_SINKS,
    activities: {
      countWindowSpend: async () => ({ createJob: 0, submitData: 0, listJobs: 0 }),
      // Every import these tests name is running.
      readImportStates: async ({ workflowIds }: { workflowIds: string[] }) =>
        Object.fromEntries(workflowIds.map((id) => [id, 'running'])),
    },
  });
  return { worker, taskQueue };
}

function refusals(outcomes: PromiseSettledResult<ReserveResult>[]): string[] {
  return outcomes.filter((o) => o.status === 'rejected').map((o) => String((o as PromiseRejectedResult).reason));
}

describe('update ids', () => {
  it('are the parts joined while they fit', () => {
    expect(updateId('wf', 'run', '3', '1000', 'claimCreate-1')).toBe('wf/run/3/1000/claimCreate-1');
  });

  it('stay within the limit, stable and distinct, however long the parts, in bytes as the server counts', () => {
    for (const long of ['w'.repeat(1_000), 'é'.repeat(500), '😀'.repeat(250)]) {
      const first = updateId(long, 'run', '3', '1000', 'claimCreate-1');
      expect(Buffer.byteLength(first)).toBeLessThanOrEqual(MAX_UPDATE_ID_BYTES);
      // No character cut in two: the id survives UTF-8 unchanged.
      expect(Buffer.from(first).toString()).toBe(first);
      expect(updateId(long, 'run', '3', '1000', 'claimCreate-1')).toBe(first);
      expect(updateId(long, 'run', '3', '1000', 'claimCreate-2')).not.toBe(first);
    }
  });
});

describe('a job record reached from an import whose workflow id is as long as Temporal allows', () => {
  const version = (): TenantObjectVersion => ({
    tenant: 't',
    bucket: 'feeds',
    key: `${randomUUID()}.csv`,
    etag: '"e"',
  });

  it.each([
    ['1,000 ASCII characters', 'w'.repeat(1_000)],
    ['1,000 bytes of two-byte characters', 'é'.repeat(500)],
  ])(
    'answers every Update (an id of %s)',
    async (_, workflowId) => {
      const { worker, taskQueue } = await entityWorker();
      const gate = new TemporalJobRecordGate({ client: env.client, taskQueue });
      const attempt = { workflowId, runId: randomUUID(), activityId: '3', scheduledMs: 1_000 };
      await worker.runUntil(async () => {
        const session = gate.session(version(), attempt);
        const claim = await session.claimCreate();
        if (claim.kind !== 'create') throw new Error(`expected create, got ${claim.kind}`);
        // A second step of the same attempt: its own id, also within the limit.
        expect(await session.resolveCreate(claim.seq, { jobId: 'job-1', state: 'new' })).toMatchObject({
          kind: 'known',
          jobId: 'job-1',
        });
      });
    },
    60_000,
  );
});

describe('a "no" is never sent again', () => {
  it("a job record's validator refusal fails at once, non-retryable, with the validator's reason", async () => {
    const { worker, taskQueue } = await entityWorker();
    const gate = new TemporalJobRecordGate({ client: env.client, taskQueue });
    const malformed = { workflowId: 'w', runId: '', activityId: '3', scheduledMs: 1_000 };
    const f = await worker.runUntil(failureOf(gate.session(version(), malformed).claimCreate()));
    expect(f.type).toBe('UpdateRefused');
    expect(f.nonRetryable).toBe(true);
    expect(f.message).toContain('claimCreate');
    expect(f.message).toContain('attempt.runId must be a non-empty string');
  }, 60_000);

  it('an argument Temporal refuses fails at once, non-retryable, naming what was wrong', async () => {
    const updates = new EntityUpdates(env.client);
    const f = await failureOf(
      updates.execute({
        update: claimCreateUpdate,
        arg: { attempt: { workflowId: 'w', runId: 'r', activityId: '1', scheduledMs: 1 } },
        updateId: updateId('too-long-workflow-id'),
        workflowType: JOB_RECORD_WORKFLOW_TYPE,
        start: {
          workflowId: 'r'.repeat(1_001),
          taskQueue: `nobody-${randomUUID()}`,
          args: [{ version: version() }],
          workflowIdConflictPolicy: 'USE_EXISTING',
        },
      }),
    );
    expect(f.type).toBe('UpdateRefused');
    expect(f.nonRetryable).toBe(true);
    expect(f.message).toContain('WorkflowId exceeds maximum allowed length');
  });

  function version(): TenantObjectVersion {
    return { tenant: 't', bucket: 'feeds', key: `${randomUUID()}.csv`, etag: '"e"' };
  }
});

describe('a mapping lock asked from an activity attempt', () => {
  it('answers a resend within the attempt once, and decides a later attempt again', async () => {
    const { worker, taskQueue } = await entityWorker();
    const locks = temporalMappingLocks(env.client, taskQueue);
    const sourceId = String(Date.now());
    /** One attempt of an import's applyFieldMappings asking for `setKey`. */
    const ask = (importId: string, attempt: number, setKey: string) =>
      runActivity(
        async function applyFieldMappings() {
          return locks.acquire(sourceId, 'account', { workflowId: importId, setKey });
        },
        undefined,
        { workflowExecution: { workflowId: importId, runId: 'run' }, activityId: '2', attempt },
      ).result;
    await worker.runUntil(async () => {
      expect(await ask('import-a', 1, 'set-x')).toEqual({ granted: true });
      expect(await ask('import-b', 1, 'set-y')).toEqual({ granted: false, heldBy: ['import-a'] });
      await env.client.workflow
        .getHandle(mappingLockWorkflowId(sourceId, 'account'))
        .signal(releaseMappingLockSignal, { workflowId: 'import-a' });
      // The same attempt asking again is the same request: its answer stands.
      expect(await ask('import-b', 1, 'set-y')).toEqual({ granted: false, heldBy: ['import-a'] });
      expect(await ask('import-b', 2, 'set-y')).toEqual({ granted: true });
    });
  }, 60_000);
});

/** Takes one workflow task from `taskQueue` and completes it without a command or a message. */
async function completeNextTaskWithNothing(taskQueue: string): Promise<number> {
  const service = env.client.workflowService;
  // A long poll needs a deadline of its own (the server refuses one without).
  const task = await env.client.connection.withDeadline(Date.now() + 30_000, () =>
    service.pollWorkflowTaskQueue({
      namespace: 'default',
      taskQueue: { name: taskQueue, kind: temporal.api.enums.v1.TaskQueueKind.TASK_QUEUE_KIND_NORMAL },
      identity: 'a worker that lost the request',
    }),
  );
  await service.respondWorkflowTaskCompleted({
    namespace: 'default',
    taskToken: task.taskToken,
    identity: 'a worker that lost the request',
    commands: [],
    messages: [],
  });
  return task.messages?.length ?? 0;
}

/**
 * Under the soak an Update the entity never took up follows a worker frozen
 * or killed while it held the entity's workflow task. A bare poller stands in
 * for that worker: it takes the ledger's first workflow task, with the
 * reservation in it, and completes the task with nothing; the real server then
 * rejects the Update as unprocessed. A real worker comes afterwards.
 */
it('a reservation the ledger never took up is sent again and granted once; the call goes out once', async () => {
  const taskQueue = `unprocessed-${randomUUID()}`;
  const budget = processGate(taskQueue, `t-${randomUUID()}`);
  let sent = 0;
  const call = new ServiceCalls({ budget }, 'unprocessed').run('listJobs', async () => {
    sent += 1;
    return 'answer';
  });
  // The task carried the reservation (one Update request message) and ended without it.
  expect(await completeNextTaskWithNothing(taskQueue)).toBe(1);
  const { worker } = await entityWorker(taskQueue);
  const { answer, used } = await worker.runUntil(async () => ({
    answer: await call,
    used: (await budget.usage()).listJobs.used,
  }));
  expect(answer).toBe('answer');
  expect(sent).toBe(1);
  expect(used).toBe(1);
}, 120_000);

it('200 reservations at once from one process are each granted once, the process sending one Update at a time', {
  timeout: 300_000,
}, async () => {
  const { worker, taskQueue } = await entityWorker();
  const gate = processGate(taskQueue, 'one-process');
  const { outcomes, usage } = await worker.runUntil(async () => {
    await gate.reserve('jobStatus', 'opens-the-ledger');
    const outcomes = await Promise.allSettled(
      Array.from({ length: 200 }, (_, i) => gate.reserve('jobStatus', `burst-${i}`)),
    );
    return { outcomes, usage: await gate.usage() };
  });
  expect(refusals(outcomes).slice(0, 3)).toEqual([]);
  expect(outcomes.every((o) => o.status === 'fulfilled' && o.value.granted)).toBe(true);
  expect(usage.jobStatus.used).toBe(201);
});

it('four processes bursting at once, past the bound of two, are each granted once, none lost to ResourceExhausted', {
  timeout: 300_000,
}, async () => {
  const { worker, taskQueue } = await entityWorker();
  const gates = Array.from({ length: 4 }, () => processGate(taskQueue, 'four-processes'));
  const reader = processGate(taskQueue, 'four-processes');
  const { outcomes, usage } = await worker.runUntil(async () => {
    const outcomes = await Promise.allSettled(
      gates.flatMap((gate, g) =>
        Array.from({ length: 25 }, (_, i) => gate.reserve('jobStatus', `process-${g}-${i}-${randomUUID()}`)),
      ),
    );
    return { outcomes, usage: (await reader.usage()).jobStatus.used };
  });
  expect(refusals(outcomes).slice(0, 3)).toEqual([]);
  expect(outcomes.every((o) => o.status === 'fulfilled' && o.value.granted)).toBe(true);
  expect(usage).toBe(100);
});
