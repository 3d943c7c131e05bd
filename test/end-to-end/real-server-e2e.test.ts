/**
 * The whole product on a real Temporal server: the worker as `npm start` runs
 * it (runWorker with dependencies built from configuration, the budget ledger
 * reached by update-with-start), s3rver, and the service simulator. The same
 * promises as resumable-pipeline.test.ts, now with Temporal's own retries,
 * timers and Reset. Nothing skips: without a server the file fails, saying
 * how to get one (test/support/temporal-server.ts).
 */
import { createHash, randomUUID } from 'node:crypto';
import type { WorkflowHandle } from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TemporalBudgetGate } from '../../activities/budget/temporal-gate.js';
import { ledgerWorkflowId } from '../../workflows/contracts/budget.js';
import type { ImportFileInput } from '../../workflows/contracts/import-input.js';
import { usageQuery } from '../../workflows/contracts/messages.js';
import type { importFile } from '../../workflows/import-file.js';
import type { nightlyImport } from '../../workflows/nightly-import.js';
import type { Simulator } from '../simulator/server.js';
import { type FullStack, startFullStack } from '../support/full-stack.js';
import { SPEC_BUDGET_SETTINGS } from '../support/in-memory-budget-gate.js';

const BUCKET = 'crm-exports';
const TENANT = `e2e-${process.pid}`;
const EventType = temporal.api.enums.v1.EventType;

function accountsCsv(rows: number): Buffer {
  const lines = ['Account Name,Account Domain'];
  for (let i = 0; i < rows; i++) lines.push(`Company ${i},company-${i}.example.com`);
  return Buffer.from(`${lines.join('\n')}\n`);
}

