/**
 * createImportJob (activities/create-job/) through the job record, against the
 * simulator, with the record's own decisions held in memory
 * (InMemoryJobRecordGate): each attempt is named as Temporal names it
 * (workflow, run, activity, scheduled time), and no attempt is handed the
 * heartbeat details of the one before (they may never have been delivered).
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { type CreateImportJobDeps, makeCreateImportJob } from '../../../activities/create-job/create-import-job.js';
import { currentAttempt, type JobRecordGate } from '../../../activities/job-record/gate.js';
import { ReferenceCache } from '../../../activities/reference-cache.js';
import { ServiceClient } from '../../../activities/service/client.js';
import { createTokenSource } from '../../../activities/service/token-source.js';
import { Secret } from '../../../temporal.config.js';
import type { CreateImportJobInput, CreateImportJobResult } from '../../../workflows/contracts/activities.js';
import type { ObjectVersion } from '../../../workflows/contracts/object-version.js';
import { DEMO_TOKENS } from '../../simulator/server.js';
import { failureOf, runActivity } from '../../support/activities.js';
import type { InMemoryBudgetGate } from '../../support/in-memory-budget-gate.js';
import { InMemoryJobRecordGate } from '../../support/in-memory-job-record-gate.js';
import { budgetWith, type ServiceWorld, startServiceWorld } from '../environment.js';

/** A lease must outlast the 1 s margin the fence keeps before the last byte. */
const SETTINGS = { leaseMs: 1_500, lagMs: 300, deliveryBoundMs: 400, retryAfterMs: 100 };
/** How late the service may list a job here (the record's lag and the activity's settle). */
const SETTLE_MS = 600;

interface AttemptName {
  workflowId: string;
  runId?: string;
  activityId?: string;
  scheduledMs: number;
}

