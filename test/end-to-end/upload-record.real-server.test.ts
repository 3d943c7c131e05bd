/**
 * The job record's upload cases (killed, frozen, cut off, reset) on a real Temporal dev server with real worker
 * processes, against a LENIENT simulator (it accepts every complete PUT that
 * began while the job was `new`, as a real service may): nothing here counts
 * on the service refusing a second body. Every PUT is read slowly (chaos
 * throttle), so an upload is long enough to be frozen in the middle.
 *
 * - case 8: attempt 1's PUT is reset midway; attempt 2's whole body is
 *   accepted, its answer held back, and its worker frozen (to Temporal, dead:
 *   its throttled heartbeats never arrive). The next attempt, on another
 *   worker, finds the job out of `new`: success, not UploadIncomplete.
 * - case 2: a worker frozen (SIGSTOP) past the heartbeat timeout, mid-body
 *   of the second part of a file split into two jobs (the service stops
 *   reading that PUT after its first MiB); another worker's attempt takes the
 *   part's upload over and sends it; the frozen one, thawed and read on,
 *   reaches its last bytes: the record refuses them, so its request ends
 *   short. One complete body reaches each part's job, every row in one part.
 * - case 4: the connection reset after all but the last bytes, nothing
 *   committed: the import sends the file again by itself and completes.
 *
 * Temporal gives a frozen worker's upload to another only when the
 * activity's heartbeat timeout passes: the workers run a bundle with short
 * heartbeat timeouts (test/support/short-heartbeat-timeouts.ts), seconds
 * instead of the product's minute. Both freezes share it. A workflow cached
 * in the frozen worker (an import, its job record, the ledger) waits for it
 * on its sticky queue before any worker may take its next task: the SDK's
 * 10 s at each such step, here 1 s.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { putsTo, startImport, type WorkerPool, workerPool } from '../support/killable-worker.js';
import { activityWorkers, waitFor } from '../support/operator-actions.js';
import {
  accountsCsv,
  canonicalParts,
  type OperatorStack,
  sha256,
  startOperatorStack,
} from '../support/operator-stack.js';
import { jobsNamed } from '../support/sim-inspect.js';

const MiB = 1024 * 1024;
const acceptedLostFile = accountsCsv(MiB);
/** Above the other files here, which each go as one job, byte for byte. */
const MAX_PART_BYTES = 4.5 * MiB;
// Two parts; the second (about 4 MiB) far more than the kernel's socket buffers hold past the service's
// first MiB, so a frozen worker's body cannot finish from them.
const frozenFile = accountsCsv(8 * MiB);
const frozenParts = canonicalParts(frozenFile, MAX_PART_BYTES);
const resetFile = accountsCsv(MiB);

