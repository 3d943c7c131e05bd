/**
 * How often to read, so that reads never outrun the budget. A round of reads
 * (one sweep of the processing list, or one status poll of each job waiting
 * on polls) costs `callsPerRound`; the reads left in the window, less a
 * reserve for the calls creates and uploads make themselves (the search
 * before a create, the status read before an upload), are spread over the
 * time left until the window resets. The interval is the wanted one
 * (`minIntervalMs`) while the budget allows it, and stretches only when it
 * does not. Pure, so that the rule is tested without a clock or a service.
 */
import type { LedgerUsage } from '../../workflows/contracts/budget.js';

export interface PaceInput {
  /** Reads one round costs; 0 when nothing waits. */
  callsPerRound: number;
  /** Reads left in the window on the endpoint (the ledger's `remaining`). */
  remaining: number;
  /** Reads kept for other callers of the endpoint: rounds never spend them. */
  reserve: number;
  /** Time until the window resets. */
  msToReset: number;
  /** The interval wanted when the budget is plentiful. */
  minIntervalMs: number;
}

/**
 * The wait before the next round, or undefined when nothing waits (no round
 * at all). When the reads above the reserve cannot pay for one round, the
 * wait runs to the reset: the first round of the new window follows it.
 */
export function paceIntervalMs(p: PaceInput): number | undefined {
  if (p.callsPerRound <= 0) return undefined;
  const msToReset = Math.max(0, p.msToReset);
  const spendable = p.remaining - p.reserve;
  if (spendable < p.callsPerRound) return Math.max(p.minIntervalMs, msToReset);
  const paced = (msToReset * p.callsPerRound) / spendable;
  return Math.max(p.minIntervalMs, Math.min(msToReset, Math.ceil(paced)));
}

export interface ReserveSettings {
  /** List calls one create still makes (its search); 1 by default (a create searches at most once). */
  listCallsPerCreate: number;
  /** Status reads one upload makes before it sends. */
  statusReadsPerUpload: number;
}

export const DEFAULT_RESERVE: ReserveSettings = { listCallsPerCreate: 1, statusReadsPerUpload: 1 };

/**
 * Reads the watcher leaves for creates and uploads: what every create and
 * upload left in the window would still need, capped at what is left. The
 * status reserve also holds one confirming read per job already waiting.
 */
export function readReserve(
  endpoint: 'listJobs' | 'jobStatus',
  usage: LedgerUsage,
  jobsWaiting: number,
  settings: ReserveSettings = DEFAULT_RESERVE,
): number {
  const left = endpoint === 'listJobs' ? usage.createJob.remaining : usage.submitData.remaining;
  const per = endpoint === 'listJobs' ? settings.listCallsPerCreate : settings.statusReadsPerUpload;
  const confirms = endpoint === 'jobStatus' ? jobsWaiting : 0;
  return Math.min(usage[endpoint].remaining, left * per + confirms);
}

/**
 * The wait before the next round on `endpoint`, from the ledger's usage: a
 * block (the service's own 429) holds until it ends; otherwise paceIntervalMs.
 * `compression` > 1 (tests, the budget benchmark, which run service time that
 * much faster) shortens the time left in the window by that factor.
 */
export function paceFromUsage(
  endpoint: 'listJobs' | 'jobStatus',
  usage: LedgerUsage,
  round: { callsPerRound: number; jobsWaiting: number; minIntervalMs: number },
  nowMs: number,
  settings: ReserveSettings = DEFAULT_RESERVE,
  compression = 1,
): number | undefined {
  if (round.callsPerRound <= 0) return undefined;
  const blockedUntil = Date.parse(usage[endpoint].exhaustedUntil ?? '');
  if (blockedUntil > nowMs) return Math.max(round.minIntervalMs, blockedUntil - nowMs);
  const resetsAt = Date.parse(usage[endpoint].resetsAt);
  return paceIntervalMs({
    callsPerRound: round.callsPerRound,
    remaining: usage[endpoint].remaining,
    reserve: readReserve(endpoint, usage, round.jobsWaiting, settings),
    msToReset: Number.isNaN(resetsAt) ? 0 : (resetsAt - nowMs) / compression,
    minIntervalMs: round.minIntervalMs,
  });
}

/**
 * Status reads to spare for reads made early (a fresh wait's read of a job
 * that may have ended within seconds, a confirming read at a sweep's first
 * miss): the reads left, less every read the uploads left in the window
 * still need (the one before each sends, and the one that confirms its job's
 * end) and one confirming read per job already waiting. Early reads never
 * take what the day's imports need to finish; they stop first when the
 * budget runs short.
 */
export function statusReadsToSpare(
  usage: LedgerUsage,
  jobsWaiting: number,
  nowMs: number,
  settings: ReserveSettings = DEFAULT_RESERVE,
): number {
  const status = usage.jobStatus;
  if (Date.parse(status.exhaustedUntil ?? '') > nowMs) return 0;
  const needed = usage.submitData.remaining * (settings.statusReadsPerUpload + 1) + jobsWaiting;
  return Math.max(0, status.remaining - needed);
}
