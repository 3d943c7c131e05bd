/**
 * A killed create, with a real worker process on a real Temporal dev server: a
 * create attempt killed (SIGKILL) after its POST left and the service made
 * the job, before the answer came; its last heartbeats (held back by the
 * SDK's throttle) die with it. The job is listed 5 s late (within the
 * service's lag the workers are given, 6 s), among 120 other new jobs. Another worker process's attempt finds that job through the
 * version's job record and a search of `new` jobs from the first page, and
 * creates none. (The old way resumed its search at the page the last
 * delivered heartbeat named, past the new job, and created a second.)
 *
 * Temporal gives the create to another worker only when its heartbeat timeout
 * passes: the workers run a bundle with short heartbeat timeouts
 * (test/support/short-heartbeat-timeouts.ts), so that takes seconds, not the
 * product's 2 minutes.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEMO_TOKENS } from '../simulator/server.js';
import { startImport, type WorkerPool, workerPool } from '../support/killable-worker.js';
import { activityWorkers, waitFor } from '../support/operator-actions.js';
import { accountsCsv, type OperatorStack, startOperatorStack } from '../support/operator-stack.js';
import { jobsNamed, simRequests } from '../support/sim-inspect.js';

const file = accountsCsv(64 * 1024);

describe('a create attempt killed after its POST left', () => {
  let stack: OperatorStack;
  let workers: WorkerPool;

  beforeAll(async () => {
    stack = await startOperatorStack({
      simulator: { processingMs: 500 },
      workerEnv: { IMPORT_RECORD_LEASE: '3s', IMPORT_RECORD_LAG: '6s' },
      heartbeatTimeouts: 'short',
    });
    workers = workerPool(stack);
    await stack.putObject('created.csv', file);
  }, 180_000);

  afterAll(async () => {
    await workers?.close();
    await stack?.close();
  });

  it('case 1: the next attempt finds the job, listed 5 s late among 120 others, and creates none', async () => {
    // Someone else's 120 jobs: the first attempt pages through them before it creates (the old way did).
    for (let k = 0; k < 120; k++) {
      await fetch(`${stack.sim.baseUrl}/import/v1/job`, {
        method: 'POST',
        headers: { authorization: `Bearer ${DEMO_TOKENS.importer}`, 'content-type': 'application/json' },
        body: JSON.stringify({ dataImportName: `someone else ${k}`, entityType: 'Account' }),
      });
    }
    const first = await workers.start();
    // The service makes the job, lists it only 5 s later, and holds its answer back until the worker is gone.
    stack.sim.jobFaults.listCreatedLate(5_000);
    stack.sim.delayNext('createJob', 10 * 60_000);
    const handle = await startImport(stack, 'created.csv', 'create-killed');
    const { workflowId } = handle;
    const [made] = await waitFor(async () => {
      const jobs = await jobsNamed(stack.sim.baseUrl, workflowId);
      return jobs.length > 0 ? jobs : undefined;
    });
    await first.kill();
    const second = await workers.start();
    const result = await handle.result();

    expect(result).toMatchObject({ jobId: String(made?.id), jobReused: true, state: 'completed' });
    expect(await jobsNamed(stack.sim.baseUrl, workflowId)).toHaveLength(1);
    // The 120 other jobs' POSTs and the killed worker's one: no second create.
    const creates = (await simRequests(stack.sim.baseUrl)).filter((r) => r.endpoint === 'createJob');
    expect(creates).toHaveLength(121);
    expect(activityWorkers(await handle.fetchHistory(), 'createImportJob')).toEqual([second.identity]);
  }, 400_000);
});
