/**
 * The nightlyImport workflow's pure decisions: the night's tally, what importFile
 * input a feed object becomes, and how many child imports the daily budget
 * allows now. Its contract (input, result, ids) is in contracts/nightly.ts.
 * Pure code: it runs in the workflow sandbox and the tests alike.
 */
import type { BudgetUsage, FeedObject } from './contracts/activities.js';
import type { ImportFileInput } from './contracts/import-input.js';
import { feedObjectWorkflowId, type NightlyFailure, type NightlyFeed, type NightlyTally } from './contracts/nightly.js';

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
    // The retry next night is the same import of the same object version: it picks up the
    // earlier child's job (unless the service marked it failed) instead of importing it twice.
    jobScope: feedObjectWorkflowId(feedId, feed.bucket, object.key, object.etag),
  };
  if (feed.importSource !== undefined) input.importSource = feed.importSource;
  if (feed.activityTypeId !== undefined) input.activityTypeId = feed.activityTypeId;
  if (feed.fieldMappings !== undefined) input.fieldMappings = feed.fieldMappings;
  if (feed.jobTimeoutMs !== undefined) input.jobTimeoutMs = feed.jobTimeoutMs;
  return input;
}

/**
 * What one child import spends of each daily budget: a job, an upload, and
 * its status polls. The polls are an estimate (an hour of polling at the
 * slowest rate); a child that needs more waits for the budget itself. Runs
 * recorded before polls were counted leave them out.
 */
export const CALLS_PER_IMPORT = { createJob: 1, submitData: 1, jobStatus: 60 } as const;
export const CALLS_PER_IMPORT_WITHOUT_POLLS = { createJob: 1, submitData: 1 } as const;

interface ImportAllowance {
  /** How many more child imports may start now; Infinity when the ledger tracks none of the endpoints. */
  allowed: number;
  /** When the tightest spent window reopens (ms since epoch); set when allowed is 0. */
  reopensAtMs?: number;
}

/**
 * How many child imports can start now without overrunning a daily budget.
 * Every child still running may spend one more call of each endpoint, so they
 * are subtracted: an overestimate would only make children wait for the
 * budget themselves, but an honest count keeps them from piling up.
 */
export function importAllowance(
  usage: BudgetUsage,
  runningChildren: number,
  nowMs: number,
  options: { countPolls: boolean } = { countPolls: true },
): ImportAllowance {
  let allowed = Number.POSITIVE_INFINITY;
  let reopensAtMs: number | undefined;
  const costs: Record<string, number> = options.countPolls ? CALLS_PER_IMPORT : CALLS_PER_IMPORT_WITHOUT_POLLS;
  for (const [endpoint, cost] of Object.entries(costs)) {
    const window = usage[endpoint];
    if (!window) continue;
    const refusedUntilMs = window.exhaustedUntil ? Date.parse(window.exhaustedUntil) : Number.NaN;
    const refused = refusedUntilMs > nowMs;
    const left = refused ? 0 : Math.max(0, Math.floor((window.remaining - runningChildren * cost) / cost));
    if (left < allowed) allowed = left;
    if (left === 0) {
      const reopens = Math.max(Date.parse(window.resetsAt), refused ? refusedUntilMs : 0);
      reopensAtMs = reopensAtMs === undefined ? reopens : Math.max(reopensAtMs, reopens);
    }
  }
  return allowed === 0 ? { allowed, reopensAtMs } : { allowed };
}