describe('createImportJob through the job record', () => {
  let w: ServiceWorld;
  let budget: InMemoryBudgetGate;
  let gate: InMemoryJobRecordGate;
  let n = 0;
  beforeAll(async () => {
    w = await startServiceWorld({ processingMs: 20, dailyLimits: { createJob: 100_000 } });
  });
  afterAll(() => w.close());
  beforeEach(() => {
    w.sim.clearFaults();
    budget = budgetWith();
    gate = new InMemoryJobRecordGate(SETTINGS);
  });

  function version(): ObjectVersion {
    n += 1;
    return { bucket: 'imports', key: `accounts-${n}.csv`, etag: `"etag-${n}"` };
  }
  const input = (objectVersion: ObjectVersion, extra: Partial<CreateImportJobInput> = {}): CreateImportJobInput => ({
    tenant: 't1',
    dataImportName: 'accounts.csv',
    entityType: 'Account',
    objectVersion,
    ...extra,
  });
  function attempt(
    i: CreateImportJobInput,
    name: AttemptName,
    deps: Partial<CreateImportJobDeps> = {},
    jobRecord: JobRecordGate = gate,
  ) {
    return runActivity<CreateImportJobInput, CreateImportJobResult>(
      makeCreateImportJob({ service: w.service, budget, jobRecord, settleMs: SETTLE_MS, ...deps }),
      i,
      {
        attempt: 1,
        activityId: name.activityId ?? '4',
        workflowExecution: { workflowId: name.workflowId, runId: name.runId ?? 'run-1' },
        currentAttemptScheduledTimestampMs: name.scheduledMs,
        startToCloseTimeoutMs: 60_000,
      },
    );
  }
  const requestsTo = (endpoint: string) => w.sim.requests().filter((r) => r.endpoint === endpoint).length;
  const lateCommitsLanded = async () => {
    while (w.sim.lateCreatesPending() > 0) await new Promise((r) => setTimeout(r, 5));
  };

  it('case 1: an attempt whose POST went out and whose answer and heartbeat were lost; the next finds the job listed late, on any page, and creates none', async () => {
    const v = version();
    const i = input(v);
    const creates = requestsTo('createJob');
    // The job is made, listed only 400 ms later, and the answer never comes.
    w.sim.jobFaults.listCreatedLate(400);
    w.sim.applyThenDrop('createJob');
    const first = attempt(i, { workflowId: 'import-a', scheduledMs: 1 }, { listPageSize: 2 });
    await expect(failureOf(first.result)).resolves.toMatchObject({ type: 'Network' });
    // Jobs made after it push it off the first pages.
    for (let k = 0; k < 9; k++) await w.service.createJob({ dataImportName: `newer ${k}`, entityType: 'Account' });
    // The next attempt gets no heartbeat details (the last one was never delivered).
    const second = await attempt(i, { workflowId: 'import-a', scheduledMs: 2 }, { listPageSize: 2 }).result;
    expect(second.reused).toBe(true);
    expect(requestsTo('createJob') - creates - 9).toBe(1);
    // Searched only among new jobs.
    const states = w.sim
      .requests()
      .filter((r) => r.endpoint === 'listJobs')
      .map((r) => new URLSearchParams(r.query).get('state'));
    expect(new Set(states.slice(-3))).toEqual(new Set(['new']));
  });

  it('case 3: an attempt that lost its place never completes a POST once another attempt resolved the job', async () => {
    const v = version();
    const i = input(v);
    const creates = requestsTo('createJob');
    const jobsBefore = w.sim.jobs().length;
    let later: Promise<CreateImportJobResult> | undefined;
    // Just before attempt 1 asks for its lease, a later attempt (an activity reset) takes the create over and finishes.
    const hooked: JobRecordGate = {
      session(version, name = currentAttempt()) {
        const s = gate.session(version, name);
        if (name.scheduledMs !== 1) return s;
        return Object.assign(Object.create(s), {
          confirm: async (intent: 'create' | 'upload', seq: number) => {
            later ??= attempt(i, { workflowId: 'import-a', scheduledMs: 2 }).result;
            await later;
            return s.confirm(intent, seq);
          },
        });
      },
    };
    const first = attempt(i, { workflowId: 'import-a', scheduledMs: 1 }, {}, hooked);
    await expect(failureOf(first.result)).resolves.toMatchObject({ type: 'AttemptSuperseded' });
    const second = await (later as Promise<CreateImportJobResult>);
    expect(second.reused).toBe(false);
    await new Promise((r) => setTimeout(r, 100));
    expect(w.sim.jobs().length - jobsBefore).toBe(1);
    // Attempt 1's request left short of its length: the service made nothing of it.
    expect(requestsTo('createJob') - creates).toBeLessThanOrEqual(2);
  });

  it('case 5: a later import of the same version (another workflow) follows the earlier import’s open create, then its job', async () => {
    const v = version();
    const creates = requestsTo('createJob');
    w.sim.delayNext('createJob', 500);
    const a = attempt(input(v), { workflowId: 'import-manual', scheduledMs: 1 });
    await new Promise((r) => setTimeout(r, 100));
    const b = attempt(input(v), { workflowId: 'nightly-child', scheduledMs: 2 });
    const [ra, rb] = await Promise.all([a.result, b.result]);
    expect(rb).toMatchObject({ jobId: ra.jobId, reused: true });
    expect(requestsTo('createJob') - creates).toBe(1);
    expect(b.logs.map((l) => l.message)).toContain('Another import creates this file version’s job: following it');
  });

  it('case 5: a follower whose own time runs out fails ImportInProgress (retryable), not an operator page', async () => {
    const v = version();
    w.sim.delayNext('createJob', 800);
    const a = attempt(input(v), { workflowId: 'import-manual', scheduledMs: 1 });
    await new Promise((r) => setTimeout(r, 100));
    const b = runActivity<CreateImportJobInput, CreateImportJobResult>(
      makeCreateImportJob({ service: w.service, budget, jobRecord: gate, settleMs: SETTLE_MS }),
      input(v),
      {
        activityId: '4',
        workflowExecution: { workflowId: 'nightly-child', runId: 'r' },
        currentAttemptScheduledTimestampMs: 2,
        startToCloseTimeoutMs: 30_000,
      },
    );
    const failure = await failureOf(b.result);
    expect(failure).toMatchObject({ type: 'ImportInProgress', nonRetryable: false });
    await a.result;
  });

  it('case 6: a workflow Reset mid-create (a new run, heartbeat details gone): still one job', async () => {
    const v = version();
    const i = input(v);
    const creates = requestsTo('createJob');
    w.sim.jobFaults.listCreatedLate(300);
    w.sim.applyThenDrop('createJob');
    await failureOf(attempt(i, { workflowId: 'import-a', runId: 'run-1', scheduledMs: 1 }).result);
    const afterReset = await attempt(i, { workflowId: 'import-a', runId: 'run-2', activityId: '3', scheduledMs: 5 })
      .result;
    expect(afterReset.reused).toBe(true);
    expect(requestsTo('createJob') - creates).toBe(1);
  });

  it('case 7: a create that timed out long after its last byte: the search waits from when the POST ended', async () => {
    const service = new ServiceClient({
      baseUrl: w.sim.baseUrl,
      tokens: createTokenSource({ kind: 'env', token: new Secret(DEMO_TOKENS.importer) }),
      requestTimeoutMs: 1_000,
    });
    try {
      const v = version();
      const i = input(v);
      const creates = requestsTo('createJob');
      // Committed 900 ms after it began, listed 500 ms after that; the request times out at 1 s.
      w.sim.jobFaults.commitCreateLate({ afterMs: 900, answer: 'timeout' });
      w.sim.jobFaults.listCreatedLate(500);
      await failureOf(attempt(i, { workflowId: 'import-a', scheduledMs: 1 }, { service }).result);
      const second = await attempt(i, { workflowId: 'import-a', scheduledMs: 2 }, { service }).result;
      await lateCommitsLanded();
      expect(second.reused).toBe(true);
      expect(requestsTo('createJob') - creates).toBe(1);
    } finally {
      await service.close();
    }
  });

  it('case 9: a file replaced at its key gets a job of its own; a later start of the fixed version follows it', async () => {
    const old = version();
    const fixed = { ...old, etag: `${old.etag.slice(0, -1)}-fixed"` };
    const creates = requestsTo('createJob');
    const first = await attempt(input(old), { workflowId: 'import-a', scheduledMs: 1 }).result;
    const retried = await attempt(input(fixed, { supersedes: old }), {
      workflowId: 'import-a',
      activityId: '7',
      scheduledMs: 2,
    }).result;
    expect(retried.jobId).not.toBe(first.jobId);
    expect(gate.stateOf({ ...old, tenant: 't1' })?.superseded).toBe(true);
    const later = await attempt(input(fixed), { workflowId: 'import-b', scheduledMs: 3 }).result;
    expect(later).toMatchObject({ jobId: retried.jobId, reused: true });
    expect(requestsTo('createJob') - creates).toBe(2);
  });

  it.each([
    ['answered 500', { status: 500 }],
    ['reset without an answer', 'reset'],
  ] as const)(
    'a create %s but committed late: the next attempt settles, finds it; one POST, one job',
    async (_, answer) => {
      const v = version();
      const i = input(v);
      const creates = requestsTo('createJob');
      w.sim.jobFaults.commitCreateLate({ afterMs: 100, answer });
      await failureOf(attempt(i, { workflowId: 'import-a', scheduledMs: 1 }).result);
      const second = await attempt(i, { workflowId: 'import-a', scheduledMs: 2 }).result;
      await lateCommitsLanded();
      expect(second.reused).toBe(true);
      expect(requestsTo('createJob') - creates).toBe(1);
    },
  );

  it('names the job by its intent key and passes the source and activityTypeId', async () => {
    const v = version();
    const result = await attempt(input(v, { entityType: 'Activity', activityTypeId: 1, importSource: 'CSV' }), {
      workflowId: 'import-a',
      scheduledMs: 1,
    }).result;
    const key = gate.stateOf({ ...v, tenant: 't1' })?.create?.jobKey;
    expect(w.sim.job(result.jobId)).toMatchObject({
      dataImportName: `[import:${key}] accounts.csv`,
      entityType: 'Activity',
      activityTypeId: 1,
      source: 'CSV',
    });
    // The import's later calls (upload, its status read, the wait's two) are named with the create's reservation.
    expect(budget.requests.map((r) => [r.endpoint, r.alongWith])).toEqual([
      ['createJob', { submitData: 1, jobStatus: 3 }],
    ]);
  });

  it('creates the job of a mapped import on its custom source, by the name the service lists', async () => {
    const reference = new ReferenceCache();
    const name = { workflowId: 'import-a', scheduledMs: 1 };
    const first = await attempt(input(version(), { customSourceId: '1001' }), name, { reference }).result;
    expect(w.sim.job(first.jobId)?.source).toBe('Salesforce CRM');
    expect(first.apiCalls).toMatchObject({ getCustomSource: 1, createJob: 1 });
    // The name is reference data: the next import on this worker reads it from the cache.
    const second = await attempt(input(version(), { customSourceId: '1001' }), name, { reference }).result;
    expect(w.sim.job(second.jobId)?.source).toBe('Salesforce CRM');
    expect(second.apiCalls.getCustomSource).toBeUndefined();
  });

  it('refuses a custom source the service does not know before creating anything', async () => {
    const before = requestsTo('createJob');
    const err = await failureOf(
      attempt(input(version(), { customSourceId: '4242' }), { workflowId: 'import-a', scheduledMs: 1 }).result,
    );
    expect(err).toMatchObject({ type: 'InvalidInput', nonRetryable: true });
    expect(err.message).toContain('custom source 4242 (fieldMappings.sourceId) does not exist');
    expect(requestsTo('createJob')).toBe(before);
  });

  it.each(['queued', 'created'])(
    'a create answered in a state the spec does not name (%s) reads the job again and records what it read',
    async (unknown) => {
      const v = version();
      w.sim.spellStates({ new: unknown }, { count: 1 });
      const result = await attempt(input(v), { workflowId: 'import-a', scheduledMs: 1 }).result;
      expect(result).toMatchObject({ reused: false, state: 'new', apiCalls: { createJob: 1, jobStatus: 1 } });
      // The record holds a job without its file: the upload sends it.
      expect(gate.stateOf({ ...v, tenant: budget.tenant })?.job).toMatchObject({ state: 'new', hasData: false });
    },
  );

  it('a create answered without a state reads the job again instead of assuming', async () => {
    const v = version();
    const made = await w.service.createJob({ dataImportName: 'made elsewhere', entityType: 'Account' });
    w.sim.failNext('createJob', 200, { body: { id: Number(made.id) } });
    const result = await attempt(input(v), { workflowId: 'import-a', scheduledMs: 1 }).result;
    expect(result).toMatchObject({ jobId: made.id, state: 'new', apiCalls: { jobStatus: 1 } });
  });

  it('a job still in an unknown state when read again is kept and handed to an operator, never taken as holding its file', async () => {
    const v = version();
    const creates = requestsTo('createJob');
    w.sim.spellStates({ new: 'queued' }, { count: 2 });
    const f = await failureOf(attempt(input(v), { workflowId: 'import-a', scheduledMs: 1 }).result);
    expect(f).toMatchObject({ type: 'UnexpectedJobState' });
    expect(f.message).toContain('"queued"');
    const job = gate.stateOf({ ...v, tenant: budget.tenant })?.job;
    expect(job).toMatchObject({ state: 'queued', hasData: false });
    // The operator's retry finds the same job: no second create.
    const again = await attempt(input(v), { workflowId: 'import-a', scheduledMs: 2 }).result;
    expect(again).toMatchObject({ jobId: job?.id, reused: true });
    expect(requestsTo('createJob') - creates).toBe(1);
  });

  it('a spent createJob budget fails BudgetExhausted with resetsAt, and nothing is created', async () => {
    budget = budgetWith({ createJob: 1 });
    await budget.reserve('createJob', 'someone-else');
    const before = w.sim.jobs().length;
    const f = await failureOf(attempt(input(version()), { workflowId: 'import-a', scheduledMs: 1 }).result);
    expect(f).toMatchObject({ type: 'BudgetExhausted', nonRetryable: true });
    expect(f.details?.[0]).toEqual({ endpoint: 'createJob', resetsAt: expect.any(String) });
    expect(w.sim.jobs().length).toBe(before);
  });

  it('a 403 fails Forbidden, not retryable, naming the Import Data permission', async () => {
    w.sim.failNext('createJob', 403);
    const f = await failureOf(attempt(input(version()), { workflowId: 'import-a', scheduledMs: 1 }).result);
    expect(f.type).toBe('Forbidden');
    expect(f.nonRetryable).toBe(true);
    expect(f.message).toContain('"Import Data" permission');
  });

  // Last: its 5,000 jobs would make every search above page through them.
  it('creates with no list call at all: a tenant with 5,000 earlier jobs pays one POST', async () => {
    for (let k = 0; k < 5_000; k += 100) {
      await Promise.all(
        Array.from({ length: 100 }, (_, j) =>
          w.service.createJob({ dataImportName: `history ${k + j}`, entityType: 'Account' }),
        ),
      );
    }
    const v = version();
    const lists = requestsTo('listJobs');
    const creates = requestsTo('createJob');
    const result = await attempt(input(v), { workflowId: 'import-a', scheduledMs: 1 }).result;
    expect(result).toMatchObject({ reused: false, state: 'new', apiCalls: { createJob: 1 } });
    expect(result.apiCalls.listJobs).toBeUndefined();
    expect(requestsTo('listJobs') - lists).toBe(0);
    expect(requestsTo('createJob') - creates).toBe(1);
    // A later import of the same version pays nothing at all.
    const again = await attempt(input(v), { workflowId: 'import-b', scheduledMs: 2 }).result;
    expect(again).toMatchObject({ jobId: result.jobId, reused: true, apiCalls: {} });
    expect(requestsTo('createJob') - creates).toBe(1);
  }, 120_000);
});
