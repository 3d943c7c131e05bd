/**
 * A worker process killed with SIGKILL in the middle of an import, on a real
 * Temporal dev server, with three imports in flight: one mid-upload of the
 * second part of a file split into two jobs (part 1 completed; the simulator
 * holds part 2's PUT open after its first 512 KiB), one whose last byte went
 * out but whose answer has not come (the service took the file and answers
 * late), one mid-poll (the simulator holds its job processing until the
 * kill). Another worker process finishes all three: the same job each (each
 * part), the body byte-exact (the simulator's sha256), no second job and no
 * second accepted upload; every row of the split file in exactly one part.
 *
 * Temporal notices a dead worker only when the activity's heartbeat timeout
 * passes: the workers run a bundle with short heartbeat timeouts
 * (test/support/short-heartbeat-timeouts.ts), seconds instead of the
 * product's 1 minute for uploads and 2 for polls. The kills share one wait.
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
import { acceptedPuts, jobsNamed, simRequests } from '../support/sim-inspect.js';

const MiB = 1024 * 1024;
/** Above the poll and late files, which each go as one job, byte for byte. */
const MAX_PART_BYTES = 2.1 * MiB;
// Two parts of about 2 MiB: part 2 is still mid-body when the service stops reading it after 512 KiB.
const uploadFile = accountsCsv(4 * MiB);
const uploadParts = canonicalParts(uploadFile, MAX_PART_BYTES);
const pollFile = accountsCsv(MiB / 2);
const lateFile = accountsCsv(MiB);

