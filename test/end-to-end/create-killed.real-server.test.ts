/**
 * Issue 19 case 1 with a real worker process on a real Temporal dev server: a
 * create attempt killed (SIGKILL) after its POST left and the service made
 * the job, before the answer came, with nothing after the kill to tell the
 * next attempt what it did. The job is listed 15 s late and pushed off the
 * first page by newer jobs. Another worker process's attempt finds that job
 * through the version's job record and a search of `new` jobs, and creates
 * none.
 *
 * Slow by nature: Temporal gives the create to another worker only when its
 * heartbeat timeout (2 min) passes, and nothing here shortens the product's
 * timeouts.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ImportFileInput } from '../../workflows/contracts/import-input.js';
import type { importFile } from '../../workflows/import-file.js';
import { DEMO_TOKENS } from '../simulator/server.js';
import { activityWorkers, waitFor } from '../support/operator-actions.js';
import { accountsCsv, type OperatorStack, STACK_BUCKET, startOperatorStack } from '../support/operator-stack.js';
import { jobsNamed, simRequests } from '../support/sim-inspect.js';
import { startWorkerProcess, type WorkerProcess } from '../support/worker-process.js';

const file = accountsCsv(64 * 1024);

describe('a create attempt killed after its POST left', () => {
  let stack: OperatorStack;
  const processes: WorkerProcess[] = [];

  beforeAll(async () => {
    stack = await startOperatorStack({ simulator: { processingMs: 500 } });
    await stack.putObject('created.csv', file);
  }, 180_000);

  afterAll(async () => {
    await Promise.allSettled(processes.map((p) => p.stop()));
    await stack?.close();
  });

  async function workerProcess(): Promise<WorkerProcess> {
    const worker = await startWorkerProcess(stack.workerEnv());
    processes.push(worker);
    return worker;
  }

  it('case 1: the next attempt finds the job, listed 15 s late and off the first page, and creates none', async () => {
    const first = await workerProcess();
    // The service makes the job, lists it only 15 s later, and holds its answer back until the worker is gone.
    stack.sim.jobFaults.listCreatedLate(15_000);
    stack.sim.delayNext('createJob', 10 * 60_000);
    const workflowId = `create-killed-${randomUUID()}`;
    const handle = await stack.env.client.workflow.start<typeof importFile>('importFile', {
      taskQueue: stack.taskQueue,
      workflowId,
      args: [
        {
          source: { bucket: STACK_BUCKET, key: 'created.csv' },
          dataImportName: `killed create ${workflowId}`,
          entityType: 'Account',
          listAction: 'insert',
        } satisfies ImportFileInput,
      ],
    });
    const [made] = await waitFor(async () => {
      const jobs = await jobsNamed(stack.sim.baseUrl, workflowId);
      return jobs.length > 0 ? jobs : undefined;
    });
    await first.kill();
    // Newer jobs push it off the first page the worker asks for (50 a page).
    for (let k = 0; k < 60; k++) {
      await fetch(`${stack.sim.baseUrl}/import/v1/job`, {
        method: 'POST',
        headers: { authorization: `Bearer ${DEMO_TOKENS.importer}`, 'content-type': 'application/json' },
        body: JSON.stringify({ dataImportName: `someone else ${k}`, entityType: 'Account' }),
      });
    }
    const second = await workerProcess();
    const result = await handle.result();

    expect(result).toMatchObject({ jobId: String(made?.id), jobReused: true, state: 'completed' });
    expect(await jobsNamed(stack.sim.baseUrl, workflowId)).toHaveLength(1);
    // The killed worker's one POST and the 60 newer jobs': no second create.
    const creates = (await simRequests(stack.sim.baseUrl)).filter((r) => r.endpoint === 'createJob');
    expect(creates).toHaveLength(61);
    expect(activityWorkers(await handle.fetchHistory(), 'createImportJob')).toEqual([second.identity]);
  }, 400_000);
});
