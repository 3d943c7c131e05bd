/**
 * A file too large for one job, on the whole stack (real Temporal dev server,
 * the real worker, s3rver, the service simulator), with a part limit of
 * 100 kB injected so a 250 kB file makes three parts. Each part is a job of
 * its own: it receives exactly its rows, after the header, and every row is in
 * exactly one part, in order (the simulator's sha256 of each accepted body is
 * the witness). Uploads cut mid-body, a Reset after part 1 completed or to the
 * very start, and a file replaced at its key between parts keep one job and at
 * most one accepted body per part, never a body other than the planned one.
 */
import { randomUUID } from 'node:crypto';
import { WorkflowFailedError, type WorkflowHandle } from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import { temporal } from '@temporalio/proto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { main } from '../../worker/cli/main.js';
import type { ImportFileInput } from '../../workflows/contracts/import-input.js';
import type { ImportFileResult } from '../../workflows/contracts/import-workflow.js';
import type { importFile } from '../../workflows/import-file.js';
import {
  cliContext,
  firstWorkflowTask,
  resetActivityWithCli,
  resetWorkflow,
  waitFor,
} from '../support/operator-actions.js';
import { canonicalParts, type OperatorStack, sha256, startOperatorStack } from '../support/operator-stack.js';
import { acceptedPuts, jobsNamed, simRequests } from '../support/sim-inspect.js';

const MAX_PART_BYTES = 100_000;
const HEADER = 'Account Name,Account Domain';
const ROWS = 6_000;

/** The file as an export writes it (LF line ends), so the worker rewrites it as canonical CSV. */
function sourceFile(rows: number, domain = 'example.com'): Buffer {
  const lines = [HEADER];
  for (let i = 0; i < rows; i++) lines.push(`Company ${i},company-${i}.${domain}`);
  return Buffer.from(`${lines.join('\n')}\n`);
}

/** The bodies the service must receive: the canonical header, then whole CRLF rows while the part fits. */
const expectedParts = (rows: number): Buffer[] => canonicalParts(sourceFile(rows), MAX_PART_BYTES);

type ImportHandle = WorkflowHandle<typeof importFile>;
const EventType = temporal.api.enums.v1.EventType;
type History = temporal.api.history.v1.IHistory;

/** The WorkflowTaskCompleted event that scheduled the `n`th (1-based) `activityType` activity. */
function taskThatScheduledNth(history: History, activityType: string, n: number) {
  const events = history.events ?? [];
  const scheduled = events
    .map((e, i) => ({ e, i }))
    .filter(
      ({ e }) =>
        e.eventType === EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED &&
        e.activityTaskScheduledEventAttributes?.activityType?.name === activityType,
    )[n - 1];
  if (!scheduled) throw new Error(`fewer than ${n} ${activityType} activities were scheduled`);
  const task = events
    .slice(0, scheduled.i)
    .reverse()
    .find((e) => e.eventType === EventType.EVENT_TYPE_WORKFLOW_TASK_COMPLETED);
  if (!task?.eventId) throw new Error(`no workflow task completed before ${activityType} #${n}`);
  return task.eventId;
}

