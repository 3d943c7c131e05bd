import { describe, expect, it } from 'vitest';
import type { ListJobsQuery } from '../../activities/service/types.js';
import { JobWatcher } from '../../activities/watch/job-watcher.js';
import { budgetWith } from './environment.js';

/** A service whose processing list is `processing` (ids), paged from 1, recording each query. */
function listing(processing: string[], perPageCap = Number.POSITIVE_INFINITY) {
  const queries: ListJobsQuery[] = [];
  return {
    queries,
    service: {
      async listJobs(query: ListJobsQuery) {
        queries.push(query);
        const per = Math.min(query.perPage ?? 20, perPageCap);
        const page = query.page ?? 1;
        const data = processing.slice((page - 1) * per, page * per).map((id) => ({ id, state: 'processing' }));
        return { data };
      },
    },
  };
}

// Service time 100,000 times faster: the day's budget pays for a sweep every few milliseconds.
const settings = { minSweepMs: 5, listLateGraceMs: 0, perPage: 50, compression: 100_000 };

describe('JobWatcher', () => {
  it('tells a waiter when its listed job left, after two sweeps miss it, and learns that pages count from 1', async () => {
    const ids = Array.from({ length: 120 }, (_, i) => String(1000 + i));
    const { service, queries } = listing(ids);
    // The status reads left are all the uploads' (two each): none to spare for a read at the first miss.
    const watcher = new JobWatcher({ service, budget: budgetWith({ jobStatus: 2_400 }), settings });
    const watch = watcher.watch('1100');
    while (watcher.stats.sweeps < 2) await new Promise((r) => setTimeout(r, 2));
    ids.splice(ids.indexOf('1100'), 1);
    expect(await watch.outcome).toEqual({ kind: 'left', seen: true });
    // First sweep: unnumbered, 1 (a repeat), 2, 3 (short: 50 a page is honoured). Later sweeps: 1, 2, 3.
    expect(queries.slice(0, 4).map((q) => q.page)).toEqual([undefined, 1, 2, 3]);
    expect(queries.slice(4, 7).map((q) => q.page)).toEqual([1, 2, 3]);
  });

  it('tells a waiter its listed job left after one sweep misses it, when every job fits on one short page', async () => {
    const ids = ['2001', '2002', '2003'];
    const { service, queries } = listing(ids);
    const watcher = new JobWatcher({ service, budget: budgetWith(), settings });
    const watch = watcher.watch('2002');
    while (watcher.stats.sweeps < 2) await new Promise((r) => setTimeout(r, 2));
    const removedAt = queries.length;
    ids.splice(ids.indexOf('2002'), 1);
    expect(await watch.outcome).toEqual({ kind: 'left', seen: true });
    // Each sweep begins at page 1: one sweep that began after the job left was enough.
    expect(queries.slice(removedAt).filter((q) => q.page === 1)).toHaveLength(1);
  });

  it.each([
    { confirmAtFirstMiss: true, sweeps: 1 },
    // A wait whose job was skipped between pages once (its read found it running) asks for two.
    { confirmAtFirstMiss: false, sweeps: 2 },
  ])(
    'across many pages, with status reads to spare, a waiter %j is told after that many missing sweeps',
    async ({ confirmAtFirstMiss, sweeps }) => {
      const ids = Array.from({ length: 120 }, (_, i) => String(3000 + i));
      const { service, queries } = listing(ids);
      let endedAt: number | undefined;
      const ending = {
        async listJobs(query: ListJobsQuery) {
          // The job ends as the third sweep begins (two complete ones listed it; pages count from 1 by then).
          if (endedAt === undefined && watcher.stats.sweeps >= 2 && query.page === 1) {
            ids.splice(ids.indexOf('3100'), 1);
            endedAt = queries.length;
          }
          return service.listJobs(query);
        },
      };
      // The spec's budgets, early in the day: 1,200 status reads beyond the uploads' two each.
      const watcher = new JobWatcher({ service: ending, budget: budgetWith(), settings });
      const watch = watcher.watch('3100', { confirmAtFirstMiss });

      expect(await watch.outcome).toEqual({ kind: 'left', seen: true });
      // With a read to spare, told by the sweep that began after it ended (its import then reads the job).
      expect(queries.slice(endedAt).filter((q) => q.page === 1)).toHaveLength(sweeps);
    },
  );

  it('releases its waiters to per-job polls while the list calls left are kept for creates', async () => {
    const { service, queries } = listing(['7']);
    // 40 list calls left, 1,200 creates left: every one of them is the creates'.
    const watcher = new JobWatcher({ service, budget: budgetWith({ listJobs: 40 }), settings });
    const outcome = await watcher.watch('7').outcome;
    expect(outcome).toMatchObject({ kind: 'fallback', reason: expect.stringMatching(/kept for creates/) });
    expect(queries).toHaveLength(0);
  });
});
