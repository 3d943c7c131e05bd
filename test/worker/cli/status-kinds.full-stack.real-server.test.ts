/**
 * `import-worker status` of every kind of workflow the pipeline runs, on the
 * whole product (a real worker, the dev server, s3rver, the simulator): a
 * running nightly shows its tally and the imports it runs, the tenant's
 * budget ledger its usage, a job record its job, and a finished night a tally
 * in which every object counts once. None of them is said to lack a worker
 * while one polls.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { statusCommand } from '../../../worker/cli/status-command.js';
import type { StatusReport } from '../../../worker/cli/status-report.js';
import type { NightlyImportInput } from '../../../workflows/contracts/nightly.js';
import type { nightlyImport } from '../../../workflows/nightly-import.js';
import { type FullStack, startFullStack } from '../../support/full-stack.js';
import { cliContext, waitFor } from '../../support/operator-actions.js';

const BUCKET = 'status-kinds';
const TENANT = 'kinds';

describe('status of each kind of workflow, the whole product', () => {
  let stack: FullStack;

  beforeAll(async () => {
    // Jobs process for 3 s, so the night is still running while status looks at it.
    stack = await startFullStack({
      bucket: BUCKET,
      name: 'status-kinds',
      simulator: { processingMs: 3_000 },
      workerEnv: { IMPORT_TENANT: TENANT, IMPORT_POLL_SCHEDULE: '200ms,500ms' },
    });
    await stack.startWorker();
  }, 180_000);

  afterAll(() => stack?.close(), 120_000);

  const status = async (workflowId: string) => {
    const ctx = cliContext(stack.workerEnv());
    await statusCommand(workflowId, {}, ctx);
    return ctx;
  };
  const statusJson = async (workflowId: string): Promise<StatusReport> => {
    const ctx = cliContext(stack.workerEnv());
    await statusCommand(workflowId, { json: true }, ctx);
    return JSON.parse(ctx.printed.join('\n')) as StatusReport;
  };

  it("shows a running night, the ledger and a job record by their own queries, then the night's tally", async () => {
    const csv = (n: number) => `Account Name,Account Domain\nCompany ${n},company-${n}.example.com\n`;
    await stack.putObject('accounts/a.csv', csv(1));
    await stack.putObject('accounts/b.csv', csv(2));
    const input: NightlyImportInput = {
      feedId: 'accounts',
      feed: {
        bucket: BUCKET,
        prefix: 'accounts/',
        entityType: 'Account',
        listAction: 'insert',
        maxConcurrentImports: 2,
        tenant: TENANT,
      },
    };
    const night = await stack.env.client.workflow.start<typeof nightlyImport>('nightlyImport', {
      taskQueue: stack.taskQueue,
      workflowId: `nightly-accounts-${randomUUID()}`,
      args: [input],
    });

    const running = await waitFor(async () => {
      const report = await statusJson(night.workflowId);
      return report.details?.kind === 'nightly' && report.details.progress.runningImports.length > 0
        ? report
        : undefined;
    }, 200);
    expect(running).toMatchObject({ status: 'RUNNING', worker: 'polling' });
    const text = await status(night.workflowId);
    expect(text.warned).toEqual([]);
    expect(text.printed).toContainEqual(expect.stringMatching(/^tally {5}so far: 2 object\(s\): 2 started/));
    expect(text.printed).toContainEqual(expect.stringMatching(/^running {3}import-[0-9a-f]+/));

    // The ledger starts with the night's first reservation: a moment after the first child.
    const ledger = await waitFor(() => status(`budget-ledger-${TENANT}`).catch(() => undefined), 200);
    expect(ledger.warned).toEqual([]);
    expect(ledger.printed).toContainEqual(
      expect.stringMatching(/^budget {4}createJob: \d+ of 1200 used, \d+ left, resets /),
    );

    const recordId = await waitFor(async () => {
      for await (const run of stack.env.client.workflow.list({ query: "WorkflowType = 'jobRecord'" })) {
        return run.workflowId;
      }
      return undefined;
    }, 200);
    const record = await status(recordId);
    expect(record.warned).toEqual([]);
    expect(record.printed).toContainEqual(expect.stringMatching(/^object {4}s3:\/\/status-kinds\/accounts\/[ab]\.csv/));
    expect(record.printed).toContainEqual(expect.stringMatching(/^job {7}(\d+ \(\w+\)|none yet)$/));

    await night.result();
    const done = await status(night.workflowId);
    expect(done.printed).toContain(
      'result    completed: 2 object(s): 2 started (2 succeeded, 0 failed), 0 already imported, 0 still running from an earlier night',
    );
  }, 180_000);
});
