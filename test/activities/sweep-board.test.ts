import { describe, expect, it } from 'vitest';
import type { ListJobsQuery } from '../../activities/service/types.js';
import { JobWatcher } from '../../activities/watch/job-watcher.js';
import { LocalSweepBoard } from '../../activities/watch/sweep-board.js';
import { claimProblem, emptyBoard, KEPT_SWEEPS, publish } from '../../workflows/sweep-board-state.js';
import { budgetWith } from './environment.js';

/** A service whose processing list is `processing` (ids), paged from 1, recording each query. */
function listing(processing: string[]) {
  const queries: ListJobsQuery[] = [];
  return {
    queries,
    service: {
      async listJobs(query: ListJobsQuery) {
        queries.push(query);
        const per = query.perPage ?? 20;
        const page = query.page ?? 1;
        return { data: processing.slice((page - 1) * per, page * per).map((id) => ({ id, state: 'processing' })) };
      },
    },
  };
}

// Service time 100,000 times faster: the day's budget pays for a sweep every few milliseconds. The lease
// outlasts the test, so no round is ever taken over and every duplicate sweep would be the watchers' own doing.
const settings = { minSweepMs: 5, listLateGraceMs: 0, perPage: 50, compression: 100_000, sweepLeaseMs: 600_000 };

const sum = (ns: number[]) => ns.reduce((a, b) => a + b, 0);

/** Counts the calls to `object[method]` from now on. */
function countCalls<T extends object, K extends keyof T>(object: T, method: K): { readonly calls: number } {
  const original = (object[method] as (...args: unknown[]) => unknown).bind(object);
  const counter = { calls: 0 };
  object[method] = ((...args: unknown[]) => {
    counter.calls += 1;
    return original(...args);
  }) as T[K];
  return counter;
}

