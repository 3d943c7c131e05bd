/**
 * Nights whose listings and budget readings come from a script, run on real
 * Temporal servers with real importFile children (their import steps scripted
 * too): pages with continuation tokens, a run resumed from a carried token,
 * continue-as-new on the server's hint (a dev server configured to give it
 * early), and budget waits until the window resets or a short block ends,
 * and admission by what finished children spent (on the time-skipping
 * server, where those hours pass at once; the nightly reads the budget
 * through an activity, so no ledger Update is involved).
 *
 * With RECORD_HISTORIES_DIR set (`npm run record:histories`), each night
 * writes its history as a replay fixture (test/workflows/recorded-histories.ts).
 */
import { Context } from '@temporalio/activity';
import { ApplicationFailure, defaultPayloadConverter } from '@temporalio/common';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type {
  BudgetUsage,
  FeedObject,
  ListFeedObjectsInput,
  ListFeedObjectsResult,
} from '../../workflows/contracts/activities.js';
import {
  type NightlyImportInput,
  type NightlyTally,
  objectImportWorkflowId,
} from '../../workflows/contracts/nightly.js';
import type { nightlyImport } from '../../workflows/nightly-import.js';
import { emptyTally } from '../../workflows/nightly-policy.js';
import { createDevServerWith, createEnvironment, createTimeSkippingEnvironment } from '../support/temporal-server.js';
import { bundleWorkflows } from '../support/workflow-bundle.js';
import { scriptedActivities, WorkflowHarness } from './real-server-harness.js';
import { type RecordingServer, recordHistory } from './recorded-histories.js';

const feed: NightlyImportInput['feed'] = {
  bucket: 'crm-drops',
  prefix: 'accounts/',
  entityType: 'Account',
  listAction: 'insert',
  maxConcurrentImports: 2,
  tenant: 'acme',
};

/** Child ids derive from bucket, key and ETag alone: each test on a server names objects of its own. */
function object(name: string): FeedObject {
  return { key: `accounts/${name}`, etag: `etag-${name}`, sizeBytes: 100, lastModified: '2026-11-21T23:00:00.000Z' };
}

/** The createJob and submitData windows with `remaining` calls left, resetting in two hours. */
function budget(remaining: number): BudgetUsage {
  const resetsAt = new Date(Date.now() + 2 * 3_600_000).toISOString();
  const window = { used: 1200 - remaining, limit: 1200, remaining, resetsAt };
  return { createJob: window, submitData: { ...window } };
}

const tally = (t: Partial<NightlyTally>): NightlyTally => ({ ...emptyTally(), ...t });

/** A budget reading as of the server's clock (the time-skipping server's runs ahead of the test's). */
type BudgetReading = BudgetUsage | ((serverNowMs: number) => BudgetUsage);

/**
 * Nightly activities from a script: pages by continuation token, budget
 * readings in order (each read's server time is kept: when the night woke).
 */
function scriptedNight(pages: Record<string, ListFeedObjectsResult>, budgets: BudgetReading[]) {
  const imports = scriptedActivities({});
  const listed: (string | undefined)[] = [];
  const readAtMs: number[] = [];
  const activities = {
    ...imports.activities,
    listFeedObjects: async (input: ListFeedObjectsInput) => {
      listed.push(input.continuationToken);
      const page = pages[input.continuationToken ?? 'first'];
      if (!page) throw new Error(`no page for token ${input.continuationToken}`);
      return page;
    },
    readBudgetUsage: async () => {
      const serverNowMs = Context.current().info.currentAttemptScheduledTimestampMs;
      readAtMs.push(serverNowMs);
      const reading = budgets.shift() ?? budget(1200);
      return typeof reading === 'function' ? reading(serverNowMs) : reading;
    },
  };
  return { activities, listed, budgetReads: () => readAtMs.length, readAtMs };
}

function onServer(server: RecordingServer, create: () => Promise<TestWorkflowEnvironment>, prefix: string) {
  const ctx = {} as { harness: WorkflowHarness };
  let env: TestWorkflowEnvironment | undefined;
  beforeAll(async () => {
    env = await create();
    ctx.harness = new WorkflowHarness(env, await bundleWorkflows(), prefix);
  }, 120_000);
  afterAll(async () => {
    await env?.teardown();
  });

  /** Runs one night to its end and records it as fixture `name`. */
  const night = (name: string, script: ReturnType<typeof scriptedNight>, input: Partial<NightlyImportInput> = {}) =>
    ctx.harness.withWorkers(script.activities, async (taskQueue) => {
      const handle = await ctx.harness.env.client.workflow.start<typeof nightlyImport>('nightlyImport', {
        taskQueue,
        workflowId: `${taskQueue}-night`,
        args: [{ feedId: 'accounts', feed, ...input }],
      });
      const firstRunId = (await handle.describe()).runId;
      const result = await handle.result();
      await recordHistory(ctx.harness.env.client, {
        name,
        scenario: `nightly: ${name}`,
        server,
        workflowId: handle.workflowId,
        runId: firstRunId,
      });
      const firstRun = await ctx.harness.env.client.workflow.getHandle(handle.workflowId, firstRunId).describe();
      const lastRun = await ctx.harness.env.client.workflow.getHandle(handle.workflowId).fetchHistory();
      const started = lastRun.events?.[0]?.workflowExecutionStartedEventAttributes?.input?.payloads?.[0];
      const lastRunInput = started ? defaultPayloadConverter.fromPayload<NightlyImportInput>(started) : undefined;
      return { result, firstRunStatus: firstRun.status.name, lastRunInput };
    });
  return night;
}

