/**
 * `npm run measure:history`: measures, on the Temporal dev server with the
 * whole product (test/support/full-stack.ts: runWorker with real activities,
 * the budget ledger, s3rver and the service simulator, as
 * real-server-e2e.test.ts runs it):
 * - the history length (events) of a happy-path import with and without
 *   field mappings, and with one budget wait (createJob refused once: the
 *   import waits for the window, which takes one to two minutes here);
 * - the time from the client's `start` to the first byte of the data PUT
 *   reaching the simulator (the request's arrival), first with a cold worker
 *   and ledger, then warm.
 * It prints a table and asserts nothing: figures for the notes, not a test.
 */
import { randomUUID } from 'node:crypto';
import { TemporalBudgetGate } from '../../activities/budget/temporal-gate.js';
import { loadConfig } from '../../temporal.config.js';
import type { ImportFileInput } from '../../workflows/contracts/import-input.js';
import type { ImportFileResult, importFile } from '../../workflows/import-file.js';
import { startFullStack } from '../support/full-stack.js';

const BUCKET = 'crm-exports';
const KEY = 'accounts.csv';
const TENANT = 'measure';

interface Measurement {
  run: string;
  events: number;
  startToFirstPutByteMs: number;
  seconds: ImportFileResult['seconds'];
}

function accountsCsv(rows: number): Buffer {
  const lines = ['Account Name,Account Domain'];
  for (let i = 0; i < rows; i++) lines.push(`Company ${i},company-${i}.example.com`);
  return Buffer.from(`${lines.join('\n')}\n`);
}

const input = (name: string, withMappings: boolean): ImportFileInput => ({
  source: { bucket: BUCKET, key: KEY },
  dataImportName: name,
  entityType: 'Account',
  listAction: 'insert',
  tenant: TENANT,
  ...(withMappings
    ? {
        fieldMappings: {
          sourceId: '1001',
          objectType: 'account' as const,
          mappings: [{ sourceFieldLabel: 'Account Name', serviceFieldName: 'name', dataType: 'string' }],
        },
      }
    : {}),
});

async function main(): Promise<void> {
  const stack = await startFullStack({
    bucket: BUCKET,
    name: 'measure',
    simulator: { processingMs: 300 },
    workerEnv: { IMPORT_TENANT: TENANT, IMPORT_POLL_SCHEDULE: '200ms,500ms', LOG_LEVEL: 'WARN' },
    // The spec's 60 s poll ceiling is the 500 ms schedule's last delay.
    timeCompression: 120,
  });
  const { env, sim, taskQueue } = stack;
  try {
    await stack.putObject(KEY, accountsCsv(30_000));
    const config = loadConfig(stack.workerEnv(), { needsService: true });
    await stack.startWorker();

    const measure = async (run: string, importInput: ImportFileInput): Promise<Measurement> => {
      const startedAt = Date.now();
      const handle = await env.client.workflow.start<typeof importFile>('importFile', {
        taskQueue,
        workflowId: `measure-${randomUUID()}`,
        args: [importInput],
      });
      const result = await handle.result();
      const put = sim.requests().find((r) => r.endpoint === 'submitData' && r.path.includes(`/${result.jobId}/`));
      if (!put) throw new Error(`no data PUT for job ${result.jobId}`);
      const events = (await handle.fetchHistory()).events?.length ?? 0;
      return { run, events, startToFirstPutByteMs: Date.parse(put.at) - startedAt, seconds: result.seconds };
    };

    const rows: Measurement[] = [];
    rows.push(await measure('with mappings, cold worker and ledger', input('cold', true)));
    rows.push(await measure('with mappings, warm', input('warm', true)));
    rows.push(await measure('without mappings, warm', input('no mappings', false)));
    // One budget wait: the service said 429 to createJob with a Retry-After of 5 s; the import waits (>= 1 min).
    const gate = new TemporalBudgetGate({ client: env.client, taskQueue, tenant: TENANT, settings: config.budget });
    await gate.reportDailyLimit({ endpoint: 'createJob', requestId: 'measure-429', retryAfterMs: 5_000 });
    process.stdout.write('measuring an import with one budget wait (one to two minutes) ...\n');
    rows.push(await measure('with mappings, one budget wait', input('budget wait', true)));
    print(rows);
  } finally {
    await stack.close();
  }
}

function print(rows: Measurement[]): void {
  const lines = [
    '| import | history events | start -> first byte of the data PUT | seconds per phase |',
    '|---|---|---|---|',
  ];
  for (const r of rows) {
    const phases = Object.entries(r.seconds)
      .map(([k, v]) => `${k} ${v}`)
      .join(', ');
    lines.push(`| ${r.run} | ${r.events} | ${r.startToFirstPutByteMs} ms | ${phases} |`);
  }
  process.stdout.write(`${lines.join('\n')}\n`);
}

main().catch((err: unknown) => {
  process.stderr.write(`measure:history: ${(err as Error).message}\n`);
  process.exit(1);
});