describe('a worker process killed mid-import', () => {
  let stack: OperatorStack;
  let workers: WorkerPool;

  beforeAll(async () => {
    // The simulator commits and lists at once, so the record's lease and the service's lag are short (3 s,
    // 1 s): an upload's takeover waits them.
    stack = await startOperatorStack({
      simulator: { processingMs: 2_000 },
      workerEnv: {
        IMPORT_RECORD_LEASE: '3s',
        IMPORT_RECORD_LAG: '1s',
        IMPORT_MAX_PART_BYTES: String(Math.floor(MAX_PART_BYTES)),
      },
      heartbeatTimeouts: 'short',
    });
    workers = workerPool(stack);
    await stack.putObject('upload.csv', uploadFile);
    await stack.putObject('poll.csv', pollFile);
    await stack.putObject('late.csv', lateFile);
  }, 180_000);

  afterAll(async () => {
    await workers?.close();
    await stack?.close();
  });

  const start = (key: string) => startImport(stack, key, 'killed-worker');

  it('another worker process finishes the uploads and the poll: the same job each, byte-exact, accepted once', async () => {
    expect(uploadParts).toHaveLength(2);
    const first = await workers.start();

    // Mid-poll: the job took the data and is processing (held so until the kill); the worker has polled it.
    stack.sim.jobFaults.holdProcessing();
    const polling = await start('poll.csv');
    const [pollJob] = await waitFor(async () => {
      const jobs = await jobsNamed(stack.sim.baseUrl, polling.workflowId);
      return jobs[0]?.uploads === 1 ? jobs : undefined;
    });
    // Waiting on it: the job watcher has listed the processing jobs since the upload (one status read only confirms the end).
    await waitFor(async () => {
      const requests = await simRequests(stack.sim.baseUrl);
      const uploadAt = requests.find((r) => r.path === `/import/v1/job/${pollJob!.id}/data`)?.at;
      const swept = requests.some(
        (r) =>
          r.endpoint === 'listJobs' &&
          r.query?.includes('state=processing') &&
          uploadAt !== undefined &&
          r.at > uploadAt,
      );
      return swept ? true : undefined;
    });

    // Mid-upload of part 2 (part 1 completed): the service stops reading its PUT after 512 KiB, so it stays open.
    let creates = 0;
    const stopListening = stack.sim.onRequest((request) => {
      if (request.endpoint !== 'createJob' || ++creates < 2) return;
      stack.sim.stallUploadAfter(MiB / 2);
      stopListening();
    });
    const uploading = await start('upload.csv');
    const [part1Job, uploadJob] = await waitFor(async () => {
      const jobs = await jobsNamed(stack.sim.baseUrl, uploading.workflowId);
      return jobs.length === 2 && (await putsTo(stack, jobs[1]!.id)).length === 1 ? jobs : undefined;
    });

    // After the last byte: the service took the file and holds its answer back.
    stack.sim.delayNext('submitData', 10 * 60_000);
    const answeredLate = await start('late.csv');
    const lateJob = await waitFor(async () => {
      const [job] = await jobsNamed(stack.sim.baseUrl, answeredLate.workflowId);
      return job?.uploads === 1 ? job : undefined;
    });

    await first.kill();
    expect(stack.sim.job(pollJob!.id)?.state).toBe('processing');
    expect(stack.sim.job(part1Job!.id)?.state).toBe('completed');
    expect(stack.sim.job(uploadJob!.id)?.state).toBe('new');
    expect((await putsTo(stack, lateJob.id)).map((r) => r.status)).toEqual([0]);
    // The held job ends as usual from here (every other fault was already drawn by its request).
    stack.sim.clearFaults();
    const second = await workers.start();

    const [uploaded, late, polled] = await Promise.all([uploading.result(), answeredLate.result(), polling.result()]);

    const uploadRows = uploadFile.toString().split('\n').length - 2;
    expect(uploaded).toMatchObject({
      jobId: part1Job!.id,
      state: 'completed',
      bytes: uploadParts[0]!.length + uploadParts[1]!.length,
      rows: { read: uploadRows, sent: uploadRows, parts: 2 },
    });
    expect(uploaded.parts?.map((p) => p.jobId)).toEqual([part1Job!.id, uploadJob!.id]);
    expect(await jobsNamed(stack.sim.baseUrl, uploading.workflowId)).toEqual(
      [part1Job!, uploadJob!].map((job, i) =>
        expect.objectContaining({ id: job.id, state: 'completed', uploads: 1, bytesReceived: uploadParts[i]!.length }),
      ),
    );
    for (const [i, job] of [part1Job!, uploadJob!].entries()) {
      expect(stack.sim.job(job.id)?.sha256).toBe(sha256(uploadParts[i]!));
      expect(await acceptedPuts(stack.sim.baseUrl, job.id)).toHaveLength(1);
    }
    // Part 1's one PUT; part 2's: the killed worker's, never answered, then the second worker's whole part.
    expect((await putsTo(stack, part1Job!.id)).map((r) => r.status)).toEqual([200]);
    expect((await putsTo(stack, uploadJob!.id)).map((r) => r.status)).toEqual([0, 200]);
    expect(activityWorkers(await uploading.fetchHistory(), 'uploadData')).toEqual([first.identity, second.identity]);

    expect(late).toMatchObject({ jobId: lateJob.id, state: 'completed', bytes: lateFile.length, uploadSkipped: true });
    expect(await jobsNamed(stack.sim.baseUrl, answeredLate.workflowId)).toEqual([
      expect.objectContaining({ id: lateJob.id, state: 'completed', uploads: 1, bytesReceived: lateFile.length }),
    ]);
    expect(stack.sim.job(lateJob.id)?.sha256).toBe(sha256(lateFile));
    // The one PUT, taken by the service and never answered to the killed worker; none after it.
    expect((await putsTo(stack, lateJob.id)).map((r) => r.status)).toEqual([0]);
    expect(activityWorkers(await answeredLate.fetchHistory(), 'uploadData')).toEqual([second.identity]);

    expect(polled).toMatchObject({ jobId: pollJob!.id, state: 'completed', uploadSkipped: false });
    expect(await jobsNamed(stack.sim.baseUrl, polling.workflowId)).toEqual([
      expect.objectContaining({ id: pollJob!.id, state: 'completed', uploads: 1, bytesReceived: pollFile.length }),
    ]);
    expect(stack.sim.job(pollJob!.id)?.sha256).toBe(sha256(pollFile));
    expect(await acceptedPuts(stack.sim.baseUrl, pollJob!.id)).toHaveLength(1);
    expect((await putsTo(stack, pollJob!.id)).map((r) => r.status)).toEqual([200]);
    const pollHistory = await polling.fetchHistory();
    expect(activityWorkers(pollHistory, 'uploadData')).toEqual([first.identity]);
    expect(activityWorkers(pollHistory, 'awaitJobCompletion')).toEqual([second.identity]);
  }, 300_000);
});
