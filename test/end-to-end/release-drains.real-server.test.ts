/**
 * A release drains, on a real Temporal dev server: release 1 is current and
 * runs two imports, one whose job the service fails (its job record stays,
 * waiting for the next import of that file version). Release 2 becomes
 * current and runs a new import. Temporal then reports release 1 drained: no
 * workflow pinned to it is still open. The failed version's record moved to
 * release 2 by itself, so once release 1's workers are gone, importing that
 * version again makes a new job and completes, answered by release 2 alone.
 *
 * The dev server checks drainage every 3 minutes by default; the test's
 * server checks every second (matching.wv.VersionDrainageStatus*), and the
 * workers' records look for a new current release every 2 s.
 */
import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { promisify } from 'node:util';
import { HeadObjectCommand } from '@aws-sdk/client-s3';
import { temporal } from '@temporalio/proto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TemporalSweepBoard } from '../../activities/watch/temporal-sweep-board.js';
import { findTemporalBinary } from '../../worker/demo/temporal-binaries.js';
import type { ImportFileInput } from '../../workflows/contracts/import-input.js';
import { jobRecordWorkflowId } from '../../workflows/contracts/job-record.js';
import { sweepBoardWorkflowId } from '../../workflows/contracts/sweep-board.js';
import type { importFile } from '../../workflows/import-file.js';
import { waitFor } from '../support/operator-actions.js';
import { accountsCsv, type OperatorStack, STACK_BUCKET, startOperatorStack } from '../support/operator-stack.js';

const { VERSION_DRAINAGE_STATUS_DRAINED } = temporal.api.enums.v1.VersionDrainageStatus;
const { VERSIONING_BEHAVIOR_PINNED } = temporal.api.enums.v1.VersioningBehavior;
const DEPLOYMENT = 'bulk-import';
const TENANT = 'default';
const run = promisify(execFile);

