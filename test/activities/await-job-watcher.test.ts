/**
 * awaitJobCompletion as production wires it (createActivities: one job
 * watcher per process), on the spec's poll schedule with service time
 * compressed 1,000 times (5, 10, 20, 40, then 60 ms; the listing grace
 * follows: 15 ms) against jobs that process for the same compressed
 * durations. How many list calls a sweep costs in all depends on how long
 * the machine takes (sweeps run every 60 ms while jobs wait): that figure is
 * `npm run bench:budget`'s; these tests assert what does not depend on speed.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createActivities, watcherFor } from '../../activities/index.js';
import type { ServiceClient } from '../../activities/service/client.js';
import type { CallOptions, ListJobsQuery } from '../../activities/service/types.js';
import type {
  AwaitJobCompletionInput,
  AwaitJobCompletionResult,
  PollProgress,
} from '../../workflows/contracts/activities.js';
import { failureOf, runActivity } from '../support/activities.js';
import type { InMemoryBudgetGate } from '../support/in-memory-budget-gate.js';
import { InMemoryJobRecordGate } from '../support/in-memory-job-record-gate.js';
import { budgetWith, type ServiceWorld, startServiceWorld } from './environment.js';

const CSV = Buffer.from('Account Name,Account Domain\nAcme,acme.example\n');
const COMPRESSION = 1_000;
const SPEC_SCHEDULE_MS = [5_000, 10_000, 20_000, 40_000, 60_000].map((ms) => ms / COMPRESSION);

function activityDeps(
  service: ServiceClient,
  budget: InMemoryBudgetGate,
  scheduleMs: number[],
  timeCompression?: number,
) {
  return {
    service,
    budget,
    s3: {} as never,
    workflows: {} as never,
    mappingLocks: {} as never,
    jobRecord: new InMemoryJobRecordGate(),
    settings: {
      maxFileBytes: 1e9,
      poll: { scheduleMs, jitterRatio: 0 },
      uploadIdleTimeoutMs: 60_000,
      partSizeBytes: 1 << 20,
      parallelParts: 1,
      timeCompression,
    },
  };
}

function awaitActivity(service: ServiceClient, budget: InMemoryBudgetGate) {
  const activities = createActivities(activityDeps(service, budget, SPEC_SCHEDULE_MS, COMPRESSION));
  return (input: AwaitJobCompletionInput, info = {}) =>
    runActivity<AwaitJobCompletionInput, AwaitJobCompletionResult, PollProgress>(activities.awaitJobCompletion, input, {
      heartbeatTimeoutMs: 100,
      ...info,
    });
}

async function uploadedJob(w: ServiceWorld): Promise<string> {
  const job = await w.service.createJob({ dataImportName: 'watched', entityType: 'Account' });
  await w.service.submitData(job.id, [CSV], { contentLength: CSV.length });
  return job.id;
}

/** The service as the activities see it, recording the list queries the watcher sends. */
function recording(w: ServiceWorld, rewrite: (q: ListJobsQuery) => ListJobsQuery = (q) => q) {
  const queries: ListJobsQuery[] = [];
  const service = {
    getJob: w.service.getJob.bind(w.service),
    listJobs(query: ListJobsQuery, opts?: CallOptions) {
      queries.push(query);
      return w.service.listJobs(rewrite(query), opts);
    },
  } as unknown as ServiceClient;
  return { service, queries };
}

/** The list queries cut into sweeps: a sweep starts at the unnumbered first page, or at page 1 after a numbered page. */
function sweepsOf(queries: ListJobsQuery[]): ListJobsQuery[][] {
  const sweeps: ListJobsQuery[][] = [];
  for (const q of queries) {
    const previous = sweeps.at(-1)?.at(-1);
    const starts = q.page === undefined || (q.page === 1 && previous?.page !== undefined);
    if (starts || !previous) sweeps.push([q]);
    else sweeps.at(-1)?.push(q);
  }
  return sweeps;
}

const calls = (w: ServiceWorld, endpoint: string, jobId?: string) =>
  w.sim.requests().filter((r) => r.endpoint === endpoint && (jobId === undefined || r.path.endsWith(`/${jobId}`)))
    .length;