describe('a file split into several jobs, on the whole stack', () => {
  let stack: OperatorStack;
  const expected = expectedParts(ROWS);
  const file = sourceFile(ROWS);

  beforeAll(async () => {
    stack = await startOperatorStack({
      simulator: { processingMs: 300 },
      // Short fence times and heartbeats: an activity reset reaches a running upload within a second.
      workerEnv: {
        IMPORT_MAX_PART_BYTES: String(MAX_PART_BYTES),
        IMPORT_RECORD_LEASE: '3s',
        IMPORT_RECORD_LAG: '2s',
        WORKER_HEARTBEAT_THROTTLE: '1s',
      },
    });
    await stack.startWorker();
  }, 180_000);

  afterAll(async () => {
    await stack?.close();
  });

  function start(key: string): Promise<ImportHandle> {
    const workflowId = `split-${randomUUID()}`;
    const input: ImportFileInput = {
      source: { bucket: stack.bucket, key },
      dataImportName: `split ${workflowId}`,
      entityType: 'Account',
      listAction: 'insert',
    };
    return stack.env.client.workflow.start<typeof importFile>('importFile', {
      taskQueue: stack.taskQueue,
      workflowId,
      args: [input],
    });
  }

  /** Each planned part has one job, holding exactly one accepted body: the expected one. */
  async function expectOneBodyPerPart(workflowId: string, result: ImportFileResult): Promise<void> {
    const jobs = await jobsNamed(stack.sim.baseUrl, workflowId);
    expect(jobs).toHaveLength(expected.length);
    expect(result.parts?.map((p) => p.jobId).sort()).toEqual(jobs.map((j) => j.id).sort());
    for (const [i, part] of result.parts!.entries()) {
      const job = jobs.find((j) => j.id === part.jobId)!;
      expect(job.acceptedBodies).toEqual([
        expect.objectContaining({ bytes: expected[i]!.length, sha256: sha256(expected[i]!) }),
      ]);
      expect(job.state).toBe('completed');
      expect(await acceptedPuts(stack.sim.baseUrl, part.jobId)).toHaveLength(1);
    }
  }

  it('sends each part to a job of its own, every row once and in order, across uploads cut mid-body', async () => {
    expect(expected.length).toBe(3);
    await stack.putObject('exports/big.csv', file);
    // Parts 1 and 2 each lose their first PUT a few kB in: the sim's reset is armed as each part's job is created.
    let creates = 0;
    const stopListening = stack.sim.onRequest((request) => {
      if (request.endpoint === 'createJob' && ++creates <= 2) stack.sim.resetUploadAfter(10_000);
    });
    try {
      const handle = await start('exports/big.csv');
      const result = await handle.result();
      await expectOneBodyPerPart(handle.workflowId, result);

      const parts = result.parts!;
      expect(parts.map((p) => p.number)).toEqual([1, 2, 3]);
      // The parts cover the data rows end to end, in order (the header is row 1).
      expect(parts[0]!.firstRow).toBe(2);
      for (let i = 1; i < parts.length; i++) expect(parts[i]!.firstRow).toBe(parts[i - 1]!.lastRow + 1);
      expect(parts.at(-1)!.lastRow).toBe(ROWS + 1);
      expect(parts.reduce((sum, p) => sum + p.rowsSent, 0)).toBe(ROWS);
      expect(result.rows).toMatchObject({ body: 'canonical', read: ROWS, sent: ROWS, rejected: 0, parts: 3 });
      expect(result.bytes).toBe(expected.reduce((sum, b) => sum + b.length, 0));
      expect(result.jobId).toBe(parts[0]!.jobId);
      // One creation per part; the cut uploads were sent again to the same jobs.
      expect(result.apiCalls).toMatchObject({ createJob: 3 });
      const puts = (await simRequests(stack.sim.baseUrl)).filter((r) => r.endpoint === 'submitData');
      const putsTo = (jobId: string) => puts.filter((r) => r.path === `/import/v1/job/${jobId}/data`).length;
      expect(parts.map((p) => putsTo(p.jobId))).toEqual([2, 2, 1]);
    } finally {
      stopListening();
    }
  });

  it('an activity reset of part 2’s upload mid-body: part 2 still gets exactly one body', async () => {
    await stack.putObject('exports/activity-reset.csv', file);
    // Part 2's first PUT stops being read a few kB in, so the reset meets a running attempt.
    let creates = 0;
    const stopListening = stack.sim.onRequest((request) => {
      if (request.endpoint === 'createJob' && ++creates === 2) stack.sim.holdUploadAfter(10_000);
    });
    try {
      const handle = await start('exports/activity-reset.csv');
      const part2 = await waitFor(async () => {
        const jobs = await jobsNamed(stack.sim.baseUrl, handle.workflowId);
        const puts = (await simRequests(stack.sim.baseUrl)).filter((r) => r.endpoint === 'submitData');
        const job = jobs.find((j) => j.uploads === 0 && puts.some((r) => r.path === `/import/v1/job/${j.id}/data`));
        return jobs.length === 2 ? job : undefined;
      });
      await resetActivityWithCli(stack.env.client, stack.env.address, handle, 'uploadData', {
        clearHeartbeatDetails: true,
      });
      const result = await handle.result();
      stack.sim.releaseHeldUploads();
      expect(result.parts?.[1]?.jobId).toBe(part2.id);
      await expectOneBodyPerPart(handle.workflowId, result);
      // The held PUT never completed; the attempt after the reset sent part 2 again.
      const putsToPart2 = (await simRequests(stack.sim.baseUrl)).filter(
        (r) => r.endpoint === 'submitData' && r.path === `/import/v1/job/${part2.id}/data`,
      );
      expect(putsToPart2.length).toBeGreaterThanOrEqual(2);
    } finally {
      stopListening();
      stack.sim.clearFaults();
    }
  });

  it('a Reset after part 1 completed, then one to the start: the same jobs, nothing sent again', async () => {
    await stack.putObject('exports/reset.csv', file);
    const handle = await start('exports/reset.csv');
    const first = await handle.result();

    // The task that scheduled part 2's create came after part 1's job completed.
    const afterPart1 = taskThatScheduledNth(await handle.fetchHistory(), 'createImportJob', 2);
    const resetRun = await resetWorkflow(stack.env.client, handle, afterPart1);
    const again = await resetRun.result();
    expect(again.parts?.map((p) => p.jobId)).toEqual(first.parts?.map((p) => p.jobId));
    expect(again.parts?.slice(1).map((p) => [p.jobReused, p.uploadSkipped])).toEqual([
      [true, true],
      [true, true],
    ]);

    // From the start: the file is planned again, to the same parts (their digests name their records).
    const fromStart = await resetWorkflow(stack.env.client, resetRun, firstWorkflowTask(await resetRun.fetchHistory()));
    const third = await fromStart.result();
    expect(third.parts?.map((p) => p.jobId)).toEqual(first.parts?.map((p) => p.jobId));
    expect(third.jobReused).toBe(true);
    expect(third.uploadSkipped).toBe(true);
    await expectOneBodyPerPart(handle.workflowId, third);
  });

  it('the dry run counts the jobs the file makes, and budgets a create and an upload for each', async () => {
    await stack.putObject('exports/dry-run.csv', file);
    const ctx = cliContext(stack.workerEnv());
    const args = ['start', '--bucket', stack.bucket, '--key', 'exports/dry-run.csv', '--entity-type', 'Account'];
    await main(['node', 'import-worker', ...args, '--dry-run'], ctx);
    const out = ctx.printed.join('\n');
    expect(out).toContain(`checked the whole file (${ROWS} rows): none would be refused; split into 3 jobs`);
    expect(out).toMatch(/budget +.*createJob 3 \(\d+ left\), submitData 3 \(\d+ left\)/);
  });

  it('the dry run of a file larger than its sample estimates the jobs from the sample, saying so', async () => {
    const rows = 70_000; // about 2.6 MB: the dry run reads its first 1 MiB
    await stack.putObject('exports/dry-run-big.csv', sourceFile(rows));
    const ctx = cliContext(stack.workerEnv());
    const args = ['start', '--bucket', stack.bucket, '--key', 'exports/dry-run-big.csv', '--entity-type', 'Account'];
    await main(['node', 'import-worker', ...args, '--dry-run'], ctx);
    const out = ctx.printed.join('\n');
    const estimated = Number(/split into about (\d+) jobs \(IMPORT_MAX_PART_BYTES\)/.exec(out)?.[1]);
    // The rows' lengths grow with their numbers, so the first MiB's rate is close, not exact.
    const actual = expectedParts(rows).length;
    expect(Math.abs(estimated - actual)).toBeLessThanOrEqual(1);
    expect(out).toContain(`createJob ${estimated} (`);
  });

  it('a file replaced at its key between parts fails saying so, and no part receives a body of the new file', async () => {
    await stack.putObject('exports/replaced.csv', file);
    // Part 1's job stays processing until the file has been replaced.
    stack.sim.jobFaults.holdProcessing();
    const handle = await start('exports/replaced.csv');
    const [part1] = await waitFor(async () => {
      const jobs = await jobsNamed(stack.sim.baseUrl, handle.workflowId);
      return jobs[0]?.uploads === 1 ? jobs : undefined;
    });
    await stack.putObject('exports/replaced.csv', sourceFile(ROWS, 'example.org'));
    stack.sim.clearFaults();

    const err = await handle.result().then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(WorkflowFailedError);
    const cause = (err as WorkflowFailedError).cause as ApplicationFailure;
    expect(cause).toBeInstanceOf(ApplicationFailure);
    expect(cause.type).toBe('SourceChanged');
    expect(cause.message).toContain('is no longer the version planned in 3 parts');
    expect(cause.message).toContain(`part(s) 1-1 of 3 were imported (job(s) ${part1!.id})`);
    expect(cause.message).toMatch(/part 2 was not sent \(its job \d+ stays empty\)/);

    const jobs = await jobsNamed(stack.sim.baseUrl, handle.workflowId);
    expect(jobs).toHaveLength(2);
    const [one, two] = [jobs.find((j) => j.id === part1!.id)!, jobs.find((j) => j.id !== part1!.id)!];
    expect(one.acceptedBodies).toEqual([expect.objectContaining({ sha256: sha256(expected[0]!) })]);
    expect(two.acceptedBodies).toEqual([]);
    expect(two.state).toBe('new');
  });
});
