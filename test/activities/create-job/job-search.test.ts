/**
 * The search that resolves an uncertain create (create-job/job-search.ts),
 * against the simulator: it finds a job by the key at the start of its name
 * however the service lists, and relies on nothing the spec does not publish.
 */
import { Context } from '@temporalio/activity';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { JobSearch } from '../../../activities/create-job/job-search.js';
import { ServiceCalls } from '../../../activities/service-calls.js';
import type { EntityType } from '../../../workflows/contracts/import-input.js';
import { jobNameWithKey } from '../../../workflows/contracts/job-key.js';
import { runActivity } from '../../support/activities.js';
import type { InMemoryBudgetGate } from '../../support/in-memory-budget-gate.js';
import { budgetWith, type ServiceWorld, startServiceWorld } from '../environment.js';

const HOUR_MS = 3_600_000;

describe('JobSearch', () => {
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
    budget = budgetWith();
    simClockOffsetMs = 0;
  });

  /** A fresh key per test, so jobs of earlier tests never match. */
  const freshKey = () => `key${(++keyCounter).toString().padStart(13, '0')}`;
  const ownJob = (jobKey: string, entityType: EntityType, name = 'accounts.csv') =>
    w.service.createJob({ dataImportName: jobNameWithKey(name, jobKey), entityType });
  async function otherJobs(entityType: EntityType, n: number): Promise<void> {
    for (let k = 0; k < n; k++) await w.service.createJob({ dataImportName: `someone else ${k}`, entityType });
  }
  /** One search among `new` jobs, inside an activity (its calls are reserved and counted as the activity's). */
  function search(jobKey: string, entityType: EntityType, perPage = 50) {
    return runActivity(async () => {
      const calls = ServiceCalls.forCurrentActivity({ budget }, 't1');
      const found = await new JobSearch(calls, w.service, Context.current().cancellationSignal, () => undefined).find({
        entityType,
        jobKey,
        perPage,
      });
      return { found, apiCalls: calls.counts };
    }, undefined).result;
  }

  it('finds its job among newer jobs when the service caps the page size below what was asked', async () => {
    const key = freshKey();
    const own = await ownJob(key, 'Opportunity');
    await otherJobs('Opportunity', 5);
    w.sim.jobFaults.capPerPage(2, 20);
    expect((await search(key, 'Opportunity')).found).toEqual({ id: own.id, state: 'new' });
  });

  it('finds its job when the service ignores sort and lists old jobs first', async () => {
    const key = freshKey();
    simClockOffsetMs = -2 * HOUR_MS;
    await otherJobs('Person', 3);
    simClockOffsetMs = 0;
    const own = await ownJob(key, 'Person');
    w.sim.jobFaults.ignoreSort(20);
    expect((await search(key, 'Person')).found).toEqual({ id: own.id, state: 'new' });
  });

  it('finds a job whose name the service shortened: the key sits at the start', async () => {
    const key = freshKey();
    w.sim.jobFaults.truncateNames(40);
    const own = await ownJob(key, 'Account', 'a rather long import name that the service cuts short');
    expect((await search(key, 'Account')).found).toEqual({ id: own.id, state: 'new' });
  });

  it('pages from the first page without a number, and stops at a page with nothing new', async () => {
    await otherJobs('Opportunity', 3);
    const before = w.sim.requests().length;
    expect((await search(freshKey(), 'Opportunity', 2)).found).toBeUndefined();
    const pages = w.sim
      .requests()
      .slice(before)
      .filter((r) => r.endpoint === 'listJobs')
      .map((r) => new URLSearchParams(r.query).get('page'));
    expect(pages[0]).toBeNull();
    expect(pages.slice(1)).toEqual(pages.slice(1).map((_, n) => String(n + 1)));
  });

  it('reads a listed job without a state by id before taking it', async () => {
    const key = freshKey();
    const own = await ownJob(key, 'Person');
    w.sim.failNext('listJobs', 200, {
      body: { data: [{ id: Number(own.id), dataImportName: `[import:${key}] x` }] },
    });
    expect(await search(key, 'Person')).toEqual({
      found: { id: own.id, state: 'new' },
      apiCalls: { listJobs: 1, jobStatus: 1 },
    });
  });
});
