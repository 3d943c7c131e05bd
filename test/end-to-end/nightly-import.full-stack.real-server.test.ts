/**
 * Two nights of one feed on the Temporal dev server with the whole product:
 * the worker as `npm start` runs it (runWorker: every activity real, the
 * budget ledger), s3rver holding the feed, the service simulator. The nights
 * start real importFile children; the second skips what the first imported.
 *
 * With RECORD_HISTORIES_DIR set (`npm run record:histories`), both nights
 * write their histories as replay fixtures (test/workflows/recorded-histories.ts).
 */
import { randomUUID } from 'node:crypto';
import { PutObjectCommand } from '@aws-sdk/client-s3';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../temporal.config.js';
import { type LocalS3, S3RVER_CREDENTIALS, startLocalS3 } from '../../worker/demo/local-s3.js';
import { runWorker } from '../../worker/process/run-worker.js';
import type { NightlyImportInput } from '../../workflows/contracts/nightly.js';
import type { nightlyImport } from '../../workflows/nightly-import.js';
import { DEMO_TOKENS, type Simulator, startSimulator } from '../simulator/server.js';
import { createEnvironment } from '../support/temporal-server.js';
import { recordHistory } from '../workflows/recorded-histories.js';

const BUCKET = 'crm-drops';
const TENANT = 'nightly';

describe('two nights of a feed on the dev server, the whole product', () => {
  let env: TestWorkflowEnvironment;
  let s3: LocalS3;
  let sim: Simulator;
  let stopWorker: AbortController;
  let worker: Promise<void>;
  let taskQueue: string;

  beforeAll(async () => {
    env = await createEnvironment();
    s3 = await startLocalS3({ buckets: [BUCKET] });
    sim = await startSimulator({ processingMs: 100 });
    process.env.AWS_ACCESS_KEY_ID = S3RVER_CREDENTIALS.accessKeyId;
    process.env.AWS_SECRET_ACCESS_KEY = S3RVER_CREDENTIALS.secretAccessKey;
    taskQueue = `nightly-${randomUUID()}`;
    const config = loadConfig(
      {
        COMPANY_DATA_BASE_URL: sim.baseUrl,
        COMPANY_DATA_TOKEN: DEMO_TOKENS.importer,
        S3_ENDPOINT: s3.endpoint,
        IMPORT_TASK_QUEUE: taskQueue,
        IMPORT_TENANT: TENANT,
        IMPORT_POLL_SCHEDULE: '100ms,200ms',
        WORKER_METRICS_PORT: '0',
      },
      { needsService: true },
    );
    stopWorker = new AbortController();
    worker = runWorker({
      config: { ...config, temporal: { ...config.temporal, namespace: env.namespace ?? 'default' } },
      connection: env.nativeConnection,
      client: env.client,
      signal: stopWorker.signal,
    });
  }, 180_000);

  afterAll(async () => {
    stopWorker?.abort();
    await worker;
    await sim?.close();
    await s3?.close();
    await env?.teardown();
  });

  const put = (key: string, body: string) =>
    s3.client.send(new PutObjectCommand({ Bucket: BUCKET, Key: `accounts/${key}`, Body: body }));
  const feedInput: NightlyImportInput = {
    feedId: 'accounts',
    feed: {
      bucket: BUCKET,
      prefix: 'accounts/',
      pattern: '\\.csv$',
      entityType: 'Account',
      listAction: 'insert',
      maxConcurrentImports: 2,
      tenant: TENANT,
    },
  };

  async function night(name: string) {
    const handle = await env.client.workflow.start<typeof nightlyImport>('nightlyImport', {
      taskQueue,
      workflowId: `nightly-accounts-${name}-${randomUUID()}`,
      args: [feedInput],
    });
    const result = await handle.result();
    await recordHistory(env.client, {
      name: `nightly-${name}`,
      scenario: `nightly: ${name}`,
      server: 'dev-server',
      workflowId: handle.workflowId,
    });
    return result;
  }

  it('imports each new object once, lists the failed one, and the next night imports only what is new', async () => {
    const csv = (n: number) => `Account Name,Account Domain\nCompany ${n},company-${n}.example.com\n`;
    await put('a.csv', csv(1));
    await put('b.csv', csv(2));
    await put('c.csv', csv(3));
    await put('empty.csv', '');
    await put('notes.txt', 'not a feed file');

    const first = await night('first-night');
    expect(first).toMatchObject({ started: 4, succeeded: 3, skippedAlreadyImported: 0, failedCount: 1 });
    expect(first.failed[0]).toMatchObject({ key: 'accounts/empty.csv' });
    expect(first.failed[0]?.reason).toMatch(/^EmptyFile: /);
    expect(sim.jobs()).toHaveLength(3);

    await put('d.csv', csv(4));
    const second = await night('second-night');
    // a, b and c were imported; the empty file is tried again (its import failed) and d is new.
    expect(second).toMatchObject({ started: 2, succeeded: 1, skippedAlreadyImported: 3, failedCount: 1 });
    expect(sim.jobs()).toHaveLength(4);
    expect(sim.jobs().every((job) => job.uploads === 1 && job.state === 'completed')).toBe(true);
  }, 120_000);
});
