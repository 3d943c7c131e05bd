/**
 * The documented way out of a job the service marked `failed`: fix the cause,
 * then Reset the import in the Temporal UI. On a real Temporal dev server with
 * the real worker, s3rver and the service simulator, the reset run must
 * import the file into a new job (a failed job cannot take data again) and
 * leave the failed one alone: never reused, never sent the file again.
 */
import { randomUUID } from 'node:crypto';
import { WorkflowFailedError } from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { importFile } from '../../workflows/import-file.js';
import { firstWorkflowTask, resetWorkflow } from '../support/operator-actions.js';
import {
  accountsCsv,
  type OperatorStack,
  STACK_BUCKET,
  sha256,
  startOperatorStack,
} from '../support/operator-stack.js';
import { acceptedPuts, jobsNamed } from '../support/sim-inspect.js';

const file = accountsCsv(2 * 1024 * 1024);

describe('Reset after the service failed the job', () => {
  let stack: OperatorStack;

  beforeAll(async () => {
    stack = await startOperatorStack({ simulator: { processingMs: 300 } });
    await stack.putObject('accounts.csv', file);
    await stack.startWorker();
  }, 180_000);

  afterAll(async () => {
    await stack?.close();
  });

  it('a job the service marked failed, cause fixed, then Reset to the first workflow task: a new job takes the file, the failed one is left alone', async () => {
    const workflowId = `reset-failed-job-${randomUUID()}`;
    stack.sim.setJobOutcome('failed');
    const handle = await stack.env.client.workflow.start<typeof importFile>('importFile', {
      taskQueue: stack.taskQueue,
      workflowId,
      args: [
        {
          source: { bucket: STACK_BUCKET, key: 'accounts.csv' },
          // The workflow id in the name finds this import's jobs in the service.
          dataImportName: `Accounts ${workflowId}`,
          entityType: 'Account',
          listAction: 'insert',
        },
      ],
    });
    const err = await handle.result().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(WorkflowFailedError);
    expect((err as WorkflowFailedError).cause).toBeInstanceOf(ApplicationFailure);
    expect(((err as WorkflowFailedError).cause as ApplicationFailure).type).toBe('JobFailed');
    const [failedJob] = await jobsNamed(stack.sim.baseUrl, workflowId);
    expect(failedJob).toMatchObject({ state: 'failed', uploads: 1 });

    // The cause is fixed (the service takes the file now); the operator resets the import.
    stack.sim.setJobOutcome('completed');
    const resetRun = await resetWorkflow(stack.env.client, handle, firstWorkflowTask(await handle.fetchHistory()));
    const result = await resetRun.result();

    expect(result).toMatchObject({ state: 'completed', bytes: file.length, jobReused: false, uploadSkipped: false });
    expect(result.jobId).not.toBe(failedJob!.id);
    const jobs = await jobsNamed(stack.sim.baseUrl, workflowId);
    expect(jobs).toHaveLength(2);
    expect(jobs.find((j) => j.id === result.jobId)).toMatchObject({
      state: 'completed',
      uploads: 1,
      bytesReceived: file.length,
      sha256: sha256(file),
    });
    expect(jobs.find((j) => j.id === failedJob!.id)).toMatchObject({ state: 'failed', uploads: 1 });
    expect(await acceptedPuts(stack.sim.baseUrl, result.jobId)).toHaveLength(1);
    expect(await acceptedPuts(stack.sim.baseUrl, failedJob!.id)).toHaveLength(1);
  });
});
