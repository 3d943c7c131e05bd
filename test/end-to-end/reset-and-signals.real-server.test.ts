/**
 * The operator's answers to a failed import, on a real Temporal dev server
 * with the real worker (runWorker built from the worker's environment), s3rver
 * and the service simulator:
 * - the import failed, the cause is fixed, the operator Resets it to before
 *   the failed step: it completes with one job and at most one accepted PUT;
 * - an import waiting in `await-retry` gets `retry` (re-runs the failed step)
 *   or `abandon` (fails) through the CLI's own commands.
 * What the service saw is read from the simulator's /__sim API.
 */
import { randomUUID } from 'node:crypto';
import { WorkflowFailedError, type WorkflowHandle } from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signalCommand } from '../../worker/cli/signal-commands.js';
import type { ImportFileInput } from '../../workflows/contracts/import-input.js';
import { abandonSignal, progressQuery, retrySignal } from '../../workflows/contracts/messages.js';
import type { importFile } from '../../workflows/import-file.js';
import { DEMO_TOKENS } from '../simulator/server.js';
import {
  cliContext,
  firstWorkflowTask,
  historiesHolding,
  resetWorkflow,
  taskThatScheduled,
  waitFor,
} from '../support/operator-actions.js';
import {
  accountsCsv,
  type OperatorStack,
  STACK_BUCKET,
  sha256,
  startOperatorStack,
} from '../support/operator-stack.js';
import { acceptedPuts, jobsNamed, simRequests } from '../support/sim-inspect.js';

type ImportHandle = WorkflowHandle<typeof importFile>;

const FILE_KEY = 'accounts/2026-11-22.csv';
const MiB = 1024 * 1024;
const file = accountsCsv(2 * MiB);

/**
 * The tests that send a refused file again: each sending again first waits
 * out the job record's lease, delivery bound and lag after the refused PUT
 * (3 s + 3 s + 1 s here: the simulator, on loopback, reads at once, commits
 * and lists at once, and answered the refused PUT).
 */
const SETTLES_TIMEOUT_MS = 150_000;

