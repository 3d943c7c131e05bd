/**
 * Two worker processes share the tenant's sweeps through the sweep board,
 * each with one import waiting in it (one poll slot each, both waits started
 * before the freeze). The process that
 * holds a claimed round is frozen (SIGSTOP) before it publishes: the other
 * takes the round over once the lease runs out (2 s here, a minute in
 * production) and the import waiting in it completes while the holder is
 * still frozen (the jobs end only after the takeover); thawed, the frozen
 * process finishes its own import. Each job is uploaded once.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { WorkflowHandle } from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import { afterAll, beforeAll, describe, expect, it, onTestFailed } from 'vitest';
import { sweepBoardQuery } from '../../workflows/contracts/messages.js';
import { sweepBoardWorkflowId } from '../../workflows/contracts/sweep-board.js';
import { type KillableWorker, startImport, type WorkerPool, workerPool } from '../support/killable-worker.js';
import { waitFor } from '../support/operator-actions.js';
import { accountsCsv, type OperatorStack, startOperatorStack } from '../support/operator-stack.js';
import { acceptedPuts, jobsNamed } from '../support/sim-inspect.js';

const LEASE_MS = 2_000;

describe('the process holding the sweep round freezes', () => {
  let stack: OperatorStack;
  let workers: WorkerPool;

  beforeAll(async () => {
    // Jobs stay processing until the test lets them end (after the takeover), then end at once.
    // Short heartbeat timeouts: a task the frozen process had taken waits 15 s for it, not minutes.
    stack = await startOperatorStack({ simulator: { processingMs: 200 }, heartbeatTimeouts: 'short' });
    stack.sim.jobFaults.holdProcessing(2);
    workers = workerPool(stack);
    await Promise.all(['one.csv', 'two.csv'].map((key, i) => stack.putObject(key, accountsCsv(64 + i))));
  }, 180_000);

  afterAll(async () => {
    await workers?.close();
    await stack?.close();
  });

  it('the other process takes the round over and its import completes; thawed, the frozen one finishes', async () => {
    // One wait per process: each process has an import of its own to sweep for.
    // The frozen process's cached workflows (the board, records, imports) move to the survivor within a second.
    const options = { env: { WORKER_MAX_CONCURRENT_POLLS: '1' }, sweepLeaseMs: LEASE_MS, stickyQueueTimeoutMs: 1_000 };
    const fleet = await Promise.all([workers.start(options), workers.start(options)]);
    // A query times out while the board's workflow is cached in the frozen process: read until one is answered.
    const board = () =>
      waitFor(() =>
        stack.env.client.workflow
          .getHandle(sweepBoardWorkflowId(stack.workerEnv().IMPORT_TENANT ?? 'default'))
          .query(sweepBoardQuery)
          .catch(() => undefined),
      );
    const processOf = (holder: string | undefined) => fleet.find((w) => holder?.startsWith(`${w.pid}-`));
    // Where it stopped, should it ever time out: the step, the board and the jobs then.
    let step = 'starting the imports';
    const jobIds: string[] = [];
    onTestFailed(async () => {
      const view = await stack.env.client.workflow
        .getHandle(sweepBoardWorkflowId(stack.workerEnv().IMPORT_TENANT ?? 'default'))
        .query(sweepBoardQuery)
        .catch((err: unknown) => String(err));
      const states = jobIds.map((id) => `${id} ${stack.sim.job(id)?.state}`).join(', ');
      console.error(`sweep-holder-frozen failed while ${step}; board ${JSON.stringify(view)}; jobs ${states}`);
      for (const w of fleet)
        console.error(`worker ${w.pid}, its last log lines:\n${w.output().split('\n').slice(-25).join('\n')}`);
    });

    const imports = await Promise.all(['one.csv', 'two.csv'].map((key) => startImport(stack, key, 'holder-frozen')));
    const jobs = await Promise.all(
      imports.map((handle) =>
        waitFor(async () => {
          const [found] = await jobsNamed(stack.sim.baseUrl, handle.workflowId);
          return found?.uploads === 1 ? found : undefined;
        }),
      ),
    );

    jobIds.push(...jobs.map((job) => String(job.id)));
    // Each process runs one import's wait before any freeze: a wait still queued could go to the process about to
    // freeze and sit there until its heartbeat timeout, and the survivor would have no import to complete.
    step = 'waiting for each process to run one wait';
    await waitFor(async () => {
      const runners = await Promise.all(imports.map(waitingIn));
      return runners.every(Boolean) && new Set(runners).size === fleet.length ? true : undefined;
    });
    step = 'freezing the process that holds a round';
    // The next sweep's list is answered 3 s late: its maker holds the round that long, unpublished. Freeze it then.
    stack.sim.delayNext('listJobs', 3_000, { count: 1 });
    const { frozen, round } = await waitFor(
      async (): Promise<{ frozen: KillableWorker; round: number } | undefined> => {
        const view = await board();
        const lease = view?.lease;
        const holder = processOf(lease?.holder);
        if (!view || !lease || lease.forSeq !== view.seq || !holder) return undefined;
        holder.freeze();
        // A publish already on its way would land now: then it was not holding the round.
        await sleep(500);
        const after = await board();
        if (after.seq === view.seq && after.lease?.holder === lease.holder) return { frozen: holder, round: view.seq };
        holder.thaw();
        return undefined;
      },
      10,
    );
    const frozenAtMs = Date.now();
    const survivor = fleet.find((w) => w !== frozen);

    step = 'waiting for the survivor to publish the frozen round';
    // The round the frozen process held is published by the survivor.
    const takenOver = await waitFor(async () => (await board()).sweeps.find((s) => s.seq === round + 1));
    expect(processOf(takenOver.holder)).toBe(survivor);
    for (const job of jobs) expect(stack.sim.job(String(job.id))?.state).toBe('processing');
    stack.sim.clearFaults();

    step = "waiting for the survivor's import";
    // The survivor's import completes while the holder is still frozen.
    const first = await Promise.race(imports.map(async (handle, i) => ({ i, result: await handle.result() })));
    expect(first.result).toMatchObject({ jobId: String(jobs[first.i]?.id), state: 'completed', uploadSkipped: false });
    const later = (await board()).sweeps.filter((s) => Date.parse(s.startedAt) > frozenAtMs);
    expect(later.length).toBeGreaterThan(0);
    for (const sweep of later) expect(processOf(sweep.holder)).toBe(survivor);

    step = "waiting for the thawed process's import";
    frozen.thaw();
    const other = imports[1 - first.i];
    expect(await other?.result()).toMatchObject({ jobId: String(jobs[1 - first.i]?.id), state: 'completed' });
    for (const job of jobs) expect(await acceptedPuts(stack.sim.baseUrl, String(job.id))).toHaveLength(1);
  }, 240_000);
});

/** The worker identity running the import's job wait, once it has started. */
async function waitingIn(handle: WorkflowHandle): Promise<string | undefined> {
  const pending = (await handle.describe()).raw.pendingActivities ?? [];
  const wait = pending.find(
    (a) =>
      a.activityType?.name === 'awaitJobCompletion' &&
      a.state === temporal.api.enums.v1.PendingActivityState.PENDING_ACTIVITY_STATE_STARTED,
  );
  return wait?.lastWorkerIdentity ?? undefined;
}
