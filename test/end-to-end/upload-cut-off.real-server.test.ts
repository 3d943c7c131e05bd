/**
 * An upload cut off from Temporal, with real worker processes on a real Temporal dev server:
 * a worker cut off from Temporal (its only way there is a proxy the test
 * cuts) while it streams an upload, and still reaching the service. Temporal
 * times its attempt out and another worker's attempt sends the file. The
 * service is LENIENT: it accepts every complete PUT that began while the job
 * was `new`, so nothing here counts on it refusing a second body.
 *
 * The service holds the cut-off worker's PUT after its first MiB and reads on
 * only once the import completed, so its body reaches its last 64 KiB after
 * the other worker's whole body. Cut off all along, the worker hears nothing
 * from Temporal (no cancel, no timeout): only the fence can stop its last
 * bytes, and its own upload watchdog is set to 10 minutes so that it cannot.
 *
 * Temporal gives the upload to another worker only when the activity's
 * heartbeat timeout passes: the workers run a bundle with short heartbeat
 * timeouts (test/support/short-heartbeat-timeouts.ts), seconds instead of the
 * product's minute. The import and its job record, cached in the cut-off
 * worker, wait for it on its sticky queue before the other worker may take
 * their next task: 1 s here, not the SDK's 10 s.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FENCED_TAIL_BYTES } from '../../activities/upload/upload-data.js';
import { putsTo, startImport, type WorkerPool, workerPool } from '../support/killable-worker.js';
import { activityWorkers, waitFor } from '../support/operator-actions.js';
import { accountsCsv, type OperatorStack, sha256, startOperatorStack } from '../support/operator-stack.js';
import { jobsNamed } from '../support/sim-inspect.js';

const MiB = 1024 * 1024;
const file = accountsCsv(4 * MiB);

describe('case 2: a worker cut off from Temporal in the middle of an upload (lenient service)', () => {
  let stack: OperatorStack;
  let workers: WorkerPool;

  beforeAll(async () => {
    stack = await startOperatorStack({
      simulator: { processingMs: 500, lenientUploads: true },
      heartbeatTimeouts: 'short',
    });
    workers = workerPool(stack);
    await stack.putObject('cut-off.csv', file);
  }, 180_000);

  afterAll(async () => {
    await workers?.close();
    await stack?.close();
  });

  it('its body stops short of its last bytes; the file reaches the job once, from the worker that took over', async () => {
    const cutOff = await workers.start({
      behindProxy: true,
      env: { UPLOAD_IDLE_TIMEOUT: '10m' },
      stickyQueueTimeoutMs: 1_000,
    });
    stack.sim.holdUploadAfter(MiB);
    const handle = await startImport(stack, 'cut-off.csv', 'cut-off');
    const job = await waitFor(async () => {
      const [made] = await jobsNamed(stack.sim.baseUrl, handle.workflowId);
      return made && (await putsTo(stack, made.id)).length === 1 ? made : undefined;
    });
    cutOff.cutOff();
    const other = await workers.start();

    const result = await handle.result();
    expect(result).toMatchObject({ jobId: job.id, state: 'completed', uploadSkipped: false });
    expect(activityWorkers(await handle.fetchHistory(), 'uploadData')).toEqual([other.identity]);

    // The cut-off worker's body reads on after the whole import; still cut off, it reaches its last bytes.
    stack.sim.releaseHeldUploads();
    const [zombie, taken, ...more] = await waitFor(async () => {
      const puts = await putsTo(stack, job.id);
      return puts[0]?.bodyComplete === undefined ? undefined : puts;
    });
    expect(stack.sim.record().bodiesByJob[job.id]).toHaveLength(1);
    expect(more).toEqual([]);
    expect(zombie).toMatchObject({
      bodyComplete: false,
      body: { bytes: file.length - FENCED_TAIL_BYTES, declared: file.length },
    });
    expect(taken).toMatchObject({ status: 200, bodyComplete: true, body: { bytes: file.length } });
    expect(stack.sim.job(job.id)?.sha256).toBe(sha256(file));
  }, 300_000);
});
