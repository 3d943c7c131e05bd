/**
 * `import-worker status` on a real Temporal dev server: a finished nightly
 * run shows its tally and its failures (not an import's job and bytes), and a
 * running import no worker polls for says so at once.
 */
import { resolve } from 'node:path';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { Worker } from '@temporalio/worker';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { statusCommand } from '../../../worker/cli/status-command.js';
import type { NightlyImportInput } from '../../../workflows/contracts/nightly.js';
import { cliContext } from '../../support/operator-actions.js';
import { createEnvironment } from '../../support/temporal-server.js';

const QUEUE = 'status-command';

describe('import-worker status', () => {
  let env: TestWorkflowEnvironment;
  let worker: Worker;
  let running: Promise<void>;

  beforeAll(async () => {
    env = await createEnvironment();
    worker = await Worker.create({
      connection: env.nativeConnection,
      taskQueue: QUEUE,
      workflowsPath: resolve(import.meta.dirname, '../../support/stand-in-nightly-workflow.ts'),
    });
    running = worker.run();
  }, 120_000);

  afterAll(async () => {
    if (worker?.getState() === 'RUNNING') worker.shutdown();
    await running;
    await env?.teardown();
  });

  const context = () => cliContext({ TEMPORAL_ADDRESS: env.address });

  it('of a finished nightly run prints its tally and the failures it lists', async () => {
    const input: NightlyImportInput = {
      feedId: 'accounts',
      feed: {
        bucket: 'b',
        prefix: 'p/',
        entityType: 'Account',
        listAction: 'insert',
        maxConcurrentImports: 2,
        tenant: 't',
      },
      tally: {
        started: 4,
        skippedAlreadyImported: 2,
        succeeded: 2,
        failed: [{ key: 'p/empty.csv', workflowId: 'import-1', reason: 'EmptyFile: p/empty.csv is empty' }],
        failedCount: 2,
        deferredForBudget: 1,
        stillRunning: 0,
      },
    };
    await env.client.workflow.execute('nightlyImport', {
      taskQueue: QUEUE,
      workflowId: 'nightly-status',
      args: [input],
    });
    const ctx = context();
    await statusCommand('nightly-status', {}, ctx);
    expect(ctx.printed).toEqual(
      expect.arrayContaining([
        'workflow  nightly-status (nightlyImport)',
        'status    COMPLETED',
        // Each object counted once; the one that waited for the budget is among the started, not added to them.
        'result    completed: 6 object(s): 4 started (2 succeeded, 2 failed), 2 already imported, 0 still running from an earlier night; 1 of them waited for the daily budget',
        'failed    p/empty.csv (import-1): EmptyFile: p/empty.csv is empty',
        'failed    1 more, not listed',
      ]),
    );
    expect(ctx.printed.join('\n')).not.toContain('undefined');
  });

  it('of a running import no worker polls for says so, without waiting for a query to time out', async () => {
    await env.client.workflow.start('importFile', {
      taskQueue: 'nobody-polls',
      workflowId: 'status-no-worker',
      args: [],
    });
    const ctx = context();
    await statusCommand('status-no-worker', {}, ctx);
    // The no-worker note, not "no worker answered the progress query": no query was sent to time out.
    expect(ctx.warned).toEqual([
      'no worker polls task queue "nobody-polls": start one, or check IMPORT_TASK_QUEUE; the import starts when a worker does',
    ]);
  });
});