describe('awaitJobCompletion with the job watcher: a one-hour job', () => {
  let w: ServiceWorld;
  beforeAll(async () => {
    w = await startServiceWorld({ processingMs: 3_600_000 / COMPRESSION });
  });
  afterAll(() => w.close());

  it('costs at most 3 status reads, not the ~58 of polling it every minute', async () => {
    const budget = budgetWith();
    const jobId = await uploadedJob(w);
    const a = awaitActivity(w.service, budget)({ tenant: 't1', jobId, timeoutMs: 60_000 });
    const result = await a.result;
    expect(result.state).toBe('completed');
    expect(calls(w, 'jobStatus', jobId)).toBeLessThanOrEqual(3);
    expect(result.apiCalls.jobStatus).toBe(calls(w, 'jobStatus', jobId));
    // Every list call was reserved with the ledger, like every status read.
    expect(budget.requests.filter((r) => r.endpoint === 'listJobs')).toHaveLength(calls(w, 'listJobs'));
    // It heartbeat while it waited, with the same waitingSince throughout.
    expect(a.heartbeats.length).toBeGreaterThan(1);
    expect(new Set(a.heartbeats.map((h) => h.waitingSince)).size).toBe(1);
    // For `status`: when a sweep last listed the job processing, and when the next sweep is due...
    const byWatcher = a.heartbeats.filter((h) => h.lastSeen?.by === 'watcher');
    expect(byWatcher.length).toBeGreaterThan(0);
    for (const h of byWatcher) {
      expect(h.lastSeen?.state).toBe('processing');
      expect(Date.parse(h.nextCheckAt ?? '')).toBeGreaterThan(Date.parse(h.lastSeen?.at ?? ''));
    }
    // ...then the confirming read's word.
    expect(a.heartbeats.at(-1)?.lastSeen).toMatchObject({ state: 'completed', by: 'status read' });
  });

  it('still enforces the job timeout, after one confirming read', async () => {
    const jobId = await uploadedJob(w);
    const before = calls(w, 'jobStatus', jobId);
    const a = awaitActivity(w.service, budgetWith())({ tenant: 't1', jobId, timeoutMs: 300 });
    const f = await failureOf(a.result);
    expect(f.type).toBe('JobTimedOut');
    expect(calls(w, 'jobStatus', jobId) - before).toBeLessThanOrEqual(2);
  });
});

describe('awaitJobCompletion with the job watcher: a job that ends within seconds', () => {
  let w: ServiceWorld;
  beforeAll(async () => {
    w = await startServiceWorld({ processingMs: 0 });
  });
  afterAll(() => w.close());

  it('completes on its early read, with no sweep, while the status budget has room', async () => {
    // The production pace in real time: the first poll at 5 s, sweeps a minute apart, a 15 s listing grace.
    const deps = activityDeps(w.service, budgetWith(), [5_000, 10_000, 20_000, 40_000, 60_000]);
    const activities = createActivities(deps);
    const jobId = await uploadedJob(w);
    const a = runActivity<AwaitJobCompletionInput, AwaitJobCompletionResult, PollProgress>(
      activities.awaitJobCompletion,
      { tenant: 't1', jobId, timeoutMs: 600_000 },
      { heartbeatTimeoutMs: 10_000 },
    );
    expect(await a.result).toMatchObject({ state: 'completed', polls: 1 });
    expect(calls(w, 'jobStatus', jobId)).toBe(1);
    expect(calls(w, 'listJobs')).toBe(0);
  }, 30_000);

  it("skips the early read when the status reads left are all the uploads' and the waiting jobs'", async () => {
    // 2 reads left, 1,200 uploads left: every one of them is needed, so the job waits for the watcher's word.
    const budget = budgetWith({ jobStatus: 2 });
    const activities = createActivities(activityDeps(w.service, budget, SPEC_SCHEDULE_MS, COMPRESSION));
    const jobId = await uploadedJob(w);
    const a = runActivity<AwaitJobCompletionInput, AwaitJobCompletionResult, PollProgress>(
      activities.awaitJobCompletion,
      { tenant: 't1', jobId, timeoutMs: 60_000 },
      { heartbeatTimeoutMs: 1_000 },
    );
    // Ends completed, or waiting for the budget's reset: either way, after the watcher's sweeps.
    await a.result.catch(() => undefined);
    // Never an early read: the first read (if any) came after a sweep of the processing list.
    const firstRead = w.sim.requests().findIndex((r) => r.endpoint === 'jobStatus' && r.path.endsWith(`/${jobId}`));
    const firstList = w.sim.requests().findIndex((r) => r.endpoint === 'listJobs');
    expect(firstList).toBeGreaterThanOrEqual(0);
    if (firstRead >= 0) expect(firstRead).toBeGreaterThan(firstList);
  }, 30_000);
});

