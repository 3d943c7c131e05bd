/**
 * The nightlyImport workflow, replayed in the real SDK sandbox against
 * histories built for what the recorded nights (test/workflows/histories/)
 * do not cover: a feed of 600 objects (600 child imports on a server). Each
 * test states the
 * exact commands a night must produce, and the replay fails if the workflow's
 * commands differ in kind or order, or in what they carry (activity inputs,
 * child ids and inputs, timer durations, continue-as-new input, result).
 */
import { beforeAll, describe, expect, it } from 'vitest';
import type { BudgetUsage, FeedObject, ListFeedObjectsResult } from '../../workflows/contracts/activities.js';
import {
  type NightlyFeed,
  type NightlyImportInput,
  type NightlyTally,
  objectImportWorkflowId,
} from '../../workflows/contracts/nightly.js';
import { emptyTally, importInputForObject } from '../../workflows/nightly-policy.js';
import { CHILD_STARTS_PER_RUN, LIST_PAGE_SIZE } from '../../workflows/nightly-run.js';
import { NightlyHistoryBuilder } from './child-history.js';
import type { History } from './history-builder.js';
import { asHistoryHoldsIt, bundleForReplay, type RunRecord, recordOfHistory, replay as replayWith } from './replay.js';

let code: string;

beforeAll(async () => {
  code = await bundleForReplay();
}, 60_000);

/**
 * Replays the history and reports what the workflow did: the children it
 * started (ids and inputs), its activities and timers, how it ended; each is
 * also checked against what the history records.
 */
async function replay(history: History): Promise<RunRecord> {
  const done = await replayWith(code, history, 'nightly-accounts');
  const recorded = recordOfHistory(history);
  expect(asHistoryHoldsIt(done, recorded)).toEqual(recorded);
  return done;
}

const idOf = (o: FeedObject) => objectImportWorkflowId(feed.bucket, o.key, o.etag);

const FEED_ID = 'accounts';
const feed: NightlyFeed = {
  bucket: 'crm-drops',
  prefix: 'accounts/',
  entityType: 'Account',
  listAction: 'insert',
  maxConcurrentImports: 2,
  tenant: 'acme',
};
const START = '2026-11-22T02:00:00Z';
const RESET = '2026-11-23T00:00:00.000Z';

function object(name: string): FeedObject {
  return { key: `accounts/${name}`, etag: `etag-${name}`, sizeBytes: 100, lastModified: '2026-11-21T23:00:00.000Z' };
}

function budget(remaining: number): BudgetUsage {
  const window = { used: 1200 - remaining, limit: 1200, remaining, resetsAt: RESET };
  return { createJob: window, submitData: { ...window } };
}

function night(input: Partial<NightlyImportInput> = {}) {
  return new NightlyHistoryBuilder({
    workflowType: 'nightlyImport',
    args: [{ feedId: FEED_ID, feed, ...input }],
    startTime: START,
  });
}

function page(objects: FeedObject[], nextContinuationToken?: string): { returns: ListFeedObjectsResult } {
  return { returns: nextContinuationToken ? { objects, nextContinuationToken } : { objects } };
}

const tally = (t: Partial<NightlyTally>): NightlyTally => ({ ...emptyTally(), ...t });

describe('nightlyImport replays', () => {
  it('keeps each run bounded for a large feed: continue-as-new at the first page boundary past 500 starts', async () => {
    const serial = { ...feed, maxConcurrentImports: 1 };
    const objects = Array.from({ length: 3 * LIST_PAGE_SIZE }, (_, i) => object(`${String(i).padStart(5, '0')}.csv`));
    const h = new NightlyHistoryBuilder({
      workflowType: 'nightlyImport',
      args: [{ feedId: FEED_ID, feed: serial }],
      startTime: START,
    });
    const pages = [0, 1, 2].map((p) => objects.slice(p * LIST_PAGE_SIZE, (p + 1) * LIST_PAGE_SIZE));
    // Each page's candidates are looked up first: none imported yet.
    const noneImported = (onPage: FeedObject[]) => ({ input: { workflowIds: onPage.map(idOf) } });
    h.activity('listFeedObjects', page(pages[0]!, 'page-2'))
      .activity('readImportStates', { returns: {} }, { input: noneImported(pages[0]!).input })
      .activity('readBudgetUsage', { returns: budget(1200) });
    pages.forEach((onPage, p) => {
      onPage.forEach((o, i) => {
        const ref = h.initiateChild('importFile', idOf(o), importInputForObject(FEED_ID, serial, o));
        h.childStarted(ref);
        // Once a page's last child has started, the next page is listed while that child still runs.
        if (i === onPage.length - 1 && p < 2) {
          h.activity('listFeedObjects', page(pages[p + 1]!, `page-${p + 3}`));
          h.activity('readImportStates', { returns: {} }, { input: noneImported(pages[p + 1]!).input });
        }
        h.childCompleted(ref, { jobId: i });
      });
    });
    // Three pages: 400 starts are below the per-run bound, 600 are past it.
    expect(2 * LIST_PAGE_SIZE).toBeLessThan(CHILD_STARTS_PER_RUN);
    const next = {
      feedId: FEED_ID,
      feed: serial,
      tally: tally({ started: 600, succeeded: 600 }),
      continuationToken: 'page-4',
      childStartsPerRun: CHILD_STARTS_PER_RUN,
      recentSpend: [],
    };
    const history = h.continueAsNew([next]);
    const seen = await replay(history);
    expect(seen.children).toHaveLength(600);
    expect(seen.continuedAsNew).toEqual([next]);
    // About 8 events a child: far from Temporal's history limits, so 10,000 objects take ~17 such runs.
    expect(history.events.length).toBeLessThan(10 * 600);
  });

  it('fails the replay when the workflow would start a different child than the history holds', async () => {
    const o = object('a.csv');
    const h = night()
      .activity('listFeedObjects', page([o]))
      .activity('readImportStates', { returns: {} }, { input: { workflowIds: [idOf(o)] } })
      .activity('readBudgetUsage', { returns: budget(100) });
    // The history says the night did nothing after reading the budget: the code starts a child there.
    h.startTimer(1000);
    await expect(replay(h.build())).rejects.toThrow(/nondetermin/i);
  });
});
