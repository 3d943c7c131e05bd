/**
 * A frozen create, with real worker processes on a real Temporal dev server:
 * a worker frozen (SIGSTOP) in the middle of a create, the moment its POST
 * reaches the service, with every byte of its small body sent but the last,
 * which waits for the job record's confirm. Its link to Temporal is cut at
 * the same moment (it reaches Temporal only through a proxy the test cuts) and
 * stays cut after it thaws, so no confirm can reach it. Temporal times the
 * attempt out and another worker's attempt resolves the job.
 *
 * What the fence decides is shown while the worker is frozen: the takeover
 * done, its POST is still open one byte short (without the fence that byte
 * leaves with the rest, the service makes a job, and the takeover makes a
 * second). Thawed, the worker's POST ends short: its confirm cannot succeed,
 * and the SDK may cancel the attempt first (it knows the heartbeat timeout
 * passed); either way the last byte never leaves. Shut down, it has sent no
 * other POST. One job.
 *
 * Its request timeout is set to 10 minutes, so that no timeout of its own
 * ends its POST. Temporal gives the create to another worker only when its
 * heartbeat timeout passes: the workers run a bundle with short heartbeat
 * timeouts (test/support/short-heartbeat-timeouts.ts), seconds instead of the
 * product's 2 minutes. The record's lease and the service's lag are short
 * here (3 s, 1 s): the simulator commits and lists a job at once. The import
 * and its job record, cached in the frozen worker, wait for it on its sticky
 * queue before the other worker may take their next task: 1 s here, not the
 * SDK's 10 s.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startImport, type WorkerPool, workerPool } from '../support/killable-worker.js';
import { activityWorkers, waitFor } from '../support/operator-actions.js';
import { accountsCsv, type OperatorStack, startOperatorStack } from '../support/operator-stack.js';
import { jobsNamed, simRequests } from '../support/sim-inspect.js';

const file = accountsCsv(64 * 1024);

describe('case 3: a worker frozen in the middle of a create', () => {
  let stack: OperatorStack;
  let workers: WorkerPool;

  beforeAll(async () => {
    stack = await startOperatorStack({
      simulator: { processingMs: 500 },
      workerEnv: { IMPORT_RECORD_LEASE: '3s', IMPORT_RECORD_LAG: '1s' },
      heartbeatTimeouts: 'short',
    });
    workers = workerPool(stack);
    await stack.putObject('frozen-create.csv', file);
  }, 180_000);

  afterAll(async () => {
    await workers?.close();
    await stack?.close();
  });

  const creates = async () => (await simRequests(stack.sim.baseUrl)).filter((r) => r.endpoint === 'createJob');

  it('another worker resolves the job; thawed, the frozen one never completes its POST: one job', async () => {
    const frozen = await workers.start({
      behindProxy: true,
      env: { COMPANY_DATA_REQUEST_TIMEOUT: '10m' },
      stickyQueueTimeoutMs: 1_000,
    });
    const stopWatching = stack.sim.onRequest((request) => {
      if (request.endpoint !== 'createJob') return;
      frozen.freeze();
      frozen.cutOff();
      stopWatching();
    });
    const handle = await startImport(stack, 'frozen-create.csv', 'frozen-create');
    await waitFor(async () => ((await creates()).length === 1 ? true : undefined));
    const other = await workers.start();

    const result = await handle.result();
    const [job, ...otherJobs] = await jobsNamed(stack.sim.baseUrl, handle.workflowId);
    expect(otherJobs).toEqual([]);
    expect(result).toMatchObject({ jobId: job?.id, state: 'completed' });
    expect(activityWorkers(await handle.fetchHistory(), 'createImportJob')).toEqual([other.identity]);

    // Its POST is still open, every byte in but the last: the service made no job of it.
    const [open] = await creates();
    expect(open).toMatchObject({ status: 0 });
    expect(open?.bodyComplete).toBeUndefined();

    // Thawed and still cut off, it gets no lease: the POST ends short.
    frozen.thaw();
    const [held, made, ...morePosts] = await waitFor(async () => {
      const seen = await creates();
      return seen[0]?.bodyComplete === undefined ? undefined : seen;
    });
    expect(held).toMatchObject({ status: 0, bodyComplete: false });
    expect(made).toMatchObject({ status: 200, bodyComplete: true });
    expect(morePosts).toEqual([]);
    // Reconnected, then shut down (its running activities end first): it never sent another POST.
    frozen.reconnect();
    await frozen.stop();
    expect(await creates()).toHaveLength(2);
    expect(await jobsNamed(stack.sim.baseUrl, handle.workflowId)).toHaveLength(1);
  }, 400_000);
});
