import { describe, expect, it } from 'vitest';
import { paceFromUsage, paceIntervalMs, readReserve } from '../../activities/watch/pace.js';
import type { LedgerUsage } from '../../workflows/contracts/budget.js';
import { BUDGETED_ENDPOINT_NAMES, type BUDGETED_ENDPOINTS } from '../../workflows/contracts/endpoints.js';
import { SPEC_BUDGET_SETTINGS } from '../support/in-memory-budget-gate.js';

const HOUR = 3_600_000;
const NOW = Date.parse('2026-11-25T06:00:00Z');
const RESET = '2026-11-26T00:00:00.000Z';

/** Spec limits, `used` as given, resetting at midnight (18 h after NOW). */
function usageWith(used: Partial<Record<keyof typeof BUDGETED_ENDPOINTS, number>> = {}): LedgerUsage {
  const out = {} as LedgerUsage;
  for (const name of BUDGETED_ENDPOINT_NAMES) {
    const limit = SPEC_BUDGET_SETTINGS.limits[name];
    const u = used[name] ?? 0;
    out[name] = { used: u, limit, remaining: limit - u, resetsAt: RESET };
  }
  return out;
}

describe('paceIntervalMs', () => {
  const plenty = { remaining: 3_600, reserve: 0, msToReset: 18 * HOUR, minIntervalMs: 60_000 };

  it('gives no round at all for a tenant with no job waiting', () => {
    expect(paceIntervalMs({ ...plenty, callsPerRound: 0 })).toBeUndefined();
    expect(
      paceFromUsage('listJobs', usageWith(), { callsPerRound: 0, jobsWaiting: 0, minIntervalMs: 60_000 }, NOW),
    ).toBe(undefined);
  });

  it('keeps the wanted interval while the budget pays for it', () => {
    // One page per sweep, 18 h left: 1,080 sweeps at 60 s would fit 3,600 reads thrice.
    expect(paceIntervalMs({ ...plenty, callsPerRound: 1 })).toBe(60_000);
  });

  it('stretches the sweep of 300 processing jobs at 50 per page (7 calls) to what the reads left allow', () => {
    // 300 jobs, 50 a page: 6 full pages and the empty one that ends the sweep.
    const interval = paceIntervalMs({ ...plenty, callsPerRound: 7, remaining: 3_000, reserve: 1_000 })!;
    // 2,000 spendable reads over 18 h at 7 per sweep: one sweep every 226.8 s.
    expect(interval).toBe(Math.ceil((18 * HOUR * 7) / 2_000));
    // Sweeps at that pace until the reset spend exactly what is spendable, and not more.
    expect(Math.floor((18 * HOUR) / interval) * 7).toBeLessThanOrEqual(2_000);
  });

  it('waits for the reset when the budget is nearly spent, never spending the reserve', () => {
    expect(paceIntervalMs({ ...plenty, callsPerRound: 7, remaining: 1_005, reserve: 1_000 })).toBe(18 * HOUR);
    expect(paceIntervalMs({ ...plenty, callsPerRound: 1, remaining: 3, reserve: 0 })).toBe(Math.ceil((18 * HOUR) / 3));
  });

  it('sweeps at the wanted pace again right after a window that is about to reset', () => {
    // 20 s to the reset, nothing spendable: the next round is the first of the new window.
    expect(
      paceIntervalMs({ callsPerRound: 7, remaining: 0, reserve: 0, msToReset: 20_000, minIntervalMs: 60_000 }),
    ).toBe(60_000);
    // 2 minutes left and reads to spare: no stretch beyond the reset.
    expect(
      paceIntervalMs({ callsPerRound: 7, remaining: 50, reserve: 0, msToReset: 120_000, minIntervalMs: 60_000 }),
    ).toBe(60_000);
  });
});

describe('readReserve and paceFromUsage', () => {
  it('keeps one list call per create and one status read per upload left, plus a confirming read per waiting job', () => {
    const usage = usageWith({ createJob: 200, submitData: 300, listJobs: 100, jobStatus: 400 });
    expect(readReserve('listJobs', usage, 40)).toBe(1_000);
    expect(readReserve('jobStatus', usage, 40)).toBe(900 + 40);
  });

  it('holds a blocked endpoint until its block ends', () => {
    const usage = usageWith();
    usage.listJobs.exhaustedUntil = new Date(NOW + 15 * 60_000).toISOString();
    expect(paceFromUsage('listJobs', usage, { callsPerRound: 1, jobsWaiting: 1, minIntervalMs: 60_000 }, NOW)).toBe(
      15 * 60_000,
    );
  });

  it('stretches per-job polls of many jobs by the status reads left', () => {
    // 300 jobs polled one by one, 2,400 reads spendable after 1,200 uploads' reads: 18 h × 300 / 1,200.
    const usage = usageWith({ jobStatus: 0 });
    const interval = paceFromUsage(
      'jobStatus',
      usage,
      { callsPerRound: 300, jobsWaiting: 300, minIntervalMs: 60_000 },
      NOW,
    );
    expect(interval).toBe(Math.ceil((18 * HOUR * 300) / (3_600 - 1_200 - 300)));
  });
});