describe('nightlyImport pages on the dev server', () => {
  const night = onServer('dev-server', createEnvironment, 'night-dev');

  it('lists the next page with the continuation token and imports it in the same run', async () => {
    const script = scriptedNight(
      {
        first: { objects: [object('a.csv')], nextContinuationToken: 'token-2' },
        'token-2': { objects: [object('b.csv')] },
      },
      [],
    );
    const { result } = await night('nightly-two-pages', script);
    expect(script.listed).toEqual([undefined, 'token-2']);
    expect(result).toEqual(tally({ started: 2, succeeded: 2 }));
  });

  it('continues as new at the child-start threshold its own input carries, whatever the current default', async () => {
    const pages = {
      first: { objects: [object('t1.csv')], nextContinuationToken: 'token-2' },
      'token-2': { objects: [object('t2.csv')], nextContinuationToken: 'token-3' },
      'token-3': { objects: [object('t3.csv')] },
    };
    const script = scriptedNight(pages, []);
    const input = { feed: { ...feed, maxConcurrentImports: 1 }, childStartsPerRun: 2 };
    const { result, firstRunStatus } = await night('nightly-threshold-from-input', script, input);
    expect(firstRunStatus).toBe('CONTINUED_AS_NEW');
    expect(script.listed).toEqual([undefined, 'token-2', 'token-3']);
    expect(result).toEqual(tally({ started: 3, succeeded: 3 }));
  });

  it('resumes from the carried token and tally', async () => {
    const carried = tally({ started: 500, succeeded: 499, skippedAlreadyImported: 3, failedCount: 1 });
    const script = scriptedNight({ 'token-2': { objects: [object('z.csv')] } }, []);
    const { result } = await night('nightly-resumed-from-token', script, {
      tally: carried,
      continuationToken: 'token-2',
    });
    expect(script.listed).toEqual(['token-2']);
    expect(result).toEqual({ ...carried, started: 501, succeeded: 500 });
  });
});

