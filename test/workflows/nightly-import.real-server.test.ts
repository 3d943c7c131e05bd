/**
 * nightlyImport and the schedules command on a real Temporal server, with
 * listFeedObjects reading a real s3rver. Skipped where no server can be had
 * (see test/support/temporal-server.ts for how to enable).
 */
import path from 'node:path';
import { PutObjectCommand } from '@aws-sdk/client-s3';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { Worker } from '@temporalio/worker';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeListFeedObjects } from '../../activities/list-feed-objects.js';
import { makeReadImportStates, temporalWorkflowStatuses } from '../../activities/read-import-states.js';
import { S3Source } from '../../activities/s3/source.js';
import type { FeedConfig } from '../../temporal.config.js';
import { applySchedules, desiredSchedules } from '../../worker/cli/schedules.js';
import { type LocalS3, startLocalS3 } from '../../worker/demo/local-s3.js';
import type { BudgetUsage } from '../../workflows/contracts/activities.js';
import {
  type NightlyImportInput,
  type NightlyImportResult,
  objectImportWorkflowId,
} from '../../workflows/contracts/nightly.js';
import type { NotificationInput } from '../../workflows/contracts/notification.js';
import { createEnvironment } from '../support/temporal-server.js';

const TASK_QUEUE = 'nightly-real-server';
const BUCKET = 'feeds';
const feedInput: NightlyImportInput = {
  feedId: 'accounts',
  feed: {
    bucket: BUCKET,
    prefix: 'accounts/',
    pattern: '\\.csv$',
    entityType: 'Account',
    listAction: 'insert',
    maxConcurrentImports: 2,
    tenant: 'acme',
  },
};
const fullBudget: BudgetUsage = {
  createJob: { used: 0, limit: 1200, remaining: 1200, resetsAt: '2099-01-01T00:00:00.000Z' },
};

