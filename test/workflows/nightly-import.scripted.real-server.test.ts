/**
 * Nights whose listings and budget readings come from a script, run on real
 * Temporal servers with real importFile children (their import steps scripted
 * too): pages with continuation tokens, a run resumed from a carried token,
 * continue-as-new on the server's hint (a dev server configured to give it
 * early), and budget waits until the window resets (on the time-skipping
 * server, where those hours pass at once; the nightly reads the budget
 * through an activity, so no ledger Update is involved).
 *
 * With RECORD_HISTORIES_DIR set (`npm run record:histories`), each night
 * writes its history as a replay fixture (test/workflows/recorded-histories.ts).
 */
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type {
  BudgetUsage,
  FeedObject,
  ListFeedObjectsInput,
  ListFeedObjectsResult,
} from '../../workflows/contracts/activities.js';
import type { NightlyImportInput, NightlyTally } from '../../workflows/contracts/nightly.js';
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

/** Nightly activities from a script: pages by continuation token, budget readings in order. */
function scriptedNight(pages: Record<string, ListFeedObjectsResult>, budgets: BudgetUsage[]) {
  const imports = scriptedActivities({});
  const listed: (string | undefined)[] = [];
  let reads = 0;
  const activities = {
    ...imports.activities,
    listFeedObjects: async (input: ListFeedObjectsInput) => {
      listed.push(input.continuationToken);
      const page = pages[input.continuationToken ?? 'first'];
      if (!page) throw new Error(`no page for token ${input.continuationToken}`);
      return page;
    },
    readBudgetUsage: async () => {
      reads += 1;
      return budgets.shift() ?? budget(1200);
    },
  };
  return { activities, listed, budgetReads: () => reads };
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
      return { result, firstRunStatus: firstRun.status.name };
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
