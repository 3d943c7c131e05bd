/**
 * A fully sent upload whose answer never comes, with Temporal's own retries on
 * a real server: the answer to a fully sent upload never comes in time, and the
 * service commits only when it answers, so it took nothing. The next attempt
 * (a later one by the server's schedule, so the job record lets it take over)
 * waits until no earlier body can still arrive, finds the job `new`, and sends
 * the file again by itself: no operator is asked, and the service takes it once.
 */
import path from 'node:path';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { Worker } from '@temporalio/worker';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createEnvironment } from '../../support/temporal-server.js';
import {
  BUCKET,
  csvBytes,
  etagOf,
  startWorld,
  type UploadWorld,
  uploadAfterCreate,
  uploadDeps,
} from './environment.js';

const TASK_QUEUE = 'upload-retries';

describe('uploadData retried by a real Temporal server', () => {
  let env: TestWorkflowEnvironment;
  let world: UploadWorld;
  let worker: Worker;
  let running: Promise<void>;

  beforeAll(async () => {
    env = await createEnvironment();
    // The client gives up on the answer after 1 s; the activity's own idle watchdog is shorter still.
    world = await startWorld({ clientResponseTimeoutMs: 1_000 });
    worker = await Worker.create({
      connection: env.nativeConnection,
      taskQueue: TASK_QUEUE,
      workflowsPath: path.resolve(import.meta.dirname, 'upload-retry-workflow.ts'),
      activities: {
        uploadData: uploadAfterCreate(
          uploadDeps(world, { uploadIdleTimeoutMs: 300, unconfirmedWaitMs: 1_500, unconfirmedPollMs: 200 }),
        ),
      },
    });
    running = worker.run();
  }, 180_000);

  afterAll(async () => {
    worker?.shutdown();
    await running;
    await world?.close();
    await env?.teardown();
  });

  it('sends a file whose answer never came and that nothing took again by itself, once', async () => {
    const bytes = csvBytes(1024 * 1024);
    await world.put('unanswered.csv', bytes);
    const jobId = await world.newJobId();
    world.sim.commitUploadOnAnswer(5_000);

    const run = env.client.workflow.execute('uploadOnce', {
      taskQueue: TASK_QUEUE,
      workflowId: `upload-unanswered-${jobId}`,
      args: [
        {
          tenant: 'acme',
          jobId,
          bucket: BUCKET,
          key: 'unanswered.csv',
          etag: await etagOf(world, 'unanswered.csv'),
          sizeBytes: bytes.length,
          listAction: 'noop',
        },
      ],
    });

    expect(await run).toMatchObject({ skipped: false, bytesSent: bytes.length, state: 'processing' });
    const puts = world.sim.requests().filter((r) => r.endpoint === 'submitData' && r.path.includes(`/job/${jobId}/`));
    expect(puts).toHaveLength(2);
    expect(world.sim.job(jobId)).toMatchObject({ state: 'processing', uploads: 1 });
  });
});
