/**
 * Two worker processes share the tenant's sweeps of the processing list
 * through the sweep board. The process that made the sweep listing an
 * import's job is killed (SIGKILL) while the job still processes: the import
 * completes on the other process, the same job, uploaded once, and no sweep
 * after the kill comes from the dead process.
 *
 * The simulator holds the job processing until a sweep began after the kill.
 * Two waits make up most of the time after the kill, both shortened here: a
 * claimed round is left to its holder for the sweep lease (5 s here, a
 * minute in the product), and an import's wait that ran in the killed process
 * is retried only after its heartbeat timeout (the workers run a bundle with
 * short heartbeat timeouts, test/support/short-heartbeat-timeouts.ts: seconds
 * instead of 2 minutes).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sweepBoardQuery } from '../../workflows/contracts/messages.js';
import { sweepBoardWorkflowId } from '../../workflows/contracts/sweep-board.js';
import { startImport, type WorkerPool, workerPool } from '../support/killable-worker.js';
import { waitFor } from '../support/operator-actions.js';
import { accountsCsv, type OperatorStack, startOperatorStack } from '../support/operator-stack.js';
import { acceptedPuts, jobsNamed } from '../support/sim-inspect.js';

/** How long a claimed round is left to its holder: the survivor takes the dead sweeper's over after this. */
const SWEEP_LEASE_MS = 5_000;

describe('the process that sweeps for the tenant is killed', () => {
  let stack: OperatorStack;
  let workers: WorkerPool;

  beforeAll(async () => {
    // The import's job is held processing until a sweep began after the kill (holdProcessing).
    stack = await startOperatorStack({ simulator: { processingMs: 500 }, heartbeatTimeouts: 'short' });
    workers = workerPool(stack, { sweepLeaseMs: SWEEP_LEASE_MS });
    await stack.putObject('swept.csv', accountsCsv(4096));
  }, 180_000);

  afterAll(async () => {
    await workers?.close();
    await stack?.close();
  });

  it("the import completes, and every sweep after the kill is the survivor's", async () => {
    const fleet = [await workers.start(), await workers.start()];
    const board = () =>
      stack.env.client.workflow
        .getHandle(sweepBoardWorkflowId(stack.workerEnv().IMPORT_TENANT ?? 'default'))
        .query(sweepBoardQuery);

    stack.sim.jobFaults.holdProcessing();
    const handle = await startImport(stack, 'swept.csv', 'sweeper-killed');
    const job = await waitFor(async () => {
      const [found] = await jobsNamed(stack.sim.baseUrl, handle.workflowId);
      return found?.uploads === 1 ? found : undefined;
    });
    const sweptBy = await waitFor(
      async () =>
        (await board().catch(() => undefined))?.sweeps.find((s) => s.listed?.includes(String(job.id)))?.holder,
    );
    const sweeper = fleet.find((w) => sweptBy.startsWith(`${w.pid}-`));
    const survivor = fleet.find((w) => w !== sweeper);
    expect(sweeper).toBeDefined();

    await sweeper?.kill();
    const killedAtMs = Date.now();
    expect(stack.sim.job(String(job.id))?.state).toBe('processing');
    // The job ends only once some process swept after the kill, so the check below has sweeps to judge.
    await waitFor(async () =>
      (await board().catch(() => undefined))?.sweeps.some((s) => Date.parse(s.startedAt) > killedAtMs)
        ? true
        : undefined,
    );
    stack.sim.clearFaults();

    expect(await handle.result()).toMatchObject({ jobId: String(job.id), state: 'completed', uploadSkipped: false });
    expect(await jobsNamed(stack.sim.baseUrl, handle.workflowId)).toEqual([
      expect.objectContaining({ id: job.id, state: 'completed', uploads: 1 }),
    ]);
    expect(await acceptedPuts(stack.sim.baseUrl, String(job.id))).toHaveLength(1);
    // Every sweep after the kill is the survivor's.
    const later = (await board()).sweeps.filter((s) => Date.parse(s.startedAt) > killedAtMs);
    expect(later).not.toEqual([]);
    for (const sweep of later) expect(sweep.holder.startsWith(`${survivor?.pid}-`)).toBe(true);
  }, 420_000);
});
