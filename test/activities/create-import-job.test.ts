import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { InMemoryBudgetGate } from '../../activities/budget/in-memory-gate.js';
import { type CreateImportJobDeps, makeCreateImportJob } from '../../activities/create-import-job.js';
import { ReferenceCache } from '../../activities/reference-cache.js';
import { ServiceClient } from '../../activities/service/client.js';
import { createTokenSource } from '../../activities/service/token-source.js';
import { Secret } from '../../temporal.config.js';
import type {
  CreateImportJobInput,
  CreateImportJobResult,
  JobLookupProgress,
} from '../../workflows/contracts/activities.js';
import type { EntityType } from '../../workflows/contracts/import-input.js';
import { jobNameWithKey } from '../../workflows/contracts/job-key.js';
import { DEMO_TOKENS } from '../simulator/server.js';
import { failureOf, runActivity } from '../support/activities.js';
import { budgetWith, type ServiceWorld, startServiceWorld } from './environment.js';

const HOUR_MS = 3_600_000;
/** Long enough for every late commit and late listing below (100-300 ms) to land. */
const SETTLE_MS = 400;
const CSV = Buffer.from('Account Name,Account Domain\nAcme,acme.example\n');

describe('createImportJob', () => {
  let w: ServiceWorld;
  let budget: InMemoryBudgetGate;
  let keyCounter = 0;
  /** The simulator's clock runs this far from the real one (jobs "created long ago"). */
  let simClockOffsetMs = 0;
  beforeAll(async () => {
    w = await startServiceWorld({ now: () => Date.now() + simClockOffsetMs, processingMs: 20 });
  });
  afterAll(() => w.close());
  beforeEach(() => {
    w.sim.clearFaults();
    w.sim.setJobOutcome('completed');
    budget = budgetWith();
    simClockOffsetMs = 0;
  });

  /** A fresh key per test, so jobs of earlier tests never match. */
  function input(overrides: Partial<CreateImportJobInput> = {}): CreateImportJobInput {
    keyCounter += 1;
    return {
      tenant: 't1',
      jobKey: `key${keyCounter.toString().padStart(13, '0')}`,
      dataImportName: 'accounts.csv',
      entityType: 'Account',
      ...overrides,
    };
  }
  const run = (i: CreateImportJobInput, deps: Partial<CreateImportJobDeps> = {}, info = {}) =>
    runActivity<CreateImportJobInput, CreateImportJobResult, JobLookupProgress>(
      makeCreateImportJob({ service: w.service, budget, settleMs: SETTLE_MS, ...deps }),
      i,
      { attempt: 1, ...info },
    );
  /** Attempts as Temporal makes them: a retryable failure is retried (with the last heartbeat's details). */
  async function runUntilDone(i: CreateImportJobInput, deps: Partial<CreateImportJobDeps> = {}) {
    let details: unknown;
    for (let attempt = 1; attempt <= 4; attempt++) {
      const a = run(i, deps, { attempt, heartbeatDetails: details });
      try {
        return await a.result;
      } catch (err) {
        details = a.heartbeats.at(-1) ?? details;
        if (attempt === 4) throw err;
      }
    }
    throw new Error('unreachable');
  }
  /** Every late commit has landed: only then does the count of jobs say whether a second one was made. */
  async function lateCommitsLanded(): Promise<void> {
    while (w.sim.lateCreatesPending() > 0) await new Promise((r) => setTimeout(r, 5));
  }
  const jobsWithKey = (key: string) => w.sim.jobs().filter((j) => j.dataImportName.includes(`[import:${key}]`));
  const creates = () => w.sim.requests().filter((r) => r.endpoint === 'createJob').length;
  const ownJob = (i: CreateImportJobInput, entityType: EntityType = i.entityType) =>
    w.service.createJob({ dataImportName: jobNameWithKey(i.dataImportName, i.jobKey), entityType });
  async function otherJobs(entityType: EntityType, n: number): Promise<void> {
    for (let k = 0; k < n; k++) await w.service.createJob({ dataImportName: `someone else ${k}`, entityType });
  }

  it('creates a job whose name starts with the key, after looking among new jobs', async () => {
    const i = input({ importSource: 'CSV' });
    const result = await run(i).result;
    expect(result).toMatchObject({ reused: false, state: 'new', apiCalls: { listJobs: 1, createJob: 1 } });
    expect(w.sim.job(result.jobId)).toMatchObject({
      dataImportName: `[import:${i.jobKey}] accounts.csv`,
      entityType: 'Account',
      source: 'CSV',
    });
    expect(budget.requests.map((r) => r.endpoint)).toEqual(['listJobs', 'createJob']);
    const query = new URLSearchParams(w.sim.requests().find((r) => r.endpoint === 'listJobs')?.query);
    expect(Object.fromEntries(query)).toEqual({ entityType: 'Account', state: 'new', perPage: '50' });
  });

  it('logs the job it created, then the job it found, with the workflow id', async () => {
    const i = input();
    const first = run(i);
    const { jobId } = await first.result;
    const second = run(i);
    await second.result;
    const milestone = (logs: typeof first.logs) =>
      logs.filter((l) => l.level === 'INFO').map((l) => [l.message, l.meta?.jobId, l.meta?.workflowId]);
    expect(milestone(first.logs)).toEqual([['Import job created', jobId, expect.any(String)]]);
    expect(milestone(second.logs)).toEqual([['Import job found, created earlier', jobId, expect.any(String)]]);
  });

  it('creates the job of a mapped import on its custom source, by the name the service lists', async () => {
    const reference = new ReferenceCache();
    const first = await run(input({ customSourceId: '1001' }), { reference }).result;
    expect(w.sim.job(first.jobId)?.source).toBe('Salesforce CRM');
    expect(first.apiCalls).toMatchObject({ getCustomSource: 1, createJob: 1 });
    // The name is reference data: the next import on this worker reads it from the cache.
    const second = await run(input({ customSourceId: '1001' }), { reference }).result;
    expect(w.sim.job(second.jobId)?.source).toBe('Salesforce CRM');
    expect(second.apiCalls.getCustomSource).toBeUndefined();
  });

  it('refuses a custom source the service does not know before creating anything', async () => {
    const before = creates();
    const err = await failureOf(run(input({ customSourceId: '4242' })).result);
    expect(err).toMatchObject({ type: 'InvalidInput', nonRetryable: true });
    expect(err.message).toContain('custom source 4242 (fieldMappings.sourceId) does not exist');
    expect(creates()).toBe(before);
  });

  it('passes activityTypeId for activity imports', async () => {
    const result = await run(input({ entityType: 'Activity', activityTypeId: 1 })).result;
    expect(w.sim.job(result.jobId)).toMatchObject({ entityType: 'Activity', activityTypeId: 1 });
  });

  it('a second run with the same key reuses the job', async () => {
    const i = input();
    const first = await run(i).result;
    const second = await run(i).result;
    expect(second).toMatchObject({ jobId: first.jobId, reused: true, apiCalls: { listJobs: 1 } });
    expect(second.apiCalls.createJob).toBeUndefined();
    expect(jobsWithKey(i.jobKey)).toHaveLength(1);
  });

  describe('a create that may have made its job (hole 5)', () => {
    it('answered 500 but committed late: the attempt settles, looks again and finds it; one POST, one job', async () => {
      const i = input();
      w.sim.jobFaults.commitCreateLate({ afterMs: 100, answer: { status: 500 } });
      const before = creates();
      const result = await runUntilDone(i);
      await lateCommitsLanded();
      expect(result.reused).toBe(true);
      expect(jobsWithKey(i.jobKey)).toHaveLength(1);
      expect(creates() - before).toBe(1);
    });

    it('reset without an answer but committed late: one job', async () => {
      const i = input();
      const before = creates();
      w.sim.jobFaults.commitCreateLate({ afterMs: 100, answer: 'reset' });
      await runUntilDone(i);
      await lateCommitsLanded();
      expect(jobsWithKey(i.jobKey)).toHaveLength(1);
      expect(creates() - before).toBe(1);
    });

    it('timed out but committed late: one job', async () => {
      const service = new ServiceClient({
        baseUrl: w.sim.baseUrl,
        tokens: createTokenSource({ kind: 'env', token: new Secret(DEMO_TOKENS.importer) }),
        requestTimeoutMs: 100,
      });
      try {
        const i = input();
        w.sim.jobFaults.commitCreateLate({ afterMs: 300, answer: 'timeout' });
        await runUntilDone(i, { service });
        await lateCommitsLanded();
        expect(jobsWithKey(i.jobKey)).toHaveLength(1);
      } finally {
        await service.close();
      }
    });

    it('made but listed a little late, its answer lost: one job', async () => {
      const i = input();
      w.sim.jobFaults.listCreatedLate(150);
      w.sim.applyThenDrop('createJob');
      const result = await runUntilDone(i);
      expect(result.reused).toBe(true);
      expect(jobsWithKey(i.jobKey)).toHaveLength(1);
    });

    it('made with its name shortened by the service, its answer lost: the key at the start still finds it', async () => {
      const i = input({ dataImportName: 'a rather long import name that the service cuts short' });
      w.sim.jobFaults.truncateNames(40);
      w.sim.applyThenDrop('createJob');
      await runUntilDone(i);
      expect(jobsWithKey(i.jobKey)).toHaveLength(1);
      expect(w.sim.jobs().filter((j) => j.dataImportName.startsWith(`[import:${i.jobKey}`))).toHaveLength(1);
    });

    it('a retried attempt whose heartbeat says a create went out settles before it creates', async () => {
      const i = input();
      const createdAt = new Date().toISOString();
      w.sim.jobFaults.listCreatedLate(150);
      await ownJob(i);
      // The job exists but is not listed yet; without the settle wait the attempt would create a second.
      const result = await run(
        i,
        {},
        { attempt: 2, heartbeatDetails: { stateIndex: 1, page: 0, startedAt: createdAt, createdAt } },
      ).result;
      expect(result.reused).toBe(true);
      expect(jobsWithKey(i.jobKey)).toHaveLength(1);
    });
  });

  describe('a list that does not behave as asked (hole 5)', () => {
    it('finds its job among newer jobs when the service caps the page size below what was asked', async () => {
      const i = input({ entityType: 'Opportunity' });
      await ownJob(i);
      await otherJobs('Opportunity', 5);
      w.sim.jobFaults.capPerPage(2, 20);
      const result = await run(i).result;
      expect(result.reused).toBe(true);
      expect(jobsWithKey(i.jobKey)).toHaveLength(1);
    });

    it('finds its job when the service ignores sort and lists old jobs first', async () => {
      const i = input({ entityType: 'Person' });
      simClockOffsetMs = -2 * HOUR_MS;
      await otherJobs('Person', 3);
      simClockOffsetMs = 0;
      await ownJob(i);
      w.sim.jobFaults.ignoreSort(20);
      const result = await run(i).result;
      expect(result.reused).toBe(true);
      expect(jobsWithKey(i.jobKey)).toHaveLength(1);
    });

    it('pages from the first page without a number, and stops at a page with nothing new', async () => {
      const i = input({ entityType: 'Opportunity' });
      await otherJobs('Opportunity', 3);
      const before = w.sim.requests().length;
      const result = await run(i, { listPageSize: 2 }).result;
      expect(result.reused).toBe(false);
      const pages = w.sim
        .requests()
        .slice(before)
        .filter((r) => r.endpoint === 'listJobs')
        .map((r) => new URLSearchParams(r.query).get('page'));
      expect(pages[0]).toBeNull();
      expect(pages.slice(1)).toEqual(pages.slice(1).map((_, n) => String(n + 1)));
    });

    it('starts every search from the first page: a place an older attempt left in its heartbeat is not trusted', async () => {
      const i = input({ entityType: 'Opportunity' });
      await ownJob(i);
      await otherJobs('Opportunity', 20);
      const listed = () => w.sim.requests().filter((r) => r.endpoint === 'listJobs');
      const before = listed().length;
      // An older attempt's details name a page past the job.
      const stale = { stateIndex: 0, page: 9, startedAt: new Date().toISOString() };
      const second = run(i, { listPageSize: 2 }, { attempt: 2, heartbeatDetails: stale });
      await expect(second.result).resolves.toMatchObject({ reused: true });
      expect(new URLSearchParams(listed()[before]?.query).get('page')).toBeNull();
    });
  });

  describe('which jobs count (hole 6)', () => {
    async function jobWithData(i: CreateImportJobInput, outcome: 'completed' | 'failed') {
      w.sim.setJobOutcome(outcome);
      const job = await ownJob(i);
      await w.service.submitData(job.id, [CSV], { contentLength: CSV.length });
      while (w.sim.job(job.id)?.state !== outcome) await new Promise((r) => setTimeout(r, 5));
      w.sim.setJobOutcome('completed');
      return job;
    }

    it('never reuses a job the service marked failed: a Reset after it makes a new job', async () => {
      const i = input({ searchAllStates: true });
      const failed = await jobWithData(i, 'failed');
      const result = await run(i).result;
      expect(result).toMatchObject({ reused: false, state: 'new' });
      expect(result.jobId).not.toBe(failed.id);
      expect(jobsWithKey(i.jobKey)).toHaveLength(2);
    });

    it('after a Reset, finds its job among completed ones', async () => {
      const i = input({ searchAllStates: true });
      const done = await jobWithData(i, 'completed');
      const result = await run(i).result;
      expect(result).toMatchObject({ jobId: done.id, reused: true, state: 'completed' });
    });

    it('reads a listed job without a state by id before reusing it', async () => {
      const i = input({ entityType: 'Person' });
      const own = await ownJob(i);
      w.sim.failNext('listJobs', 200, {
        body: { data: [{ id: Number(own.id), dataImportName: `[import:${i.jobKey}] x` }] },
      });
      const result = await run(i).result;
      expect(result).toMatchObject({ jobId: own.id, reused: true, state: 'new', apiCalls: { jobStatus: 1 } });
    });
  });

  it('a spent createJob budget fails BudgetExhausted with resetsAt, and nothing is created', async () => {
    budget = budgetWith({ createJob: 1 });
    await budget.reserve('createJob', 'someone-else');
    const i = input();
    const before = w.sim.jobs().length;
    const f = await failureOf(run(i).result);
    expect(f.type).toBe('BudgetExhausted');
    expect(f.nonRetryable).toBe(true);
    expect(f.details?.[0]).toEqual({ endpoint: 'createJob', resetsAt: expect.any(String) });
    expect(w.sim.jobs().length).toBe(before);
  });

  it('a 403 fails Forbidden, not retryable, naming the Import Data permission', async () => {
    w.sim.failNext('listJobs', 403);
    const f = await failureOf(run(input()).result);
    expect(f.type).toBe('Forbidden');
    expect(f.nonRetryable).toBe(true);
    expect(f.message).toContain('"Import Data" permission');
  });
});
