/**
 * The budget benchmark's steady state: what a day at a given import rate costs
 * on each budgeted endpoint, from per-import counts measured in a compressed
 * run. The watcher's list calls are a cost per sweep, not per import, so they
 * are modelled from the measured sweep shape (pages per sweep at a given
 * number of jobs in processing) and the watcher's own pacing rule
 * (activities/watch/pace.ts): it spends only what creates leave, so what it
 * changes is the delay, not the rate.
 */

import { paceIntervalMs } from '../../activities/watch/pace.js';
import type { BudgetedEndpoint } from '../../workflows/contracts/endpoints.js';
import { SPEC_BUDGET_SETTINGS } from '../support/in-memory-budget-gate.js';

export const DAY_MS = 86_400_000;
export const TARGET_PER_DAY = 1_200;
const PER_PAGE = 50;
const MIN_SWEEP_MS = 60_000;
/**
 * A listed job is told at the first sweep that misses it (job-watcher.ts), within an interval of its end:
 * when every job in processing fits on one short page, and on more pages while a confirming status read
 * can be spared. At the sustained rate one can all day: the status budget holds 3 reads per import, the
 * upload's and the confirm (needed) and one to spare, which the early read or this confirm, made sooner,
 * takes. (Two misses, one to two intervals, only when the day runs ahead of its budget.)
 */
const SWEEPS_TO_LEARN = { p50: 0.5, p99: 0.99 };

export type PerImport = Partial<Record<BudgetedEndpoint, number>>;

export interface SteadyState {
  /** Imports a day the card's budgets sustain, at most the create/upload limit. */
  importsPerDay: number;
  binding: BudgetedEndpoint;
  /** At that rate: jobs in processing at once, pages per sweep, the paced sweep interval. */
  processingAtOnce: number;
  pagesPerSweep: number;
  sweepIntervalMs: number;
  /** List calls a day the watcher spends at that rate. */
  watcherListPerDay: number;
  /** Delay from a job's end to its import knowing it (the watcher's sweeps, not the confirming read). */
  delayMs: { p50: number; p99: number };
}

/** Pages one sweep reads with `n` jobs in processing: full pages, then the short or empty last one. */
export function pagesPerSweep(n: number): number {
  return Math.floor(n / PER_PAGE) + 1;
}

export function steadyState(perImport: PerImport, processingMs: number): SteadyState {
  // Every endpoint but the watcher's list share: rate = limit / cost per import.
  let best = { rate: TARGET_PER_DAY, binding: 'createJob' as BudgetedEndpoint };
  for (const [endpoint, n] of Object.entries(perImport) as [BudgetedEndpoint, number][]) {
    if (!n) continue;
    const rate = SPEC_BUDGET_SETTINGS.limits[endpoint] / n;
    if (rate < best.rate) best = { rate, binding: endpoint };
  }
  // Counts per import are averages (sums of 1/n): a hair under a whole number must not lose an import.
  const rate = Math.floor(best.rate + 1e-6);
  const processingAtOnce = Math.max(1, Math.ceil((rate * processingMs) / DAY_MS));
  const pages = pagesPerSweep(processingAtOnce);
  const listLimit = SPEC_BUDGET_SETTINGS.limits.listJobs;
  const createLists = rate * (perImport.listJobs ?? 0);
  // What the watcher may spend over a whole day: the list budget less what creates take (their reserve).
  const interval =
    paceIntervalMs({
      callsPerRound: pages,
      remaining: listLimit,
      reserve: Math.min(listLimit, createLists),
      msToReset: DAY_MS,
      minIntervalMs: MIN_SWEEP_MS,
    }) ?? MIN_SWEEP_MS;
  return {
    importsPerDay: rate,
    binding: best.binding,
    processingAtOnce,
    pagesPerSweep: pages,
    sweepIntervalMs: interval,
    watcherListPerDay: Math.floor(DAY_MS / interval) * pages,
    delayMs: delayMs(SWEEPS_TO_LEARN, interval),
  };
}

function delayMs(sweeps: { p50: number; p99: number }, intervalMs: number): { p50: number; p99: number } {
  return { p50: sweeps.p50 * intervalMs, p99: sweeps.p99 * intervalMs };
}
