/**
 * The nightlyImport workflow's pure decisions: the night's tally, what importFile
 * input a feed object becomes, what a child import costs (its recent siblings'
 * spend), and how many child imports the daily budget allows now. Its contract (input, result, ids) is in contracts/nightly.ts.
 * Pure code: it runs in the workflow sandbox and the tests alike.
 */
import type { BudgetUsage, FeedObject } from './contracts/activities.js';
import { BUDGETED_ENDPOINT_NAMES, isBudgetedEndpoint } from './contracts/endpoints.js';
import type { ImportFileInput } from './contracts/import-input.js';
import type { ImportSpend, NightlyFailure, NightlyFeed, NightlyTally } from './contracts/nightly.js';

/** Keeps the result (and the continue-as-new input) far below Temporal's payload limit. */
export const MAX_LISTED_FAILURES = 100;
const MAX_REASON_LENGTH = 500;
const MAX_IMPORT_NAME_LENGTH = 200;

export function emptyTally(): NightlyTally {
  return {
    started: 0,
    skippedAlreadyImported: 0,
    succeeded: 0,
    failed: [],
    failedCount: 0,
    deferredForBudget: 0,
    stillRunning: 0,
  };
}

export function recordFailure(tally: NightlyTally, failure: NightlyFailure): void {
  tally.failedCount += 1;
  if (tally.failed.length < MAX_LISTED_FAILURES) {
    tally.failed.push({ ...failure, reason: failure.reason.slice(0, MAX_REASON_LENGTH) });
  }
}

/** The job name shows the feed and the key; a long key keeps its end, where the file name is. */
export function nightlyImportName(feedId: string, key: string): string {
  const name = `nightly ${feedId}: ${key}`;
  return name.length <= MAX_IMPORT_NAME_LENGTH
    ? name
    : `${name.slice(0, 40)}…${key.slice(-(MAX_IMPORT_NAME_LENGTH - 41))}`;
}

export function importInputForObject(feedId: string, feed: NightlyFeed, object: FeedObject): ImportFileInput {
  const input: ImportFileInput = {
    source: { bucket: feed.bucket, key: object.key },
    dataImportName: nightlyImportName(feedId, object.key),
    entityType: feed.entityType,
    listAction: feed.listAction,
    tenant: feed.tenant,
    // Unattended: a failed object fails its child, and the next night retries it.
    onFailure: 'fail',
    trigger: 'schedule',
  };
  if (feed.importSource !== undefined) input.importSource = feed.importSource;
  if (feed.activityTypeId !== undefined) input.activityTypeId = feed.activityTypeId;
  if (feed.fieldMappings !== undefined) input.fieldMappings = feed.fieldMappings;
  if (feed.rows !== undefined) input.rows = feed.rows;
  if (feed.jobTimeoutMs !== undefined) input.jobTimeoutMs = feed.jobTimeoutMs;
  return input;
}

/**
 * Before any child of the night has finished, what one is assumed to cost:
 * the job, the upload, an hour of polling at the slowest rate (as if the
 * watcher had given up on it), and one search (a create whose answer was
 * lost). Conservative: an overestimate only makes the night wait for a
 * running child; the first finished one replaces it with what it spent.
 */
export const DEFAULT_CALLS_PER_IMPORT: ImportSpend = { createJob: 1, submitData: 1, jobStatus: 60, listJobs: 1 };
/** Admission follows the spend of this many most recently finished children. */
export const RECENT_IMPORTS = 20;
/**
 * Every new child needs its own job and upload: a finished child that reused
 * an earlier night's job must not make the next ones look free.
 */
const MIN_CALLS_PER_IMPORT: ImportSpend = { createJob: 1, submitData: 1 };

/** The budgeted calls a finished importFile reports in its result's apiCalls; undefined when it reports none. */
export function spendOfResult(result: unknown): ImportSpend | undefined {
  const apiCalls = (result as { apiCalls?: unknown } | undefined)?.apiCalls;
  if (typeof apiCalls !== 'object' || apiCalls === null) return undefined;
  const spend: ImportSpend = {};
  for (const [endpoint, n] of Object.entries(apiCalls)) {
    if (isBudgetedEndpoint(endpoint) && typeof n === 'number' && Number.isFinite(n) && n > 0) spend[endpoint] = n;
  }
  return spend;
}

/** `recent` with `spend` added, the oldest dropped past RECENT_IMPORTS. */
export function rememberSpend(recent: readonly ImportSpend[], spend: ImportSpend): ImportSpend[] {
  return [...recent, spend].slice(-RECENT_IMPORTS);
}

/**
 * Calls per import on each budgeted endpoint: the mean of the recent
 * children's spend (list calls included: a create's search), never below a
 * job and an upload; the conservative default while none has finished.
 */
export function callsPerImport(recent: readonly ImportSpend[]): ImportSpend {
  if (recent.length === 0) return { ...DEFAULT_CALLS_PER_IMPORT };
  const costs: ImportSpend = { ...MIN_CALLS_PER_IMPORT };
  for (const endpoint of BUDGETED_ENDPOINT_NAMES) {
    const mean = recent.reduce((sum, s) => sum + (s[endpoint] ?? 0), 0) / recent.length;
    const cost = Math.max(mean, costs[endpoint] ?? 0);
    if (cost > 0) costs[endpoint] = cost;
  }
  return costs;
}

interface ImportAllowance {
  /** How many more child imports may start now; Infinity when the ledger tracks none of the endpoints. */
  allowed: number;
  /** When the tightest spent window reopens (ms since epoch); set when allowed is 0. */
  reopensAtMs?: number;
}

/**
 * How many child imports can start now without overrunning a daily budget.
 * Every child still running may spend one more import's worth of each
 * endpoint, so they are subtracted: an overestimate would only make children
 * wait for the budget themselves, but an honest count keeps them from piling up.
 * A block (the service's own 429) on an endpoint with calls left reopens when
 * the block ends, not at the reset.
 */
export function importAllowance(
  usage: BudgetUsage,
  runningChildren: number,
  nowMs: number,
  costs: ImportSpend,
): ImportAllowance {
  let allowed = Number.POSITIVE_INFINITY;
  let reopensAtMs: number | undefined;
  for (const [endpoint, cost] of Object.entries(costs) as [string, number | undefined][]) {
    const window = usage[endpoint];
    if (!window || cost === undefined || !(cost > 0)) continue;
    const refusedUntilMs = window.exhaustedUntil ? Date.parse(window.exhaustedUntil) : Number.NaN;
    const refused = refusedUntilMs > nowMs;
    const countLeft = Math.max(0, Math.floor((window.remaining - runningChildren * cost) / cost));
    const left = refused ? 0 : countLeft;
    if (left < allowed) allowed = left;
    if (left === 0) {
      const reset = Date.parse(window.resetsAt);
      // A short block over calls still counted as left ends before the reset: that is when they reopen.
      const reopens = refused && countLeft > 0 ? refusedUntilMs : Math.max(reset, refused ? refusedUntilMs : 0);
      reopensAtMs = reopensAtMs === undefined ? reopens : Math.max(reopensAtMs, reopens);
    }
  }
  return allowed === 0 ? { allowed, reopensAtMs } : { allowed };
}
