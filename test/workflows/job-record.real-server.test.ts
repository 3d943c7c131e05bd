/**
 * The job record on the Temporal dev server, reached as activities reach it:
 * TemporalJobRecordGate's update-with-start. Attempts are named by hand; the
 * runs that own intents are real workflow runs (records of other versions,
 * which simply keep running), so the gate's `describe owner run` sees them
 * running, then closed once a test terminates them.
 */
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { Worker } from '@temporalio/worker';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TemporalJobRecordGate } from '../../activities/job-record/gate.js';
import {
  type Attempt,
  DEFAULT_JOB_RECORD_SETTINGS,
  JOB_RECORD_WORKFLOW_TYPE,
  type JobRecordResult,
  type JobRecordSettings,
  type JobRecordView,
  jobRecordWorkflowId,
  type TenantObjectVersion,
} from '../../workflows/contracts/job-record.js';
import { jobRecordQuery } from '../../workflows/contracts/messages.js';
import { createEnvironment } from '../support/temporal-server.js';
import { bundleWorkflows, WORKFLOW_SINKS } from '../support/workflow-bundle.js';

const L = DEFAULT_JOB_RECORD_SETTINGS.leaseMs;
const LAG = DEFAULT_JOB_RECORD_SETTINGS.lagMs;
const BOUND = DEFAULT_JOB_RECORD_SETTINGS.deliveryBoundMs;