describe('Worker Versioning: a release drains once its own work is done', () => {
  let stack: OperatorStack;

  beforeAll(async () => {
    stack = await startOperatorStack({
      simulator: { processingMs: 200 },
      temporalDynamicConfig: {
        'matching.wv.VersionDrainageStatusRefreshInterval': '"1s"',
        'matching.wv.VersionDrainageStatusVisibilityGracePeriod': '"1s"',
      },
      workerEnv: { IMPORT_RECORD_RELEASE_CHECK: '2s' },
    });
    for (const key of ['done.csv', 'failed.csv', 'after-switch.csv']) await stack.putObject(key, accountsCsv(4 * 1024));
  }, 180_000);

  afterAll(async () => {
    await stack?.close();
  });

  /** `temporal worker deployment ...` against the test's server, as the README's deploy steps run it. */
  async function deploymentCli(...args: string[]): Promise<string> {
    const cli = findTemporalBinary('dev-server');
    if (!cli) throw new Error('the Temporal CLI is not installed; run `npm run setup:temporal`');
    const where = ['--address', stack.env.address, '--namespace', stack.namespace];
    const { stdout } = await run(cli.path, ['worker', 'deployment', ...args, ...where], { timeout: 30_000 });
    return stdout;
  }

  /** Makes a build current once its workers have registered it (their first polls do, a moment after start). */
  async function setCurrent(buildId: string): Promise<void> {
    const deadline = Date.now() + 30_000;
    for (;;) {
      try {
        await deploymentCli('set-current-version', '--deployment-name', DEPLOYMENT, '--build-id', buildId, '-y');
        return;
      } catch (err) {
        if (Date.now() > deadline) throw err;
        await new Promise((resolve) => setTimeout(resolve, 500));
      }
    }
  }

  const release = (buildId: string) =>
    stack.startWorker({ WORKER_DEPLOYMENT_NAME: DEPLOYMENT, WORKER_BUILD_ID: buildId });

  const importOf = (key: string) => {
    const workflowId = `drains-${key}-${randomUUID()}`;
    return stack.env.client.workflow.start<typeof importFile>('importFile', {
      taskQueue: stack.taskQueue,
      workflowId,
      args: [
        {
          source: { bucket: STACK_BUCKET, key },
          dataImportName: `drains ${workflowId}`,
          entityType: 'Account',
          listAction: 'insert',
        } satisfies ImportFileInput,
      ],
    });
  };

  /** The drainage status Temporal reports for a build of the deployment (undefined while it is current). */
  async function drainageOf(buildId: string) {
    const { workerDeploymentVersionInfo } = await stack.env.client.workflowService.describeWorkerDeploymentVersion({
      namespace: stack.namespace,
      deploymentVersion: { deploymentName: DEPLOYMENT, buildId },
    });
    return workerDeploymentVersionInfo?.drainageInfo?.status ?? undefined;
  }

  async function versioningOf(workflowId: string): Promise<{ buildId?: string | null; pinned: boolean }> {
    const { raw } = await stack.env.client.workflow.getHandle(workflowId).describe();
    const info = raw.workflowExecutionInfo?.versioningInfo;
    return { buildId: info?.deploymentVersion?.buildId, pinned: info?.behavior === VERSIONING_BEHAVIOR_PINNED };
  }

  async function recordOf(key: string): Promise<string> {
    const head = await stack.s3.client.send(new HeadObjectCommand({ Bucket: STACK_BUCKET, Key: key }));
    return jobRecordWorkflowId({ tenant: TENANT, bucket: STACK_BUCKET, key, etag: head.ETag ?? '' });
  }

  it('release 1 drains after release 2 becomes current, though one of its imports left a failed job behind', async () => {
    const release1 = await release('v1');
    await setCurrent('v1');

    const done = await (await importOf('done.csv')).result();
    expect(done).toMatchObject({ state: 'completed' });
    stack.sim.setJobOutcome('failed');
    const failing = await importOf('failed.csv');
    await expect(failing.result()).rejects.toThrow();
    stack.sim.setJobOutcome('completed');
    const failedJobId = (await failing.query<{ jobId?: string }>('progress')).jobId;
    expect(failedJobId).toBeDefined();
    // The failed version's record waits for the next import of that version, on release 1.
    const record = await recordOf('failed.csv');
    expect((await stack.env.client.workflow.getHandle(record).describe()).status.name).toBe('RUNNING');
    expect(await versioningOf(record)).toEqual({ buildId: 'v1', pinned: true });
    // A sweep round claimed on release 1, as a process waiting on a job makes one: the tenant's sweep board is
    // release 1's too, and nothing touches it after the switch (the import below ends at its early read).
    const board = new TemporalSweepBoard({
      client: stack.env.client,
      taskQueue: stack.taskQueue,
      tenant: TENANT,
      releaseCheckMs: 2_000,
    });
    await board.claim({ holder: 'a process of release 1', afterSeq: (await board.read()).seq });
    expect(await versioningOf(sweepBoardWorkflowId(TENANT))).toEqual({ buildId: 'v1', pinned: true });

    await release('v2');
    await setCurrent('v2');
    // A new import on release 2 (its budget reservation moves the ledger too).
    expect(await (await importOf('after-switch.csv')).result()).toMatchObject({ state: 'completed' });

    await waitFor(async () => ((await drainageOf('v1')) === VERSION_DRAINAGE_STATUS_DRAINED ? true : undefined), 500);
    expect(await versioningOf(record)).toEqual({ buildId: 'v2', pinned: true });
    expect(await versioningOf(sweepBoardWorkflowId(TENANT))).toEqual({ buildId: 'v2', pinned: true });

    // Release 1's workers leave; the failed version imported again is release 2's alone: a new job, completed.
    await release1.stop();
    const again = await (await importOf('failed.csv')).result();
    expect(again).toMatchObject({ state: 'completed', jobReused: false });
    expect(again.jobId).not.toBe(failedJobId);
  }, 240_000);
});
