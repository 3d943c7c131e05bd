/**
 * A nightly feed as an operator runs it, on a real Temporal dev server: the
 * feeds file, `import-worker schedules apply` and `schedules trigger` (the
 * CLI's own handlers, on the real ScheduleClient), the real worker
 * (runWorker: nightlyImport, importFile children, listFeedObjects on s3rver)
 * and the service simulator. Triggered twice at once, then once more after
 * the night finished; or twice with overlap allowed (a trigger from the
 * Temporal UI may choose "allow all"), so two nights run side by side: each
 * object is imported exactly once. The schedule carries the operator's
 * IMPORT_JOB_TIMEOUT into every night's imports (a workflow cannot read it).
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type ScheduleDescription, ScheduleOverlapPolicy } from '@temporalio/client';
import { defaultPayloadConverter } from '@temporalio/common';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { schedulesApplyCommand, schedulesTriggerCommand } from '../../worker/cli/schedule-commands.js';
import { scheduleIdForFeed } from '../../worker/cli/schedules.js';
import type { ImportFileInput } from '../../workflows/contracts/import-input.js';
import type { NightlyImportResult } from '../../workflows/contracts/nightly.js';
import { cliContext, waitFor } from '../support/operator-actions.js';
import {
  accountsCsv,
  type OperatorStack,
  STACK_BUCKET,
  sha256,
  startOperatorStack,
} from '../support/operator-stack.js';
import { simJobs, simRequests } from '../support/sim-inspect.js';

const FEED_ID = 'accounts';
const OVERLAP_FEED_ID = 'accounts-overlap';
const OBJECTS: Record<string, Buffer> = {
  '2026-11-20.csv': accountsCsv(300_000),
  '2026-11-21.csv': accountsCsv(400_000),
  '2026-11-22.csv': accountsCsv(500_000),
};

describe('a nightly schedule triggered by the operator', () => {
  let stack: OperatorStack;
  let dir: string;
  let ctx: ReturnType<typeof cliContext>;

  beforeAll(async () => {
    // Jobs process for 2 s, so a night lasts long enough for a second one to start beside it.
    stack = await startOperatorStack({ simulator: { processingMs: 2_000 } });
    for (const prefix of ['nightly/', 'overlap/']) {
      for (const [name, body] of Object.entries(OBJECTS)) await stack.putObject(`${prefix}${name}`, body);
      await stack.putObject(`${prefix}README.txt`, Buffer.from('not a feed file\n'));
    }
    dir = mkdtempSync(join(tmpdir(), 'operator-feeds-'));
    const feedsFile = join(dir, 'feeds.json');
    const feed = (id: string, prefix: string) => ({
      id,
      bucket: STACK_BUCKET,
      prefix,
      pattern: '^\\d{4}-\\d{2}-\\d{2}\\.csv$',
      entityType: 'Account',
      listAction: 'insert',
      schedule: { time: '02:00', timeZone: 'UTC' },
    });
    writeFileSync(feedsFile, JSON.stringify({ feeds: [feed(FEED_ID, 'nightly/'), feed(OVERLAP_FEED_ID, 'overlap/')] }));
    ctx = cliContext(stack.workerEnv({ IMPORT_FEEDS_FILE: feedsFile, IMPORT_JOB_TIMEOUT: '2h' }));
    await stack.startWorker();
    await schedulesApplyCommand({}, ctx);
    expect(ctx.printed.splice(0)).toEqual([
      `created  ${scheduleIdForFeed(FEED_ID)}  (02:00 UTC)`,
      `created  ${scheduleIdForFeed(OVERLAP_FEED_ID)}  (02:00 UTC)`,
    ]);
  }, 180_000);

  afterAll(async () => {
    await stack?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  const schedule = (feedId: string) => stack.env.client.schedule.getHandle(scheduleIdForFeed(feedId));

  /** The schedule's state once the server has taken (or skipped) `triggers` actions. */
  const handled = (feedId: string, triggers: number) =>
    waitFor(async () => {
      const { info } = await schedule(feedId).describe();
      const done = info.numActionsTaken + info.numActionsSkippedOverlap;
      return done >= triggers && info.recentActions.length >= info.numActionsTaken ? info : undefined;
    }, 200);

  const nightOf = (action: ScheduleDescription['info']['recentActions'][number]) =>
    stack.env.client.workflow
      .getHandle(action.action.workflow.workflowId, undefined, {
        firstExecutionRunId: action.action.workflow.firstExecutionRunId,
      })
      .result() as Promise<NightlyImportResult>;

  /** The feed's jobs in the service: exactly one per object, completed, holding its exact bytes, sent once. */
  async function expectEachObjectImportedOnce(feedId: string, prefix: string): Promise<void> {
    const feedJobs = (await simJobs(stack.sim.baseUrl)).filter((j) =>
      j.dataImportName.includes(`${feedId}: ${prefix}`),
    );
    expect(feedJobs).toHaveLength(Object.keys(OBJECTS).length);
    const requests = await simRequests(stack.sim.baseUrl);
    for (const [name, body] of Object.entries(OBJECTS)) {
      const jobs = feedJobs.filter((j) => j.dataImportName.includes(`${prefix}${name}`));
      expect(jobs, `jobs of ${prefix}${name}`).toEqual([
        expect.objectContaining({ state: 'completed', uploads: 1, listAction: 'insert', sha256: sha256(body) }),
      ]);
      const puts = requests.filter((r) => r.path === `/import/v1/job/${jobs[0]?.id}/data`);
      expect(puts.map((r) => r.status)).toEqual([200]);
    }
  }

  it('imports each object once, whether the triggers overlap or come after the night finished', async () => {
    // The operator triggers twice in a row: the second is skipped if the first still runs.
    await schedulesTriggerCommand(FEED_ID, ctx);
    // Refused (exit 1) when the server skipped it: that is one of the two outcomes this test allows.
    await schedulesTriggerCommand(FEED_ID, ctx).catch((err: Error) => {
      if (!err.message.includes('the server skipped the run')) throw err;
    });
    const afterTwo = await handled(FEED_ID, 2);
    const firstNights = await Promise.all(afterTwo.recentActions.map(nightOf));
    expect(firstNights.reduce((n, r) => n + r.started, 0)).toBe(Object.keys(OBJECTS).length);
    for (const night of firstNights) expect(night).toMatchObject({ failedCount: 0, deferredForBudget: 0 });

    // The next trigger, after the night: everything is imported already.
    await schedulesTriggerCommand(FEED_ID, ctx);
    const afterThree = await handled(FEED_ID, 3);
    const last = await nightOf(afterThree.recentActions.at(-1)!);
    expect(last).toMatchObject({ started: 0, skippedAlreadyImported: Object.keys(OBJECTS).length, failedCount: 0 });

    await expectEachObjectImportedOnce(FEED_ID, 'nightly/');

    // Every import a night started carries the job timeout the schedule was applied with.
    const childInputs = [];
    for (const action of afterThree.recentActions) {
      const night = stack.env.client.workflow.getHandle(action.action.workflow.workflowId);
      for (const e of (await night.fetchHistory()).events ?? []) {
        const payload = e.startChildWorkflowExecutionInitiatedEventAttributes?.input?.payloads?.[0];
        if (payload) childInputs.push(defaultPayloadConverter.fromPayload<ImportFileInput>(payload));
      }
    }
    expect(childInputs).toHaveLength(Object.keys(OBJECTS).length);
    for (const input of childInputs) expect(input.jobTimeoutMs).toBe(2 * 3_600_000);
  });

  it('imports each object once when two nights run side by side (triggered twice with overlap allowed)', async () => {
    await schedule(OVERLAP_FEED_ID).trigger(ScheduleOverlapPolicy.ALLOW_ALL);
    // A scheduled run's workflow id ends in its start time to the second: a second trigger
    // within the same second would start nothing. The next second, while the first night runs:
    const first = await waitFor(async () => (await schedule(OVERLAP_FEED_ID).describe()).info.recentActions[0]);
    await waitFor(() =>
      Math.floor(Date.now() / 1000) > Math.floor(first.takenAt.getTime() / 1000) ? true : undefined,
    );
    await schedule(OVERLAP_FEED_ID).trigger(ScheduleOverlapPolicy.ALLOW_ALL);
    const info = await handled(OVERLAP_FEED_ID, 2);
    expect(info.numActionsTaken).toBe(2);
    const nights = await Promise.all(info.recentActions.map(nightOf));
    const [firstNight, secondNight] = await Promise.all(
      info.recentActions.map((a) => stack.env.client.workflow.getHandle(a.action.workflow.workflowId).describe()),
    );
    // They did run side by side.
    expect(secondNight!.startTime.getTime()).toBeLessThan(firstNight!.closeTime!.getTime());

    const objects = Object.keys(OBJECTS).length;
    expect(nights.reduce((n, r) => n + r.started, 0)).toBe(objects);
    for (const night of nights) expect(night).toMatchObject({ failedCount: 0 });
    await expectEachObjectImportedOnce(OVERLAP_FEED_ID, 'overlap/');
  });
});
