/**
 * The fence's one assumption on a real Temporal dev server with real worker
 * processes: bytes that left a worker reach the service within the delivery
 * bound (IMPORT_DELIVERY_BOUND) or never. One worker reaches the service only
 * through a proxy that holds every PUT's body (its head passes at once, so the
 * service sees the upload begin while the job is `new`): the worker sends the
 * whole small file, its last bytes included, into the proxy, and is frozen
 * (SIGSTOP) at once. Temporal gives the upload to another worker after the
 * heartbeat timeout (15 s: the workers run a bundle with short heartbeat
 * timeouts, test/support/short-heartbeat-timeouts.ts), long past the lease
 * and lag (3 s + 1 s) and well within the bound (90 s). The proxy delivers the frozen worker's body once
 * the other worker's attempt has claimed the upload in the job record and
 * then read the job and run 10 s more (or sent a body of its own), or read
 * nothing for 20 s (it is waiting; lease + lag is 4 s); and whatever the
 * machine's pace, within the bound of the last bytes leaving the worker, as
 * the assumption says (else the takeover rightly sends the file again).
 *
 * The service is LENIENT (it accepts every complete PUT that began while the
 * job was `new`), so only the takeover's wait can keep the second body away:
 * it reads the job only once the bound has passed, finds it holding the file,
 * and sends nothing. With the old wait (lease + lag) it read the job as `new`
 * and sent the file again, and the service took both bodies.
 *
 * Slow by nature: the bound, which must leave room for the heartbeat timeout
 * and the quiet time after the takeover's claim.
 */

import type { WorkflowHandle } from '@temporalio/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { JOB_RECORD_WORKFLOW_TYPE } from '../../workflows/contracts/job-record.js';
import { jobRecordQuery } from '../../workflows/contracts/messages.js';
import { type HoldingProxy, startHoldingProxy } from '../support/holding-proxy.js';
import { putsTo, startImport, type WorkerPool, workerPool } from '../support/killable-worker.js';
import { activityWorkers, waitFor } from '../support/operator-actions.js';
import { accountsCsv, type OperatorStack, sha256, startOperatorStack } from '../support/operator-stack.js';
import { jobsNamed, simRequests } from '../support/sim-inspect.js';

// The chaos soak's case: a small file, all of it in flight at once.
const file = accountsCsv(315 * 1024);
/** How long the takeover may run after its read of the job before the held body is let go. */
const TAKEOVER_RUNS_MS = 10_000;
/** With no read of the job this long after the takeover claimed the upload, it is waiting out the bound. */
const QUIET_MS = 20_000;
/** IMPORT_DELIVERY_BOUND: the held body reaches the service this long after it left the worker, at the latest. */
const DELIVERY_BOUND_MS = 90_000;
/** How much earlier than the bound the proxy passes the body on: room for the delivery itself. */
const DELIVERY_MARGIN_MS = 10_000;

describe('a frozen worker’s last bytes on a slow path to the service (lenient service)', () => {
  let stack: OperatorStack;
  let workers: WorkerPool;
  let proxy: HoldingProxy;

  beforeAll(async () => {
    stack = await startOperatorStack({
      simulator: { processingMs: 500, lenientUploads: true },
      workerEnv: {
        IMPORT_RECORD_LEASE: '3s',
        IMPORT_RECORD_LAG: '1s',
        IMPORT_DELIVERY_BOUND: `${DELIVERY_BOUND_MS / 1000}s`,
      },
      heartbeatTimeouts: 'short',
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
    // Its cached workflows (the import, the job record, the ledger) leave its sticky queue 1 s after it freezes.
    const slow = await workers.start({
      env: { COMPANY_DATA_BASE_URL: `http://127.0.0.1:${proxy.port}` },
      stickyQueueTimeoutMs: 1_000,
    });
    proxy.holdPutBodies();
    const handle = await startImport(stack, 'slow-path.csv', 'slow-path');
    // Every byte of the body, the fenced tail included, has left the worker.
    await waitFor(() => (proxy.heldBytes >= file.length ? true : undefined));
    const deliverBy = Date.now() + DELIVERY_BOUND_MS - DELIVERY_MARGIN_MS;
    const pastDelivery = () => Date.now() >= deliverBy;
    // Asked while its worker still answers: a frozen worker's cached record answers nobody for a while.
    const record = await recordOf(stack, handle.workflowId);
    const frozenOwner = await uploadOwner(record);
    slow.freeze();
    const [job] = await jobsNamed(stack.sim.baseUrl, handle.workflowId);
    if (!job) throw new Error('no job was made');

    await workers.start();
    // The other worker's attempt has claimed the upload (its first Updates may wait for the frozen worker's
    // sticky tasks to time out): from here the old wait let it read the job and send within a second.
    await waitFor(async () => {
      const owner = await uploadOwner(record);
      return pastDelivery() || (owner !== undefined && owner !== frozenOwner) ? true : undefined;
    });
    // Its first service call (its budget reservation may wait for the frozen worker's ledger tasks): with the
    // old wait a read of the job as `new` and then a PUT; with the bound, nothing until it has passed.
    const claimedAt = Date.now();
    const statusReads = async () =>
      (await simRequests(stack.sim.baseUrl)).filter((r) => r.endpoint === 'jobStatus' && r.path.endsWith(`/${job.id}`));
    const readsBefore = (await statusReads()).length;
    const readAt = await waitFor(async () => {
      if ((await statusReads()).length > readsBefore) return Date.now();
      return pastDelivery() || Date.now() >= claimedAt + QUIET_MS ? 0 : undefined;
    });
    if (readAt > 0) {
      const until = readAt + TAKEOVER_RUNS_MS;
      await waitFor(async () => {
        const sentItself = (await putsTo(stack, job.id)).some((put) => put.bodyComplete === true);
        return sentItself || pastDelivery() || Date.now() >= until ? true : undefined;
      });
    }
    proxy.release();

    const result = await handle.result();
    expect(result).toMatchObject({ jobId: job.id, state: 'completed', uploadSkipped: true });
    expect(activityWorkers(await handle.fetchHistory(), 'uploadData')).not.toContain(slow.identity);
    const [late, ...more] = await putsTo(stack, job.id);
    expect(more).toEqual([]);
    expect(late).toMatchObject({ status: 200, bodyComplete: true, body: { bytes: file.length } });
    expect(stack.sim.record().bodiesByJob[job.id]).toHaveLength(1);
    expect(stack.sim.job(job.id)?.sha256).toBe(sha256(file));
  }, 400_000);
});

/** The job record of the import's file version (the only record of this stack's run). */
async function recordOf(stack: OperatorStack, importId: string) {
  const id = await waitFor(async () => {
    for await (const run of stack.env.client.workflow.list({ query: `WorkflowType="${JOB_RECORD_WORKFLOW_TYPE}"` })) {
      return run.workflowId;
    }
    return undefined;
  });
  const handle = stack.env.client.workflow.getHandle(id);
  const view = await handle.query(jobRecordQuery);
  expect(view.openIntents.find((i) => i.intent === 'upload')?.owner.workflowId).toBe(importId);
  return handle;
}

/** Which attempt owns the upload now, as "activityId@scheduledMs"; undefined while the record cannot answer. */
async function uploadOwner(record: WorkflowHandle): Promise<string | undefined> {
  const view = await record.query(jobRecordQuery).catch(() => undefined);
  if (!view) return undefined;
  const owner = view.openIntents.find((i) => i.intent === 'upload')?.owner;
  return owner && `${owner.activityId}@${owner.scheduledMs}`;
}
