/**
 * The fence's one assumption on a real Temporal dev server with real worker
 * processes: bytes that left a worker reach the service within the delivery
 * bound (IMPORT_DELIVERY_BOUND) or never. One worker reaches the service only
 * through a proxy that holds every PUT's body (its head passes at once, so the
 * service sees the upload begin while the job is `new`): the worker sends the
 * whole small file, its last bytes included, into the proxy, and is frozen
 * (SIGSTOP) at once. Temporal gives the upload to another worker after the
 * heartbeat timeout (60 s), long past the lease and lag (3 s + 1 s) and well
 * within the bound (2 min). The proxy delivers the frozen worker's body once
 * the other worker's attempt has run for 10 s, or has sent a body of its own.
 *
 * The service is LENIENT (it accepts every complete PUT that began while the
 * job was `new`), so only the takeover's wait can keep the second body away:
 * it reads the job only once the bound has passed, finds it holding the file,
 * and sends nothing. With the old wait (lease + lag) it read the job as `new`
 * and sent the file again, and the service took both bodies.
 *
 * Slow by nature: the heartbeat timeout (60 s) and the rest of the bound.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type HoldingProxy, startHoldingProxy } from '../support/holding-proxy.js';
import { type ImportHandle, putsTo, startImport, type WorkerPool, workerPool } from '../support/killable-worker.js';
import { activityWorkers, waitFor } from '../support/operator-actions.js';
import { accountsCsv, type OperatorStack, sha256, startOperatorStack } from '../support/operator-stack.js';
import { jobsNamed } from '../support/sim-inspect.js';

// The chaos soak's case: a small file, all of it in flight at once.
const file = accountsCsv(315 * 1024);
const TAKEOVER_RUNS_MS = 10_000;

describe('a frozen worker’s last bytes on a slow path to the service (lenient service)', () => {
  let stack: OperatorStack;
  let workers: WorkerPool;
  let proxy: HoldingProxy;

  beforeAll(async () => {
    stack = await startOperatorStack({
      simulator: { processingMs: 500, lenientUploads: true },
      workerEnv: { IMPORT_RECORD_LEASE: '3s', IMPORT_RECORD_LAG: '1s', IMPORT_DELIVERY_BOUND: '2m' },
    });
    workers = workerPool(stack);
    proxy = await startHoldingProxy(Number(new URL(stack.sim.baseUrl).port));
    await stack.putObject('slow-path.csv', file);
  }, 180_000);

  afterAll(async () => {
    await workers?.close();
    await proxy?.close();
    await stack?.close();
  });

  it('the takeover waits out the delivery bound: the late body is the only one the service takes', async () => {
    const slow = await workers.start({ env: { COMPANY_DATA_BASE_URL: `http://127.0.0.1:${proxy.port}` } });
    proxy.holdPutBodies();
    const handle = await startImport(stack, 'slow-path.csv', 'slow-path');
    // Every byte of the body, the fenced tail included, has left the worker.
    await waitFor(() => (proxy.heldBytes >= file.length ? true : undefined));
    slow.freeze();
    const [job] = await jobsNamed(stack.sim.baseUrl, handle.workflowId);
    if (!job) throw new Error('no job was made');

    const other = await workers.start();
    // Its attempt runs (or, sending at once, already began a PUT of its own: the held one is the first).
    await waitFor(async () => (await uploadAttemptOn(handle, other.identity)) ?? (await putsTo(stack, job.id))[1]);
    const until = Date.now() + TAKEOVER_RUNS_MS;
    await waitFor(async () => {
      const sentItself = (await putsTo(stack, job.id)).some((put) => put.bodyComplete === true);
      return sentItself || Date.now() >= until ? true : undefined;
    });
    proxy.release();

    const result = await handle.result();
    expect(result).toMatchObject({ jobId: job.id, state: 'completed', uploadSkipped: true });
    expect(activityWorkers(await handle.fetchHistory(), 'uploadData')).toEqual([other.identity]);
    const [late, ...more] = await putsTo(stack, job.id);
    expect(more).toEqual([]);
    expect(late).toMatchObject({ status: 200, bodyComplete: true, body: { bytes: file.length } });
    expect(stack.sim.record().bodiesByJob[job.id]).toHaveLength(1);
    expect(stack.sim.job(job.id)?.sha256).toBe(sha256(file));
  }, 400_000);
});

/** True once an attempt of uploadData runs on the given worker. */
async function uploadAttemptOn(handle: ImportHandle, identity: string): Promise<true | undefined> {
  const pending = (await handle.describe()).raw.pendingActivities ?? [];
  const running = pending.some((a) => a.activityType?.name === 'uploadData' && a.lastWorkerIdentity === identity);
  return running ? true : undefined;
}
