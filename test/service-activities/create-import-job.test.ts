import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { InMemoryBudgetGate } from '../../activities/budget/in-memory-gate.js';
import { makeCreateImportJob } from '../../activities/create-import-job.js';
import type { CreateImportJobInput, CreateImportJobResult } from '../../workflows/policy/activity-contracts.js';
import { jobNameWithKey } from '../../workflows/policy/job-key.js';
import { failureOf, runActivity } from '../support/activities.js';
import { budgetWith, type ServiceWorld, startServiceWorld } from './environment.js';

const HOUR_MS = 3_600_000;

describe('createImportJob', () => {
  let w: ServiceWorld;
  let budget: InMemoryBudgetGate;
  let keyCounter = 0;
  beforeAll(async () => {
    w = await startServiceWorld();
  });
  afterAll(() => w.close());
  beforeEach(() => {
    w.sim.clearFaults();
    budget = budgetWith();
  });

  /** A fresh key per test, so jobs of earlier tests never match. */
  function input(overrides: Partial<CreateImportJobInput> = {}): CreateImportJobInput {
    keyCounter += 1;
    return {
      tenant: 't1',
      jobKey: `key${keyCounter.toString().padStart(13, '0')}`,
      dataImportName: 'accounts.csv',
      entityType: 'Account',
      notBefore: new Date(Date.now() - HOUR_MS).toISOString(),
      ...overrides,
    };
  }
  const run = (i: CreateImportJobInput, deps: Partial<Parameters<typeof makeCreateImportJob>[0]> = {}, attempt = 1) =>
    runActivity<CreateImportJobInput, CreateImportJobResult>(
      makeCreateImportJob({ service: w.service, budget, ...deps }),
      i,
      { attempt },
    );
  const jobsWithKey = (key: string) => w.sim.jobs().filter((j) => j.dataImportName.endsWith(`[import:${key}]`));

  it('creates a job whose name carries the key, after looking for one', async () => {
    const i = input({ importSource: 'CSV' });
    const result = await run(i).result;
    expect(result).toMatchObject({ reused: false, state: 'new', apiCalls: { listJobs: 1, createJob: 1 } });
    expect(w.sim.job(result.jobId)).toMatchObject({
      dataImportName: jobNameWithKey('accounts.csv', i.jobKey),
      entityType: 'Account',
      source: 'CSV',
    });
    expect(budget.requests.map((r) => r.endpoint)).toEqual(['listJobs', 'createJob']);
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

  it('a create whose response is lost fails retryably, and the retried attempt finds the job: one job', async () => {
    const i = input();
    w.sim.applyThenDrop('createJob');
    const f = await failureOf(run(i).result);
    expect(f.type).toBe('Network');
    expect(f.nonRetryable).toBe(false);
    const retried = await run(i, {}, 2).result;
    expect(retried.reused).toBe(true);
    expect(jobsWithKey(i.jobKey)).toEqual([expect.objectContaining({ id: retried.jobId })]);
  });

  it('pages through newer jobs to find the one with the key', async () => {
    const i = input({ entityType: 'Opportunity' });
    const ours = await w.service.createJob({
      dataImportName: jobNameWithKey('accounts.csv', i.jobKey),
      entityType: 'Opportunity',
    });
    for (let n = 0; n < 5; n++) {
      await w.service.createJob({ dataImportName: `someone else ${n}`, entityType: 'Opportunity' });
    }
    const result = await run(i, { listPageSize: 2 }).result;
    expect(result).toMatchObject({ jobId: ours.id, reused: true, apiCalls: { listJobs: 3 } });
  });

  it('stops looking at jobs older than notBefore, so an old job with the key is not ours', async () => {
    const i = input({ entityType: 'Person' });
    await w.service.createJob({ dataImportName: jobNameWithKey('accounts.csv', i.jobKey), entityType: 'Person' });
    for (let n = 0; n < 4; n++) await w.service.createJob({ dataImportName: `older ${n}`, entityType: 'Person' });
    const result = await run({ ...i, notBefore: new Date(Date.now() + HOUR_MS).toISOString() }, { listPageSize: 2 })
      .result;
    expect(result).toMatchObject({ reused: false, apiCalls: { listJobs: 1, createJob: 1 } });
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