describe('job record on the dev server', () => {
  let env: TestWorkflowEnvironment;
  let worker: Worker;
  let running: Promise<void>;
  const taskQueue = `job-record-${process.pid}`;
  let n = 0;

  beforeAll(async () => {
    env = await createEnvironment();
    const code = await bundleWorkflows();
    worker = await Worker.create({
      connection: env.nativeConnection,
      taskQueue,
      workflowBundle: { code },
      sinks: WORKFLOW_SINKS,
      activities: {},
    });
    running = worker.run();
  }, 120_000);

  afterAll(async () => {
    worker?.shutdown();
    await running;
    await env?.teardown();
  });

  const gateWith = (settings?: Partial<JobRecordSettings>, clock?: () => number) =>
    new TemporalJobRecordGate({
      client: env.client,
      taskQueue,
      ...(settings ? { settings } : {}),
      ...(clock ? { clock } : {}),
    });
  const versionFor = (name: string): TenantObjectVersion => ({
    tenant: `t-${process.pid}`,
    bucket: 'feeds',
    key: `${name}/${++n}.csv`,
    etag: `"${name}-${n}"`,
  });

  /** A real running run to own intents: a record of some other version, started directly. */
  async function ownerRun(name: string): Promise<{ workflowId: string; runId: string }> {
    const workflowId = `owner-${name}-${process.pid}-${++n}`;
    const handle = await env.client.workflow.start(JOB_RECORD_WORKFLOW_TYPE, {
      taskQueue,
      workflowId,
      args: [{ version: versionFor(`owner-${name}`) }],
    });
    return { workflowId, runId: handle.firstExecutionRunId };
  }
  const attemptOf = (run: { workflowId: string; runId: string }, scheduledMs: number, activityId = '3'): Attempt => ({
    ...run,
    activityId,
    scheduledMs,
  });
  const viewOf = (version: TenantObjectVersion) =>
    env.client.workflow.getHandle(jobRecordWorkflowId(version)).query<JobRecordView>(jobRecordQuery);

  it('gives one of two racing imports the create; the other follows, then gets the job', async () => {
    const gate = gateWith();
    const version = versionFor('race');
    const [a, b] = await Promise.all([ownerRun('a'), ownerRun('b')]);
    const sa = gate.session(version, attemptOf(a, 1_000));
    const sb = gate.session(version, attemptOf(b, 1_000));
    const answers = await Promise.all([sa.claimCreate(), sb.claimCreate()]);
    expect(answers.map((x) => x.kind).sort()).toEqual(['create', 'wait']);
    const [winner, follower] = answers[0]?.kind === 'create' ? [sa, sb] : [sb, sa];
    const claim = answers.find((x) => x.kind === 'create');
    if (claim?.kind !== 'create') throw new Error('no create');

    const lease = await winner.confirm('create', claim.seq);
    expect(lease?.valid()).toBe(true);
    // The follower is never granted the owner's fence.
    expect(await follower.confirm('create', claim.seq)).toBeUndefined();
    expect(await follower.claimCreate()).toMatchObject({ kind: 'wait', owner: winner.attempt });

    expect(await winner.resolveCreate(claim.seq, { jobId: 'job-1', state: 'new' })).toMatchObject({
      kind: 'known',
      jobId: 'job-1',
    });
    expect(await follower.claimCreate()).toEqual({ kind: 'known', jobId: 'job-1', state: 'new', hasData: false });
  });

  it('lets a later attempt supersede, fences the earlier one, and settles after its confirm', async () => {
    let clockMs = 0;
    const gate = gateWith(undefined, () => clockMs);
    const version = versionFor('supersede');
    const run = await ownerRun('s');
    const first = gate.session(version, attemptOf(run, 1_000));
    const later = gate.session(version, attemptOf(run, 2_000));

    const claim = await first.claimCreate();
    if (claim.kind !== 'create') throw new Error(`expected create, got ${claim.kind}`);
    const lease = await first.confirm('create', claim.seq);
    // The lease counts from before the confirm left, by the gate's clock.
    clockMs = L - 1_001;
    expect(lease?.valid()).toBe(true);
    clockMs = L - 999;
    expect(lease?.valid()).toBe(false);

    const takeover = await later.claimCreate();
    expect(takeover).toMatchObject({ kind: 'resolve', seq: claim.seq, jobKey: claim.jobKey });
    if (takeover.kind !== 'resolve') throw new Error('no resolve');
    expect(takeover.settleMs).toBeGreaterThan(L + BOUND + LAG - 5_000);
    expect(takeover.settleMs).toBeLessThanOrEqual(L + BOUND + LAG);

    // The zombie's fence is refused, and a stale claim of it too.
    expect(await first.confirm('create', claim.seq)).toBeUndefined();
    expect(await first.claimCreate()).toMatchObject({ kind: 'refused' });
    // The settled search found nothing: a fresh intent with a fresh key, for the new owner.
    const fresh = await later.resolveCreate(claim.seq);
    expect(fresh).toMatchObject({ kind: 'create', seq: claim.seq + 1 });
    expect(fresh.kind === 'create' && fresh.jobKey).not.toBe(claim.jobKey);
    expect(await later.confirm('create', claim.seq + 1)).toBeDefined();
  });

  it('lets a follower take over once the owner’s run is closed', async () => {
    const gate = gateWith();
    const version = versionFor('closed-owner');
    const [a, b] = await Promise.all([ownerRun('a'), ownerRun('b')]);
    const owner = gate.session(version, attemptOf(a, 1_000));
    const follower = gate.session(version, attemptOf(b, 1_000));
    const claim = await owner.claimCreate();
    if (claim.kind !== 'create') throw new Error('no create');
    await owner.confirm('create', claim.seq);
    expect(await follower.claimCreate()).toMatchObject({ kind: 'wait' });

    await env.client.workflow.getHandle(a.workflowId).terminate('the owner import died');
    expect(await follower.claimCreate()).toMatchObject({ kind: 'resolve', seq: claim.seq });
    expect(await owner.confirm('create', claim.seq)).toBeUndefined();
  });

  it('completes with its job, and answers later imports of the version from its result', async () => {
    const gate = gateWith();
    const version = versionFor('completed');
    const run = await ownerRun('c');
    const session = gate.session(version, attemptOf(run, 1_000));
    const claim = await session.claimCreate();
    if (claim.kind !== 'create') throw new Error('no create');
    await session.resolveCreate(claim.seq, { jobId: 'job-9', state: 'new' });
    const upload = gate.session(version, attemptOf(run, 5_000, '4'));
    expect(await upload.claimUpload('job-9')).toEqual({ kind: 'send', seq: claim.seq + 1, settleMs: 0 });
    await upload.noteJobState('job-9', 'processing');
    expect(await upload.claimUpload('job-9')).toEqual({ kind: 'done', state: 'processing' });
    await upload.noteJobState('job-9', 'completed');

    const handle = env.client.workflow.getHandle(jobRecordWorkflowId(version));
    const result = (await handle.result()) as JobRecordResult;
    expect(result).toMatchObject({ outcome: 'completed', view: { job: { jobId: 'job-9', terminal: 'completed' } } });

    // A later import (another workflow) of the same version: the closed record answers.
    const later = gate.session(version, attemptOf(await ownerRun('later'), 9_000));
    expect(await later.claimCreate()).toEqual({ kind: 'known', jobId: 'job-9', state: 'completed', hasData: true });
    expect(await later.claimUpload('job-9')).toEqual({ kind: 'done', state: 'completed' });
    expect((await handle.describe()).status.name).toBe('COMPLETED');
  });

  it('starts an abandoned record again from the state it returned', async () => {
    const gate = gateWith({ idleMs: 1_500 });
    const version = versionFor('abandoned');
    const run = await ownerRun('d');
    const session = gate.session(version, attemptOf(run, 1_000));
    const claim = await session.claimCreate();
    if (claim.kind !== 'create') throw new Error('no create');
    await session.resolveCreate(claim.seq, { jobId: 'job-7', state: 'new' });
    const handle = env.client.workflow.getHandle(jobRecordWorkflowId(version));
    expect(((await handle.result()) as JobRecordResult).outcome).toBe('abandoned');

    const later = gate.session(version, attemptOf(run, 2_000));
    expect(await later.claimCreate()).toMatchObject({ kind: 'known', jobId: 'job-7' });
    expect((await viewOf(version)).job).toMatchObject({ jobId: 'job-7' });
    expect((await handle.describe()).status.name).toBe('RUNNING');
    await handle.terminate('test done');
  });

  it('is read as the next import would find it, without a start, a claim or a history event', async () => {
    const gate = gateWith();
    const run = await ownerRun('read');
    const withJob = async (name: string, state?: string, settings?: Partial<JobRecordSettings>) => {
      const version = versionFor(name);
      const starting = settings ? gateWith(settings) : gate;
      const session = starting.session(version, attemptOf(run, 1_000));
      const claim = await session.claimCreate();
      if (claim.kind !== 'create') throw new Error('no create');
      await session.resolveCreate(claim.seq, { jobId: `job-${name}`, state: 'new' });
      if (state) await session.noteJobState(`job-${name}`, state);
      return { version, handle: env.client.workflow.getHandle(jobRecordWorkflowId(version)) };
    };
    const eventsOf = async (handle: { fetchHistory(): Promise<{ events?: unknown[] | null }> }) =>
      (await handle.fetchHistory()).events?.length;

    const absent = versionFor('read-absent');
    expect(await gate.read(absent)).toEqual({ status: 'absent' });
    await expect(env.client.workflow.getHandle(jobRecordWorkflowId(absent)).describe()).rejects.toThrow(/not found/i);

    const open = await withJob('read-open', 'processing');
    const before = await eventsOf(open.handle);
    expect(await gate.read(open.version)).toMatchObject({
      status: 'running',
      view: { job: { jobId: 'job-read-open', state: 'processing', hasData: true }, openIntents: [] },
    });
    expect(await eventsOf(open.handle)).toBe(before);

    const done = await withJob('read-done', 'completed');
    await done.handle.result();
    expect(await gate.read(done.version)).toMatchObject({
      status: 'completed',
      view: { job: { jobId: 'job-read-done', state: 'completed', terminal: 'completed' } },
    });

    // Idle past idleMs: the next import would start it again from the job it names.
    const idle = await withJob('read-idle', undefined, { idleMs: 1_500 });
    expect(((await idle.handle.result()) as JobRecordResult).outcome).toBe('abandoned');
    expect(await gate.read(idle.version)).toMatchObject({
      status: 'abandoned',
      view: { job: { jobId: 'job-read-idle' } },
    });
    expect((await idle.handle.describe()).status.name).toBe('COMPLETED');

    // Terminated: the next import starts afresh, knowing no job.
    const ended = await withJob('read-ended');
    await ended.handle.terminate('an operator forgets the record');
    expect(await gate.read(ended.version)).toEqual({ status: 'ended' });
    await open.handle.terminate('test done');
  });

  it('applies a retried Update once (the same update id), and rejects a malformed one', async () => {
    const gate = gateWith();
    const version = versionFor('idempotent');
    const run = await ownerRun('e');
    const attempt = attemptOf(run, 1_000);
    const claim = await gate.session(version, attempt).claimCreate();
    // A second session of the same attempt sends the same update ids: the server answers from the first.
    expect(await gate.session(version, attempt).claimCreate()).toEqual(claim);
    expect((await viewOf(version)).openIntents).toHaveLength(1);
    const bad = gate.session(version, { ...attempt, scheduledMs: -1 });
    await expect(bad.claimCreate()).rejects.toThrow();
  });
});