describe('the sweep board', () => {
  it.each([1, 4])('%i watcher processes sweep each round once and every one of them is told', async (fleet) => {
    const ids = Array.from({ length: 60 }, (_, i) => String(500 + i));
    const { service, queries } = listing(ids);
    const board = new LocalSweepBoard();
    const watchers = Array.from(
      { length: fleet },
      () => new JobWatcher({ service, budget: budgetWith(), board, settings }),
    );
    const watches = watchers.map((watcher, i) => watcher.watch(ids[i] as string));
    while ((await board.read()).seq < 3) await new Promise((r) => setTimeout(r, 2));
    ids.splice(0, fleet);

    for (const watch of watches) expect(await watch.outcome).toEqual({ kind: 'left', seen: true });
    const swept = sum(watchers.map((w) => w.stats.sweeps));
    // The sweep that told the last waiter is published just after it told it.
    for (let i = 0; i < 100 && (await board.read()).seq < swept; i++) await new Promise((r) => setTimeout(r, 2));
    // One sweep per round for the whole fleet: every sweep made was published as a round of its own.
    expect(swept).toBe((await board.read()).seq);
    expect(queries.length).toBe(sum(watchers.map((w) => w.stats.listCalls)));
  });

  it('a due round is left first to the process that made the newest sweep; another takes it after a grace', async () => {
    const { service } = listing(['1']);
    const board = new LocalSweepBoard();
    // The newest sweep was made an interval ago (5 s, uncompressed), by a process that sweeps no more: it is due now.
    await board.publish({
      holder: 'gone',
      startedAt: new Date(Date.now() - 5_000).toISOString(),
      listed: ['1'],
      calls: 1,
    });
    const uncompressed = { ...settings, minSweepMs: 5_000, compression: 1 };
    // List calls plenty enough that the interval is the 5 s wanted.
    const budget = budgetWith({ listJobs: 1e9 });
    const watcher = new JobWatcher({ service, budget, board, settings: uncompressed });
    const watch = watcher.watch('1');
    await new Promise((r) => setTimeout(r, 100));
    // Within the grace (a tenth of the interval, half a second here) it only reads: the newest sweep's maker has the first go.
    expect((await board.read()).seq).toBe(1);
    while ((await board.read()).seq < 2) await new Promise((r) => setTimeout(r, 10));
    expect((await board.read()).sweeps.at(-1)?.holder).not.toBe('gone');
    watch.cancel();
  });

  it("leaves the round to the newest sweep's maker a tenth of an interval of service time, however compressed", async () => {
    const { service } = listing(['1']);
    const board = new LocalSweepBoard();
    // Service time 120 times faster: one interval of 60 s is 500 ms here. The clock stands still, so the
    // watcher plans its next sweep once and waits for it.
    const compressed = { ...settings, minSweepMs: 60_000 / 120, compression: 120 };
    const now = Date.now();
    await board.publish({ holder: 'other', startedAt: new Date(now).toISOString(), listed: ['1'], calls: 1 });
    const budget = budgetWith({ listJobs: 1e9 });
    const watcher = new JobWatcher({ service, budget, board, settings: compressed, now: () => now });
    const watch = watcher.watch('1');
    while (watcher.nextSweepAtMs === undefined) await new Promise((r) => setTimeout(r, 2));
    watch.cancel();

    const graceMs = watcher.nextSweepAtMs - now - compressed.minSweepMs;
    // 6 s of service time, as in production (60 s / 10); not half a second of real time, which is a minute here.
    expect(graceMs * compressed.compression).toBe(6_000);
  });

  it('sweeps a due round at once when its maker published that it had no job left to watch', async () => {
    const { service } = listing(['1']);
    const board = new LocalSweepBoard();
    // Service time 120 times faster. The clock stands still: the round is due from the start, and a grace of
    // any length would never pass, so only a round that is nobody's is swept.
    const compressed = { ...settings, minSweepMs: 60_000 / 120, compression: 120 };
    const now = Date.now();
    const startedAt = new Date(now - compressed.minSweepMs).toISOString();
    await board.publish({ holder: 'other', startedAt, listed: ['1'], calls: 1, makerDone: true });
    const budget = budgetWith({ listJobs: 1e9 });
    const boardReads = countCalls(board, 'read');
    const watcher = new JobWatcher({ service, budget, board, settings: compressed, now: () => now });
    const watch = watcher.watch('1');
    // It sweeps right after its first read of the board; one that waits for a grace only reads on.
    while (watcher.stats.sweeps === 0 && boardReads.calls < 10) await new Promise((r) => setTimeout(r, 5));
    watch.cancel();

    expect(watcher.stats.sweeps).toBe(1);
    expect((await board.read()).sweeps.at(-1)?.holder).toBe(watcher.holder);
  });

  it('publishes that it has no job left to watch when its sweep told its last waiter', async () => {
    const { service } = listing([]);
    const board = new LocalSweepBoard();
    const budget = budgetWith({ listJobs: 1e9 });
    // Every job fits on one short page: one sweep that misses the job tells it.
    await board.publish({ holder: 'other', startedAt: new Date().toISOString(), listed: ['1'], calls: 1 });
    const watcher = new JobWatcher({ service, budget, board, settings });
    const watch = watcher.watch('1');
    expect(await watch.outcome).toEqual({ kind: 'left', seen: true });
    while ((await board.read()).sweeps.at(-1)?.holder !== watcher.holder) await new Promise((r) => setTimeout(r, 2));
    expect((await board.read()).sweeps.at(-1)).toMatchObject({ listed: [], makerDone: true });
  });

  it('asks the ledger its pace once per sweep, not at each read of the board while another process sweeps', async () => {
    const { service } = listing(['1']);
    const board = new LocalSweepBoard();
    const boardReads = countCalls(board, 'read');
    // Service time 120 times faster, as in the budget benchmark. The clock stands still: the round is due from
    // the start, and the other process, which holds it, never publishes, so this one reads the board on and on.
    const compressed = { ...settings, minSweepMs: 60_000 / 120, compression: 120 };
    const now = Date.now();
    await board.publish({
      holder: 'other',
      startedAt: new Date(now - compressed.minSweepMs).toISOString(),
      listed: ['1'],
      calls: 1,
    });
    await board.claim({ holder: 'other', afterSeq: 1 });
    const budget = budgetWith({ listJobs: 1e9 });
    const usageReads = countCalls(budget, 'usage');
    const watcher = new JobWatcher({ service, budget, board, settings: compressed, now: () => now });
    const watch = watcher.watch('1');
    while (boardReads.calls < 10) await new Promise((r) => setTimeout(r, 5));
    watch.cancel();

    expect(watcher.stats.sweeps).toBe(0);
    // Each a query of the ledger workflow in production: one for the sweep it knows, none per read of the board.
    expect(usageReads.calls).toBe(1);
  });

  it("tells a waiter after one miss in another process's sweep that fit on one short page", async () => {
    const { service } = listing([]);
    const board = new LocalSweepBoard();
    const sweep = (listed: string[]) =>
      board.publish({ holder: 'other', startedAt: new Date().toISOString(), listed, calls: 1, onePage: true });
    await sweep(['7', '8']);
    // The other process holds the next round (its lease outlasts the test): this one can only read the board.
    await board.claim({ holder: 'other', afterSeq: 1 });
    const watcher = new JobWatcher({ service, budget: budgetWith(), board, settings });
    const watch = watcher.watch('7');
    while (watcher.stats.sweepsRead < 1) await new Promise((r) => setTimeout(r, 2));
    await sweep(['8']);

    expect(await watch.outcome).toEqual({ kind: 'left', seen: true });
    // Told by the other's sweep: without the one-page rule it would have swept for a second miss itself.
    expect(watcher.stats.sweeps).toBe(0);
  });

  it('refuses a claim for a round already published, or held by another process, unless taken over', () => {
    const published = publish(emptyBoard(), {
      holder: 'a',
      startedAt: '2026-01-01T00:00:00Z',
      listed: ['1'],
      calls: 1,
    });
    expect(claimProblem(published, { holder: 'b', afterSeq: 0 })).toMatch(/sweep 1 is published/);
    const held = { ...published, lease: { holder: 'a', forSeq: 1, grantedAt: '2026-01-01T00:00:01Z' } };
    expect(claimProblem(held, { holder: 'b', afterSeq: 1 })).toMatch(/a holds this round/);
    expect(claimProblem(held, { holder: 'b', afterSeq: 1, takeOverFrom: 'a' })).toBeUndefined();
    expect(claimProblem(held, { holder: 'a', afterSeq: 1 })).toBeUndefined();
    expect(claimProblem(held, { holder: '', afterSeq: 1 })).toMatch(/holder must be/);
  });

  it('drops a sweep that began before the newest published one, and keeps the last few', () => {
    let view = emptyBoard();
    for (let i = 0; i < KEPT_SWEEPS + 2; i++) {
      view = publish(view, {
        holder: 'a',
        startedAt: new Date(Date.UTC(2026, 0, 1, 0, i)).toISOString(),
        calls: 1,
        listed: [],
      });
    }
    const late = publish(view, { holder: 'b', startedAt: '2026-01-01T00:00:30Z', calls: 1, listed: ['9'] });
    expect(late.seq).toBe(KEPT_SWEEPS + 2);
    expect(late.sweeps.map((s) => s.seq)).toEqual([3, 4, 5, 6]);
  });
});
