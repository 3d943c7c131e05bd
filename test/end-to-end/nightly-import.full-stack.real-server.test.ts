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
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { NightlyImportInput } from '../../workflows/contracts/nightly.js';
import type { nightlyImport } from '../../workflows/nightly-import.js';
import type { Simulator } from '../simulator/server.js';
import { type FullStack, startFullStack } from '../support/full-stack.js';
import { recordHistory } from '../workflows/recorded-histories.js';

const BUCKET = 'crm-drops';
const TENANT = 'nightly';

describe('two nights of a feed on the dev server, the whole product', () => {
  let stack: FullStack;
  let env: TestWorkflowEnvironment;
  let sim: Simulator;
  let taskQueue: string;

  beforeAll(async () => {
    stack = await startFullStack({
      bucket: BUCKET,
      name: 'nightly',
      simulator: { processingMs: 100 },
      workerEnv: { IMPORT_TENANT: TENANT, IMPORT_POLL_SCHEDULE: '100ms,200ms' },
    });
    ({ env, sim, taskQueue } = stack);
    await stack.startWorker();
  }, 180_000);

  afterAll(() => stack?.close());

  const put = (key: string, body: string) => stack.putObject(`accounts/${key}`, body);
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
