/**
 * An attempt reset mid-step by a real operator's activity reset: `temporal activity
 * reset --clear-heartbeat-details` (what the UI's Reset on a Pending Activity
 * card sends, with Reset Heartbeat Details ticked) on a real Temporal dev
 * server, against real worker processes, in the middle of a create and of an
 * upload. The running attempt hears of the reset at its next heartbeat and
 * stops; the next one starts with no heartbeat details at all. The job record
 * (never the details) tells it what an earlier attempt may have done.
 *
 * - create: the reset comes while the POST's answer is on its way; the
 *   service made the job and lists it 5 s late. The next attempt searches only
 *   after the service's lag, finds the job and creates none.
 * - upload: the reset comes after the last byte, while the service (lenient:
 *   it takes every complete body that began while the job was `new`) commits
 *   the body 5 s late. The next attempt waits out the lag, finds the job out
 *   of `new` and sends nothing.
 *
 * The record's lease and the service's lag are 3 s and 6 s here (the
 * simulator commits and lists within 5 s); each worker sends a heartbeat at
 * least every second, so a reset reaches a running attempt within about that.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { putsTo, startImport, type WorkerPool, workerPool } from '../support/killable-worker.js';
import { resetActivityWithCli, waitFor } from '../support/operator-actions.js';
import { accountsCsv, type OperatorStack, sha256, startOperatorStack } from '../support/operator-stack.js';
import { jobsNamed, simRequests } from '../support/sim-inspect.js';

const MiB = 1024 * 1024;
const createFile = accountsCsv(64 * 1024);
const uploadFile = accountsCsv(MiB);
/** How late the simulator lists a new job or commits a body: within the lag the workers are given. */
const SERVICE_LATE_MS = 5_000;

describe('case 6: an activity reset from the CLI that clears the heartbeat details', () => {
  let stack: OperatorStack;
  let workers: WorkerPool;

  beforeAll(async () => {
    stack = await startOperatorStack({
      simulator: { processingMs: 500, lenientUploads: true },
      workerEnv: { IMPORT_RECORD_LEASE: '3s', IMPORT_RECORD_LAG: '6s', WORKER_HEARTBEAT_THROTTLE: '1s' },
    });
    workers = workerPool(stack);
    await stack.putObject('reset-create.csv', createFile);
    await stack.putObject('reset-upload.csv', uploadFile);
  }, 180_000);

  afterAll(async () => {
    await workers?.close();
    await stack?.close();
  });

  const resetFromCli = (handle: Parameters<typeof resetActivityWithCli>[2], activityType: string) =>
    resetActivityWithCli(stack.env.client, stack.env.address, handle, activityType, { clearHeartbeatDetails: true });
  const createCount = async () => (await simRequests(stack.sim.baseUrl)).filter((r) => r.endpoint === 'createJob');

  it('in the middle of a create: the next attempt finds the job made before the reset; one job, one POST', async () => {
    const worker = await workers.start();
    const postsBefore = (await createCount()).length;
    stack.sim.jobFaults.listCreatedLate(SERVICE_LATE_MS);
    stack.sim.delayNext('createJob', 10 * 60_000);
    const handle = await startImport(stack, 'reset-create.csv', 'reset-create');
    const [made] = await waitFor(async () => {
      const jobs = await jobsNamed(stack.sim.baseUrl, handle.workflowId);
      return jobs.length > 0 ? jobs : undefined;
    });

    await resetFromCli(handle, 'createImportJob');
    const result = await handle.result();

    expect(await jobsNamed(stack.sim.baseUrl, handle.workflowId)).toHaveLength(1);
    expect(result).toMatchObject({ jobId: made?.id, jobReused: true, state: 'completed' });
    expect((await createCount()).length - postsBefore).toBe(1);
    expect(worker.output()).toContain('Import job found, created earlier');
    await worker.kill();
  }, 180_000);

  it('after the last byte of an upload, the service committing late: no second body', async () => {
    await workers.start();
    // The body is committed 5 s after it arrived, and its answer held back far longer: the reset meets a running attempt.
    stack.sim.commitUploadLate(SERVICE_LATE_MS);
    stack.sim.delayNext('submitData', 10 * 60_000);
    const handle = await startImport(stack, 'reset-upload.csv', 'reset-upload');
    const job = await waitFor(async () => {
      const [made] = await jobsNamed(stack.sim.baseUrl, handle.workflowId);
      return made && (await putsTo(stack, made.id))[0]?.body ? made : undefined;
    });
    expect(stack.sim.job(job.id)?.state).toBe('new');

    await resetFromCli(handle, 'uploadData');
    const result = await handle.result();

    expect(stack.sim.record().bodiesByJob[job.id]).toHaveLength(1);
    expect(result).toMatchObject({ jobId: job.id, state: 'completed', uploadSkipped: true });
    expect(await putsTo(stack, job.id)).toEqual([
      expect.objectContaining({ bodyComplete: true, body: { bytes: uploadFile.length, declared: uploadFile.length } }),
    ]);
    expect(stack.sim.job(job.id)?.sha256).toBe(sha256(uploadFile));
  }, 180_000);
});