describe('awaitJobCompletion with the job watcher: a tenant with many processing jobs', () => {
  let w: ServiceWorld;
  beforeAll(async () => {
    w = await startServiceWorld({ processingMs: 4_000 });
  });
  afterAll(() => w.close());
  beforeEach(() => w.sim.clearFaults());

  it('watches 300 jobs at 50 per page: each end told once, a sweep bounded by its pages', async () => {
    const budget = budgetWith();
    const { service, queries } = recording(w);
    const run = awaitActivity(service, budget);
    // Each import starts waiting as soon as its upload is in, as importFile does.
    const jobIds: string[] = [];
    const runs: ReturnType<typeof run>[] = [];
    for (let i = 0; i < 300; i += 30) {
      const batch = await Promise.all(Array.from({ length: 30 }, () => uploadedJob(w)));
      jobIds.push(...batch);
      runs.push(...batch.map((jobId) => run({ tenant: 't1', jobId, timeoutMs: 60_000 })));
    }
    const results = await Promise.all(runs.map((r) => r.result));
    // Every job's end is told once, to its own wait: an early read while the budget has room, then one that confirms.
    expect(new Set(jobIds).size).toBe(300);
    expect(results.every((r) => r.state === 'completed')).toBe(true);
    expect(jobIds.every((id) => calls(w, 'jobStatus', id) >= 1)).toBe(true);
    const statusReads = jobIds.reduce((n, id) => n + calls(w, 'jobStatus', id), 0);
    expect(statusReads / jobIds.length).toBeLessThanOrEqual(2.5);
    // A sweep reads at most the pages 300 jobs fill, plus the unnumbered first page and the empty last one.
    const sweeps = sweepsOf(queries);
    expect(sweeps.length).toBeGreaterThan(0);
    expect(Math.max(...sweeps.map((s) => s.length))).toBeLessThanOrEqual(300 / 50 + 2);
    // The watcher asked for 50 per page and left the entity type open: one sweep covers every type.
    expect(queries.every((q) => q.state === 'processing' && q.perPage === 50 && q.entityType === undefined)).toBe(true);
  });

  it('falls back to per-job polls, logged once, when the service ignores the state filter', async () => {
    const { service: ignoring } = recording(w, ({ state: _ignored, ...rest }) => rest);
    // Another job sits completed in the list, so a sweep shows a row that is not processing.
    const done = await uploadedJob(w);
    while (w.sim.job(done)?.state !== 'completed') await new Promise((r) => setTimeout(r, 50));
    const run = awaitActivity(ignoring, budgetWith());
    const jobIds = [await uploadedJob(w), await uploadedJob(w)];
    const runs = jobIds.map((jobId) => run({ tenant: 't1', jobId, timeoutMs: 60_000 }));
    const results = await Promise.all(runs.map((r) => r.result));
    expect(results.map((r) => r.state)).toEqual(['completed', 'completed']);
    const warnings = runs.flatMap((r) => r.logs).filter((l) => l.level === 'WARN' && /falls back/.test(l.message));
    expect(warnings).toHaveLength(1);
    expect(warnings[0]?.message).toMatch(/does not honour the filter/);
  });

  it('falls back to per-job polls when the service never lists the job', async () => {
    const jobId = (await w.service.createJob({ dataImportName: 'unlisted', entityType: 'Account' })).id;
    w.sim.jobFaults.listCreatedLate(10 * 60_000);
    const hidden = (await w.service.createJob({ dataImportName: 'hidden', entityType: 'Account' })).id;
    await w.service.submitData(hidden, [CSV], { contentLength: CSV.length });
    const run = awaitActivity(w.service, budgetWith());
    const a = run({ tenant: 't1', jobId: hidden, timeoutMs: 60_000 });
    const result = await a.result;
    expect(result.state).toBe('completed');
    expect(a.logs.some((l) => l.level === 'WARN' && /never listed/.test(l.message))).toBe(true);
    expect(jobId).not.toBe(hidden);
  });
});

describe('the watcher createActivities builds', () => {
  const budget = budgetWith();
  const service = {} as ServiceClient;

  it('keeps the full listing grace on a production schedule that ends at 30 s', () => {
    const watcher = watcherFor(activityDeps(service, budget, [5_000, 10_000, 30_000]));
    expect(watcher.settings).toMatchObject({ minSweepMs: 30_000, listLateGraceMs: 15_000, compression: 1 });
  });

  it('compresses service time only when told to', () => {
    const watcher = watcherFor(activityDeps(service, budget, SPEC_SCHEDULE_MS, COMPRESSION));
    expect(watcher.settings).toMatchObject({ minSweepMs: 60, listLateGraceMs: 15, compression: COMPRESSION });
  });

  it('refuses a compression below 1, saying what it expects', () => {
    expect(() => watcherFor(activityDeps(service, budget, SPEC_SCHEDULE_MS, 0.5))).toThrow(/at least 1/);
  });
});