describe('nightlyImport on a real server', () => {
  let env: TestWorkflowEnvironment;
  let s3: LocalS3;
  let worker: Worker;
  let running: Promise<void>;
  const notifications: NotificationInput[] = [];

  beforeAll(async () => {
    env = await createEnvironment();
    s3 = await startLocalS3({ buckets: [BUCKET] });
    for (const name of ['a.csv', 'b.csv', 'broken.csv', 'c.csv', 'notes.txt']) {
      await s3.client.send(
        new PutObjectCommand({ Bucket: BUCKET, Key: `accounts/${name}`, Body: `Account Name\n${name}\n` }),
      );
    }
    worker = await Worker.create({
      connection: env.nativeConnection,
      taskQueue: TASK_QUEUE,
      workflowsPath: path.resolve(import.meta.dirname, 'stand-in-workflows.ts'),
      activities: {
        listFeedObjects: makeListFeedObjects({ s3: new S3Source(s3.client) }),
        readBudgetUsage: async () => fullBudget,
        readImportStates: makeReadImportStates({ workflows: temporalWorkflowStatuses(env.client) }),
        notify: async (n: NotificationInput) => {
          notifications.push(n);
        },
      },
    });
    running = worker.run();
  });

  afterAll(async () => {
    worker?.shutdown();
    await running;
    await s3?.close();
    await env?.teardown();
  });

  const night = (id: string) =>
    env.client.workflow.execute('nightlyImport', {
      taskQueue: TASK_QUEUE,
      workflowId: id,
      args: [feedInput],
    }) as Promise<NightlyImportResult>;

  it('imports each matching object once; the next night skips the imported ones and retries the failed one', async () => {
    const first = await night('nightly-accounts-1');
    expect(first).toMatchObject({ started: 4, succeeded: 3, skippedAlreadyImported: 0, failedCount: 1 });
    expect(first.failed[0]).toMatchObject({
      key: 'accounts/broken.csv',
      reason: 'InvalidCsvHeader: header lacks Account Domain',
    });

    const second = await night('nightly-accounts-2');
    expect(second).toMatchObject({ started: 1, succeeded: 0, skippedAlreadyImported: 3, failedCount: 1 });
    // One notification per night with failures, naming the failed file.
    const nights = notifications.filter((n) => n.kind === 'nightly-failures').map((n) => n.fields.workflowId);
    expect(nights).toEqual(['nightly-accounts-1', 'nightly-accounts-2']);
    expect(notifications[0]?.fields.firstFailures).toBe(
      'accounts/broken.csv (InvalidCsvHeader: header lacks Account Domain)',
    );
    expect(notifications[0]?.id).toMatch(/^nightly-accounts-1\/[0-9a-f-]+\/nightly-failures$/);
  });

  it('counts an import still running from an earlier night apart, and neither starts it again nor calls it imported', async () => {
    const slowFeed: NightlyImportInput = { feedId: 'slow', feed: { ...feedInput.feed, prefix: 'slow/' } };
    const childId: Record<string, string> = {};
    for (const name of ['long.csv', 'quick.csv']) {
      const key = `slow/${name}`;
      const put = await s3.client.send(
        new PutObjectCommand({ Bucket: BUCKET, Key: key, Body: `Account Name\n${name}\n` }),
      );
      childId[name] = objectImportWorkflowId(BUCKET, key, put.ETag ?? '');
    }
    const first = await env.client.workflow.start('nightlyImport', {
      taskQueue: TASK_QUEUE,
      workflowId: 'nightly-slow-1',
      args: [slowFeed],
    });
    const statusOf = temporalWorkflowStatuses(env.client).statusOf;
    while (
      (await statusOf(childId['long.csv'] ?? '')) !== 'RUNNING' ||
      (await statusOf(childId['quick.csv'] ?? '')) !== 'COMPLETED'
    ) {
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    // The night is cut short (a timeout, an operator); its abandoned child import runs on.
    await first.terminate('night cut short');

    const second = (await env.client.workflow.execute('nightlyImport', {
      taskQueue: TASK_QUEUE,
      workflowId: 'nightly-slow-2',
      args: [slowFeed],
    })) as NightlyImportResult;
    expect(second).toMatchObject({ started: 0, skippedAlreadyImported: 1, stillRunning: 1 });
    await env.client.workflow.getHandle(childId['long.csv'] ?? '').terminate('test done');
  });

  it('two feeds whose prefixes overlap import a shared object once', async () => {
    await s3.client.send(new PutObjectCommand({ Bucket: BUCKET, Key: 'shared/x.csv', Body: 'Account Name\nx\n' }));
    const feedOf = (feedId: string, prefix: string): NightlyImportInput => ({
      feedId,
      feed: { ...feedInput.feed, prefix },
    });
    const run = (id: string, input: NightlyImportInput) =>
      env.client.workflow.execute('nightlyImport', {
        taskQueue: TASK_QUEUE,
        workflowId: id,
        args: [input],
      }) as Promise<NightlyImportResult>;
    expect(await run('nightly-left-1', feedOf('left', 'shared/'))).toMatchObject({ started: 1, succeeded: 1 });
    expect(await run('nightly-right-1', feedOf('right', 'shared/x'))).toMatchObject({
      started: 0,
      skippedAlreadyImported: 1,
    });
  });

  it('schedules apply creates a schedule per feed, then finds nothing to change', async () => {
    const feed: FeedConfig = {
      id: `real-${Date.now()}`,
      bucket: BUCKET,
      prefix: 'accounts/',
      entityType: 'Account',
      listAction: 'insert',
      maxConcurrentImports: 2,
      schedule: { time: '02:00', timeZone: 'Europe/Berlin', catchupWindowMs: 3_600_000, pauseOnFailure: false },
    };
    const desired = desiredSchedules([feed], TASK_QUEUE, { tenant: 'acme', jobTimeoutMs: 86_400_000 });
    const first = await applySchedules(env.client.schedule, desired, { prune: false, dryRun: false });
    expect(first.create.map((s) => s.scheduleId)).toEqual([`nightly-${feed.id}`]);
    const again = await applySchedules(env.client.schedule, desired, { prune: false, dryRun: false });
    expect(again.unchanged.map((s) => s.scheduleId)).toEqual([`nightly-${feed.id}`]);
    const moved = desiredSchedules([{ ...feed, schedule: { ...feed.schedule, time: '03:00' } }], TASK_QUEUE, {
      tenant: 'acme',
      jobTimeoutMs: 86_400_000,
    });
    const third = await applySchedules(env.client.schedule, moved, { prune: false, dryRun: false });
    expect(third.update.map((s) => s.scheduleId)).toEqual([`nightly-${feed.id}`]);
    await env.client.schedule.getHandle(`nightly-${feed.id}`).delete();
  });
});