describe('the worker on a real Temporal server', () => {
  let stack: FullStack;
  let env: TestWorkflowEnvironment;
  let sim: Simulator;
  let taskQueue: string;
  const file = accountsCsv(30_000);

  beforeAll(async () => {
    stack = await startFullStack({
      bucket: BUCKET,
      name: 'e2e',
      simulator: { processingMs: 300 },
      workerEnv: { IMPORT_TENANT: TENANT, IMPORT_POLL_SCHEDULE: '200ms,500ms' },
      // The spec's 60 s poll ceiling is the 500 ms schedule's last delay.
      timeCompression: 120,
    });
    ({ env, sim, taskQueue } = stack);
    await stack.putObject('accounts.csv', file);
    await stack.startWorker();
  }, 180_000);

  afterAll(() => stack?.close());

  /** The file under its own key: one object version has one job (its job record), so a case that needs its own job needs its own version. */
  const putFile = (key: string) => stack.putObject(key, file);
  const input = (name: string, key = 'accounts.csv'): ImportFileInput => ({
    source: { bucket: BUCKET, key },
    dataImportName: name,
    entityType: 'Account',
    listAction: 'insert',
    tenant: TENANT,
    fieldMappings: {
      sourceId: '1001',
      objectType: 'account',
      mappings: [{ sourceFieldLabel: 'Account Name', serviceFieldName: 'name', dataType: 'string' }],
    },
  });

  it('imports a file: one completed job holding the exact bytes, every call counted by the ledger', async () => {
    const result = await env.client.workflow.execute<typeof importFile>('importFile', {
      taskQueue,
      workflowId: `e2e-happy-${randomUUID()}`,
      args: [input('e2e happy path')],
    });
    expect(result).toMatchObject({ state: 'completed', bytes: file.length, jobReused: false, uploadSkipped: false });
    const job = sim.job(result.jobId);
    expect(job).toMatchObject({ state: 'completed', uploads: 1, listAction: 'insert' });
    expect(job?.sha256).toBe(createHash('sha256').update(file).digest('hex'));

    const usage = await env.client.workflow.getHandle(ledgerWorkflowId(TENANT)).query(usageQuery);
    // Every call was counted first; what the ledger counts beyond them is held in the worker's allowances.
    for (const endpoint of ['createJob', 'submitData'] as const) {
      const { used, held = 0 } = usage[endpoint];
      expect(result.apiCalls[endpoint]).toBeLessThanOrEqual(used);
      expect(used - held).toBeLessThanOrEqual(result.apiCalls[endpoint] ?? 0);
    }
  }, 120_000);

  it('a Reset from the first workflow task after the upload creates no second job and sends nothing again', async () => {
    const workflowId = `e2e-reset-${randomUUID()}`;
    const handle: WorkflowHandle<typeof importFile> = await env.client.workflow.start<typeof importFile>('importFile', {
      taskQueue,
      workflowId,
      args: [input('e2e reset')],
    });
    const first = await handle.result();
    const jobsBefore = sim.jobs().length;

    const history = await handle.fetchHistory();
    const firstTask = history.events?.find((e) => e.eventType === EventType.EVENT_TYPE_WORKFLOW_TASK_COMPLETED);
    const { runId } = await env.client.workflowService.resetWorkflowExecution({
      namespace: env.namespace ?? 'default',
      workflowExecution: { workflowId, runId: (await handle.describe()).runId },
      workflowTaskFinishEventId: firstTask?.eventId,
      reason: 'operator reset in a test',
      requestId: randomUUID(),
    });
    const again = await env.client.workflow.getHandle<typeof importFile>(workflowId, runId ?? undefined).result();

    expect(again).toMatchObject({ jobId: first.jobId, jobReused: true, uploadSkipped: true, state: 'completed' });
    expect(sim.jobs()).toHaveLength(jobsBefore);
    expect(sim.job(first.jobId)?.uploads).toBe(1);
  }, 120_000);

  it('reads a fresh full budget for a tenant whose ledger has never run', async () => {
    const gate = new TemporalBudgetGate({
      client: env.client,
      taskQueue,
      tenant: `never-used-${randomUUID()}`,
      settings: { limits: SPEC_BUDGET_SETTINGS.limits, headroomPercent: 0, resetMinuteUtc: 0 },
    });
    const usage = await gate.usage();
    expect(usage.createJob).toMatchObject({ used: 0, limit: 1200, remaining: 1200 });
    expect(usage.jobStatus).toMatchObject({ used: 0, limit: 3600, remaining: 3600 });
  });

  it('a fresh start of the same file version (same workflow id) follows the first job: nothing created or sent again', async () => {
    const workflowId = `e2e-fresh-${randomUUID()}`;
    await putFile('fresh.csv');
    const start = () =>
      env.client.workflow.execute<typeof importFile>('importFile', {
        taskQueue,
        workflowId,
        args: [input('e2e fresh start', 'fresh.csv')],
      });
    const first = await start();
    const second = await start();
    expect(first).toMatchObject({ jobReused: false, uploadSkipped: false, state: 'completed' });
    expect(second).toMatchObject({ jobId: first.jobId, jobReused: true, uploadSkipped: true, state: 'completed' });
    expect(sim.job(first.jobId)?.uploads).toBe(1);
    expect(sim.jobs().filter((j) => j.dataImportName.includes('e2e fresh start'))).toHaveLength(1);
  }, 120_000);

  it('a job the service marked failed is never reused: the nightly retry of its object imports it into a new job', async () => {
    const feedId = `e2e${randomUUID().slice(0, 8)}`;
    const night = (n: number) =>
      env.client.workflow.execute<typeof nightlyImport>('nightlyImport', {
        taskQueue,
        workflowId: `nightly-${feedId}-${n}`,
        args: [
          {
            feedId,
            feed: {
              bucket: BUCKET,
              prefix: `${feedId}/`,
              pattern: '^accounts\\.csv$',
              entityType: 'Account',
              listAction: 'insert',
              maxConcurrentImports: 1,
              tenant: TENANT,
            },
          },
        ],
      });
    await putFile(`${feedId}/accounts.csv`);
    sim.setJobOutcome('failed');
    try {
      expect(await night(1)).toMatchObject({ started: 1, succeeded: 0, failedCount: 1 });
    } finally {
      sim.setJobOutcome('completed');
    }
    expect(await night(2)).toMatchObject({ started: 1, succeeded: 1, failedCount: 0 });
    const jobs = sim.jobs().filter((j) => j.dataImportName.includes(`nightly ${feedId}:`));
    expect(jobs.map((j) => [j.state, j.uploads])).toEqual([
      ['failed', 1],
      ['completed', 1],
    ]);
  }, 180_000);

  it('executions of one file version share the job: a retry after a job timeout picks it up, nothing is sent again', async () => {
    await putFile('scoped.csv');
    const scoped: ImportFileInput = input('e2e shared scope', 'scoped.csv');
    const workflowId = `e2e-scope-${randomUUID()}`;
    // A job timeout shorter than the processing: the first execution ends JobTimedOut (or, on a slow
    // machine, completed at its one confirming status read); either way the job has the file.
    await env.client.workflow
      .execute<typeof importFile>('importFile', { taskQueue, workflowId, args: [{ ...scoped, jobTimeoutMs: 1 }] })
      .catch((err: unknown) => expect(String(err)).toMatch(/failed/));
    const retried = await env.client.workflow.execute<typeof importFile>('importFile', {
      taskQueue,
      workflowId,
      args: [scoped],
    });
    expect(retried).toMatchObject({ jobReused: true, uploadSkipped: true, state: 'completed' });
    expect(sim.job(retried.jobId)?.uploads).toBe(1);
    expect(sim.jobs().filter((j) => j.dataImportName.includes('e2e shared scope'))).toHaveLength(1);
  }, 120_000);
});
