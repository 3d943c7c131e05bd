/**
 * `import-worker status` of an import waiting on its job, with the real
 * worker (its job watcher), a real Temporal dev server and the simulator: it
 * says when the job was last seen processing and by whom, and when the next
 * check is due, as of the wait's last heartbeat (heartbeats are hints).
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { jobFreshnessOf } from '../../worker/cli/job-freshness.js';
import { statusCommand } from '../../worker/cli/status-command.js';
import type { importFile } from '../../workflows/import-file.js';
import { cliContext, waitFor } from '../support/operator-actions.js';
import { accountsCsv, type OperatorStack, STACK_BUCKET, startOperatorStack } from '../support/operator-stack.js';

const SPAN = '[\\d.]+ (s|min|h)';
const AGO = `(just now|${SPAN} ago)`;

describe('import-worker status of an import waiting on its job', () => {
  let stack: OperatorStack;

  beforeAll(async () => {
    // Sweeps every 2 s at the fastest: the spec's pace compressed 30 times.
    stack = await startOperatorStack({ workerEnv: { IMPORT_POLL_SCHEDULE: '1s,2s', WORKER_HEARTBEAT_THROTTLE: '1s' } });
    // The job stays processing while the test looks.
    stack.sim.setProcessingMs(60 * 60_000);
    await stack.startWorker();
  }, 180_000);

  afterAll(async () => {
    await stack?.close();
  });

  it('says when the watcher last saw the job processing and when it checks next', async () => {
    const workflowId = `status-freshness-${randomUUID()}`;
    await stack.putObject(`${workflowId}.csv`, accountsCsv(50));
    const handle = await stack.env.client.workflow.start<typeof importFile>('importFile', {
      taskQueue: stack.taskQueue,
      workflowId,
      args: [
        {
          source: { bucket: STACK_BUCKET, key: `${workflowId}.csv` },
          dataImportName: workflowId,
          entityType: 'Account',
          listAction: 'insert',
        },
      ],
    });
    // The wait has heartbeat a sweep that listed its job.
    await waitFor(async () => (jobFreshnessOf(await handle.describe())?.lastSeen?.by === 'watcher' ? true : undefined));

    const ctx = cliContext(stack.workerEnv());
    await statusCommand(workflowId, {}, ctx);
    await handle.terminate('test done');
    expect(ctx.printed).toContain('phase     awaiting-completion');
    expect(ctx.printed).toContainEqual(
      expect.stringMatching(
        // The spans depend on the machine's speed; the words and their order do not.
        new RegExp(
          `^freshness job processing, last seen ${AGO} by the watcher; next check (in ~${SPAN}|due now|due since ${SPAN}) \\(as of a heartbeat ${AGO}\\)$`,
        ),
      ),
    );
  });
});