describe('nightlyImport budget waits on the time-skipping server', () => {
  const night = onServer('time-skipping-server', createTimeSkippingEnvironment, 'night-skip');

  it('waits for the daily window to reset when the budget is spent, then starts the deferred object', async () => {
    const script = scriptedNight({ first: { objects: [object('2026-11-22.csv')] } }, [budget(0), budget(1200)]);
    const { result } = await night('nightly-budget-wait', script);
    expect(result).toEqual(tally({ started: 1, succeeded: 1, deferredForBudget: 1 }));
  });

  it('starts only as many children as the remaining budget allows, then waits for the reset', async () => {
    // One call left: a starts. Nothing left while a runs: the night waits for a to end and reads again;
    // still nothing and no child running: it waits for the reset, then starts b.
    const script = scriptedNight({ first: { objects: [object('a.csv'), object('b.csv')] } }, [
      budget(1),
      budget(0),
      budget(0),
      budget(1200),
    ]);
    const { result } = await night('nightly-budget-runs-out', script);
    expect(script.budgetReads()).toBe(4);
    expect(result).toEqual(tally({ started: 2, succeeded: 2, deferredForBudget: 1 }));
  });

  const MIN = 60_000;
  /** The service's daily-limit 429 blocked creates for 15 minutes; the count has 1,100 left and resets in 6 h. */
  const blockedCreates = (nowMs: number): BudgetUsage => {
    const resetsAt = new Date(nowMs + 6 * 60 * MIN).toISOString();
    const window = { used: 100, limit: 1200, remaining: 1100, resetsAt };
    return { createJob: { ...window, exhaustedUntil: new Date(nowMs + 15 * MIN).toISOString() }, submitData: window };
  };

  it('a nightly after a short block resumes when the block ends, not at the reset', async () => {
    const script = scriptedNight({ first: { objects: [object('after-block.csv')] } }, [blockedCreates, budget(1200)]);
    const { result } = await night('nightly-after-short-block', script);
    expect(result).toEqual(tally({ started: 1, succeeded: 1, deferredForBudget: 1 }));
    const [first = 0, second = 0] = script.readAtMs;
    // Woke at the block's end (server time), not at the reset 6 h on (the margin: a loaded machine's stalls).
    expect(second - first).toBeGreaterThanOrEqual(15 * MIN);
    expect(second - first).toBeLessThan(60 * MIN);
  });

  it('a nightly whose child still runs when a short block lands resumes when the block ends, not when the child does', async () => {
    // One create left: a starts. Then the block, while a waits out its own (three-hour) budget wait; then the budget is back.
    const script = scriptedNight({ first: { objects: [object('hold-a.csv'), object('hold-b.csv')] } }, [
      budget(1),
      blockedCreates,
      budget(1200),
    ]);
    const holdA = objectImportWorkflowId(feed.bucket, 'accounts/hold-a.csv', 'etag-hold-a.csv');
    const awaitJobCompletion = script.activities.awaitJobCompletion;
    let held = false;
    script.activities.awaitJobCompletion = async (input) => {
      const info = Context.current().info;
      if (info.workflowExecution?.workflowId !== holdA || held) return awaitJobCompletion(input);
      held = true;
      const resetsAt = new Date(info.currentAttemptScheduledTimestampMs + 3 * 60 * MIN).toISOString();
      throw ApplicationFailure.create({
        type: 'BudgetExhausted',
        message: 'status reads kept for uploads',
        details: [{ endpoint: 'jobStatus', resetsAt }],
        nonRetryable: true,
      });
    };
    const { result } = await night('nightly-block-while-child-runs', script);
    expect(result).toEqual(tally({ started: 2, succeeded: 2 }));
    const [, second = 0, third = 0] = script.readAtMs;
    // b started at the block's end, not three hours later when a ended.
    expect(third - second).toBeGreaterThanOrEqual(15 * MIN);
    expect(third - second).toBeLessThan(60 * MIN);
  });

  it("admits by what the night's finished children spent, not by the 60-poll estimate", async () => {
    // 100 status reads left: the estimate admits a (60), then no one (40 < 60) until the reset.
    // a spent 4 (the scripted upload's read and 3 polls): 40 reads pay for b at once.
    const reads = (remaining: number): BudgetUsage => ({
      ...budget(1200),
      jobStatus: { used: 3600 - remaining, limit: 3600, remaining, resetsAt: budget(1200).createJob?.resetsAt ?? '' },
    });
    const script = scriptedNight({ first: { objects: [object('spend-a.csv'), object('spend-b.csv')] } }, [
      reads(100),
      reads(40),
    ]);
    const { result } = await night('nightly-admits-by-spend', script, {
      feed: { ...feed, maxConcurrentImports: 1 },
    });
    expect(result).toEqual(tally({ started: 2, succeeded: 2 }));
    expect(script.budgetReads()).toBe(2);
  });

  it("carries the finished children's spend into its next run", async () => {
    const pages = {
      first: { objects: [object('carry-1.csv')], nextContinuationToken: 'token-2' },
      'token-2': { objects: [object('carry-2.csv')] },
    };
    const { result, firstRunStatus, lastRunInput } = await night('nightly-carries-spend', scriptedNight(pages, []), {
      childStartsPerRun: 1,
    });
    expect(firstRunStatus).toBe('CONTINUED_AS_NEW');
    expect(result).toEqual(tally({ started: 2, succeeded: 2 }));
    // The scripted child: a search and a create, an upload and its status read, 3 polls.
    expect(lastRunInput?.recentSpend).toEqual([{ listJobs: 1, createJob: 1, submitData: 1, jobStatus: 4 }]);
  });
});

describe('nightlyImport on a dev server that suggests continue-as-new early', () => {
  const night = onServer(
    'dev-server',
    () => createDevServerWith({ 'limit.historyCount.suggestContinueAsNew': 40 }),
    'night-hint',
  );

  it('continues as new at a page boundary when the server suggests it, carrying tally and token', async () => {
    const pages = {
      first: { objects: [object('a.csv'), object('b.csv')], nextContinuationToken: 'token-2' },
      'token-2': { objects: [object('c.csv'), object('d.csv')], nextContinuationToken: 'token-3' },
      'token-3': { objects: [object('e.csv')] },
    };
    const script = scriptedNight(pages, []);
    // The hint comes once the history holds 40 events, in the second page: the run ends at that page's end.
    const { result, firstRunStatus } = await night('nightly-continued-at-hint', script);
    expect(firstRunStatus).toBe('CONTINUED_AS_NEW');
    expect(script.listed).toEqual([undefined, 'token-2', 'token-3']);
    expect(result).toEqual(tally({ started: 5, succeeded: 5 }));
  });
});