describe('uploads through the job record (lenient service)', () => {
  let stack: OperatorStack;
  let workers: WorkerPool;

  beforeAll(async () => {
    stack = await startOperatorStack({
      simulator: {
        processingMs: 2_000,
        lenientUploads: true,
        chaos: { seed: 19, rates: { throttleUpload: 1 }, throttleBytesPerSec: 4 * MiB },
      },
      // The simulator commits and lists at once: the record's lease and the service's lag can be short.
      workerEnv: { IMPORT_RECORD_LEASE: '3s', IMPORT_RECORD_LAG: '1s', IMPORT_MAX_PART_BYTES: String(MAX_PART_BYTES) },
      heartbeatTimeouts: 'short',
    });
    workers = workerPool(stack);
    await stack.putObject('accepted-lost.csv', acceptedLostFile);
    await stack.putObject('frozen.csv', frozenFile);
    await stack.putObject('reset.csv', resetFile);
  }, 180_000);

  afterAll(async () => {
    await workers?.close();
    await stack?.close();
  });

  const start = (key: string) => startImport(stack, key, 'record-upload');
  const bodiesOf = (jobId: string) => stack.sim.record().bodiesByJob[jobId] ?? [];

  it('case 8 and case 2: a frozen worker neither fails an accepted file nor completes a second body', async () => {
    const first = await workers.start({ stickyQueueTimeoutMs: 1_000 });

    // Case 8: attempt 1's PUT is reset midway; attempt 2's body is taken and its answer held back. Both set
    // before the import starts: attempt 2's PUT can arrive before the test has seen attempt 1's.
    stack.sim.resetUploadAfter(256 * 1024);
    stack.sim.delayNext('submitData', 10 * 60_000, { count: 2 });
    const acceptedLost = await start('accepted-lost.csv');
    const lostJob = await waitFor(async () => {
      const [job] = await jobsNamed(stack.sim.baseUrl, acceptedLost.workflowId);
      return job && (await putsTo(stack, job.id)).length > 0 ? job : undefined;
    });
    await waitFor(() => (bodiesOf(lostJob.id).length === 1 ? true : undefined), 20);

    // Case 2: another import's second part is mid-body when its worker freezes (the service holds it after 1 MiB).
    expect(frozenParts).toHaveLength(2);
    let creates = 0;
    const stopListening = stack.sim.onRequest((request) => {
      if (request.endpoint !== 'createJob' || ++creates < 2) return;
      stack.sim.holdUploadAfter(MiB);
      stopListening();
    });
    const frozen = await start('frozen.csv');
    const [part1Job, frozenJob] = await waitFor(async () => {
      const jobs = await jobsNamed(stack.sim.baseUrl, frozen.workflowId);
      return jobs.length === 2 && (await putsTo(stack, jobs[1]!.id)).length === 1 ? jobs : undefined;
    });
    first.freeze();
    expect(stack.sim.job(part1Job!.id)?.state).not.toBe('new');
    expect(stack.sim.job(frozenJob!.id)?.state).toBe('new');
    expect(stack.sim.job(lostJob.id)?.state).not.toBe('new');

    const second = await workers.start();
    const [lostResult, frozenResult] = await Promise.all([acceptedLost.result(), frozen.result()]);

    // Case 8: the job holds the whole file, so the import succeeds with it; nothing was sent again.
    expect(lostResult).toMatchObject({ jobId: lostJob.id, state: 'completed', uploadSkipped: true });
    expect(bodiesOf(lostJob.id)).toHaveLength(1);
    expect(stack.sim.job(lostJob.id)?.sha256).toBe(sha256(acceptedLostFile));
    expect((await putsTo(stack, lostJob.id)).length).toBe(2);
    expect(activityWorkers(await acceptedLost.fetchHistory(), 'uploadData')).toEqual([second.identity]);

    // Case 2: the second worker sent part 2; thawed and read on, the frozen one must not complete its own body.
    expect(frozenResult).toMatchObject({ jobId: part1Job!.id, state: 'completed' });
    expect(frozenResult.parts?.map((p) => [p.jobId, p.uploadSkipped])).toEqual([
      [part1Job!.id, false],
      [frozenJob!.id, false],
    ]);
    first.thaw();
    stack.sim.releaseHeldUploads();
    // Its PUT ends (short) once it meets the fence, after its S3 read and the throttle, or is cut by its cancel.
    const [frozenPut] = await waitFor(async () => {
      const puts = await putsTo(stack, frozenJob!.id);
      return puts[0]?.bodyComplete === undefined ? undefined : puts;
    });
    expect(frozenPut).toMatchObject({ bodyComplete: false });
    for (const [i, job] of [part1Job!, frozenJob!].entries()) {
      expect(bodiesOf(job.id)).toEqual([
        expect.objectContaining({ bytes: frozenParts[i]!.length, sha256: sha256(frozenParts[i]!) }),
      ]);
    }
    const rows = frozenFile.toString().split('\n').length - 2;
    expect(frozenResult.rows).toMatchObject({ read: rows, sent: rows, parts: 2 });
    expect(await jobsNamed(stack.sim.baseUrl, frozen.workflowId)).toHaveLength(2);
    expect(activityWorkers(await frozen.fetchHistory(), 'uploadData')).toEqual([first.identity, second.identity]);
  }, 300_000);

  it('case 4: a reset after all but the last bytes, nothing committed: sent again by itself, completed', async () => {
    // Only live workers poll here (the first test's frozen one is gone).
    await workers.close();
    await workers.start();
    // Every byte but the last reaches the service; then it resets the connection and commits nothing.
    stack.sim.resetUploadAfter(resetFile.length - 1);
    const handle = await start('reset.csv');

    const result = await handle.result();

    const [job] = await jobsNamed(stack.sim.baseUrl, handle.workflowId);
    expect(result).toMatchObject({ jobId: job!.id, state: 'completed', uploadSkipped: false });
    expect(bodiesOf(job!.id)).toHaveLength(1);
    expect(stack.sim.job(job!.id)?.sha256).toBe(sha256(resetFile));
    expect((await putsTo(stack, job!.id)).length).toBe(2);
  }, 120_000);
});