describe('operator paths on a real Temporal server', () => {
  let stack: OperatorStack;

  beforeAll(async () => {
    // Polls 1 s apart: a test injects a fault between the accepted upload and the first poll.
    stack = await startOperatorStack({
      simulator: { processingMs: 500 },
      workerEnv: {
        IMPORT_POLL_SCHEDULE: '1s',
        IMPORT_RECORD_LEASE: '3s',
        IMPORT_RECORD_LAG: '1s',
        IMPORT_DELIVERY_BOUND: '3s',
      },
    });
    await stack.putObject(FILE_KEY, file);
    await stack.startWorker();
  }, 180_000);

  afterAll(async () => {
    await stack?.close();
  });

  const input = (workflowId: string, extra: Partial<ImportFileInput>): ImportFileInput => ({
    source: { bucket: STACK_BUCKET, key: FILE_KEY },
    // The workflow id in the name finds this import's jobs in the service.
    dataImportName: `Accounts ${workflowId}`,
    entityType: 'Account',
    listAction: 'insert',
    fieldMappings: {
      sourceId: '1001',
      objectType: 'account',
      mappings: [
        { sourceFieldLabel: 'Account Name', serviceFieldName: 'name', dataType: 'string' },
        { sourceFieldLabel: 'Account Domain', serviceFieldName: 'domain', dataType: 'string' },
      ],
    },
    ...extra,
  });

  /** Each import its own copy of the file: one object version has one job (its job record), whichever import asks. */
  const start = async (workflowId: string, extra: Partial<ImportFileInput> = {}): Promise<ImportHandle> => {
    const key = `${workflowId}/${FILE_KEY}`;
    await stack.putObject(key, file);
    return stack.env.client.workflow.start<typeof importFile>('importFile', {
      taskQueue: stack.taskQueue,
      workflowId,
      args: [input(workflowId, { source: { bucket: STACK_BUCKET, key }, ...extra })],
    });
  };

  async function failureOf(handle: ImportHandle): Promise<ApplicationFailure> {
    const err = await handle.result().then(
      () => undefined,
      (e: unknown) => e,
    );
    if (!(err instanceof WorkflowFailedError) || !(err.cause instanceof ApplicationFailure)) {
      throw new Error(`expected the import to fail with an ApplicationFailure, got ${String(err)}`);
    }
    return err.cause;
  }

  const awaitingRetry = (handle: ImportHandle) =>
    waitFor(async () => (await handle.query(progressQuery)).awaitingRetry);

  /** The service holds exactly one job for the workflow, with the file's exact bytes taken once. */
  async function expectOneJobWithTheFile(workflowId: string, jobId: string, bytes = file): Promise<void> {
    const jobs = await jobsNamed(stack.sim.baseUrl, workflowId);
    expect(jobs.map((j) => j.id)).toEqual([jobId]);
    expect(jobs[0]).toMatchObject({
      state: 'completed',
      uploads: 1,
      bytesReceived: bytes.length,
      listAction: 'insert',
    });
    expect(jobs[0]?.sha256).toBe(sha256(bytes));
    expect(await acceptedPuts(stack.sim.baseUrl, jobId)).toHaveLength(1);
  }

  it('a file that does not match its mappings, corrected in S3, then Reset to the first workflow task: one job, the corrected file', async () => {
    const workflowId = `reset-mismatch-${randomUUID()}`;
    const key = `accounts/mismatch-${workflowId}.csv`;
    // An export whose domain column was renamed: the mapped label "Account Domain" is missing.
    await stack.putObject(key, accountsCsv(MiB, 'Account Name,Domain'));
    const handle = await start(workflowId, { source: { bucket: STACK_BUCKET, key } });
    const failure = await failureOf(handle);
    expect(failure.type).toBe('MappingMismatch');
    expect(failure.message).toMatch(/^inspectSource failed \(MappingMismatch\)/);
    expect(await jobsNamed(stack.sim.baseUrl, workflowId)).toEqual([]);

    const corrected = accountsCsv(MiB + 1000);
    await stack.putObject(key, corrected);
    const resetRun = await resetWorkflow(stack.env.client, handle, firstWorkflowTask(await handle.fetchHistory()));
    const result = await resetRun.result();

    expect(result).toMatchObject({ state: 'completed', bytes: corrected.length, jobReused: false });
    await expectOneJobWithTheFile(workflowId, result.jobId, corrected);
  });

  it('an upload refused for a missing permission, fixed, then Reset to before the upload: one job, one accepted PUT', {
    timeout: SETTLES_TIMEOUT_MS,
  }, async () => {
    const workflowId = `reset-upload-${randomUUID()}`;
    stack.sim.failNext('submitData', 403);
    const handle = await start(workflowId);
    const failure = await failureOf(handle);
    expect(failure.type).toBe('Forbidden');
    expect(failure.message).toMatch(/^uploadData failed \(Forbidden\)/);
    const [job] = await jobsNamed(stack.sim.baseUrl, workflowId);
    expect(job).toMatchObject({ state: 'new', uploads: 0 });

    // The cause is fixed: the injected 403 was for one request only.
    const history = await handle.fetchHistory();
    const resetRun = await resetWorkflow(stack.env.client, handle, taskThatScheduled(history, 'uploadData'));
    const result = await resetRun.result();

    expect(result).toMatchObject({ jobId: job?.id, state: 'completed', bytes: file.length, uploadSkipped: false });
    await expectOneJobWithTheFile(workflowId, job!.id);
  });

  it('a status read refused after the upload was accepted, fixed, then Reset to the first workflow task: the same job, no second PUT', async () => {
    const workflowId = `reset-poll-${randomUUID()}`;
    const handle = await start(workflowId);
    const [accepted] = await waitFor(async () => {
      const jobs = await jobsNamed(stack.sim.baseUrl, workflowId);
      return jobs[0]?.uploads === 1 ? jobs : undefined;
    }, 10);
    // The first poll is 1 s after the accepted upload: this refuses it.
    stack.sim.failNext('jobStatus', 403);
    const failure = await failureOf(handle);
    expect(failure.type).toBe('Forbidden');
    expect(failure.message).toMatch(/^awaitJobCompletion failed \(Forbidden\)/);

    const history = await handle.fetchHistory();
    const resetRun = await resetWorkflow(stack.env.client, handle, firstWorkflowTask(history));
    const result = await resetRun.result();

    expect(result).toMatchObject({ jobId: accepted?.id, state: 'completed', jobReused: true, uploadSkipped: true });
    await expectOneJobWithTheFile(workflowId, accepted!.id);
    const puts = (await simRequests(stack.sim.baseUrl)).filter((r) => r.path === `/import/v1/job/${accepted?.id}/data`);
    expect(puts).toHaveLength(1);
  });

  it('an import waiting in await-retry re-runs the failed step on each retry and completes once the cause is fixed', {
    timeout: SETTLES_TIMEOUT_MS,
  }, async () => {
    const workflowId = `retry-${randomUUID()}`;
    const ctx = cliContext(stack.workerEnv());
    stack.sim.failNext('submitData', 403, { count: 2 });
    const handle = await start(workflowId, { onFailure: 'await-retry' });

    const first = await awaitingRetry(handle);
    expect(first).toMatchObject({ step: 'uploadData', failureType: 'Forbidden' });
    await signalCommand(retrySignal, workflowId, ctx);
    // The cause was not fixed yet: the step ran again, failed again and waits again.
    const second = await waitFor(async () => {
      const waiting = await awaitingRetry(handle);
      return waiting.since !== first.since ? waiting : undefined;
    });
    expect(second).toMatchObject({ step: 'uploadData', failureType: 'Forbidden' });
    await signalCommand(retrySignal, workflowId, ctx);
    const result = await handle.result();

    const sent = `sent retry to ${workflowId} (it waited after uploadData failed)`;
    expect(ctx.printed).toEqual([sent, sent]);
    expect(ctx.warned).toEqual([]);
    expect(result).toMatchObject({ state: 'completed', jobReused: false, uploadSkipped: false });
    await expectOneJobWithTheFile(workflowId, result.jobId);
    const puts = (await simRequests(stack.sim.baseUrl)).filter((r) => r.path === `/import/v1/job/${result.jobId}/data`);
    expect(puts.map((r) => r.status)).toEqual([403, 403, 200]);
  });

  it('an import waiting in await-retry fails on abandon, naming the step and the cause, and sends nothing more', async () => {
    const workflowId = `abandon-${randomUUID()}`;
    const ctx = cliContext(stack.workerEnv());
    stack.sim.failNext('submitData', 403);
    const handle = await start(workflowId, { onFailure: 'await-retry' });

    expect(await awaitingRetry(handle)).toMatchObject({ step: 'uploadData', failureType: 'Forbidden' });
    await signalCommand(abandonSignal, workflowId, ctx);
    const failure = await failureOf(handle);

    expect(ctx.printed).toEqual([`sent abandon to ${workflowId} (it waited after uploadData failed)`]);
    expect(failure.type).toBe('Forbidden');
    expect(failure.message).toMatch(/^uploadData failed \(Forbidden\): .*\(abandoned by the operator\)$/);
    const jobs = await jobsNamed(stack.sim.baseUrl, workflowId);
    expect(jobs).toHaveLength(1);
    expect(jobs[0]).toMatchObject({ state: 'new', uploads: 0 });
    const puts = (await simRequests(stack.sim.baseUrl)).filter((r) => r.path === `/import/v1/job/${jobs[0]?.id}/data`);
    expect(puts.map((r) => r.status)).toEqual([403]);
  });

  it('the service token appears in no history of these imports, their failures included', async () => {
    expect(await historiesHolding(stack.env.client, DEMO_TOKENS.importer)).toEqual([]);
    // The search does read failures: the service's answer to the refused calls is there.
    expect(await historiesHolding(stack.env.client, 'Injected 403')).not.toEqual([]);
  });
});
