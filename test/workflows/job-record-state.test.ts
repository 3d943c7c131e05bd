import { describe, expect, it } from 'vitest';
import {
  type Attempt,
  type ClaimCreateAnswer,
  DEFAULT_JOB_RECORD_SETTINGS,
  jobRecordWorkflowId,
} from '../../workflows/contracts/job-record.js';
import {
  carriedState,
  claimCreate,
  claimRequestProblem,
  claimUpload,
  confirm,
  createRecordState,
  type JobRecordState,
  jobKeyOf,
  noteJobState,
  resolveCreate,
  settleAfterConfirm,
  supersede,
  uploadEnded,
  view,
} from '../../workflows/job-record-state.js';

const version = { tenant: 'acme', bucket: 'feeds', key: 'daily/a.csv', etag: '"abc"' };
const L = DEFAULT_JOB_RECORD_SETTINGS.leaseMs;
const LAG = DEFAULT_JOB_RECORD_SETTINGS.lagMs;
const BOUND = DEFAULT_JOB_RECORD_SETTINGS.deliveryBoundMs;
const T0 = 1_000_000;

const attempt = (workflowId: string, scheduledMs: number, over: Partial<Attempt> = {}): Attempt => ({
  workflowId,
  runId: `${workflowId}-run`,
  activityId: '3',
  scheduledMs,
  ...over,
});
const a1 = attempt('wf-a', T0);
const a2 = attempt('wf-a', T0 + 60_000);
const b1 = attempt('wf-b', T0 + 1);

const fresh = (): JobRecordState => createRecordState(version, undefined, T0);

/** A record whose create intent (seq 1) a1 owns. */
function claimed(): JobRecordState {
  const { state, answer } = claimCreate(fresh(), { attempt: a1 }, T0);
  expect(answer).toEqual({ kind: 'create', seq: 1, jobKey: jobKeyOf(version, 1) });
  return state;
}

/** a1 claimed and was granted a confirm at `atMs`. */
function confirmedAt(atMs: number): JobRecordState {
  const step = confirm(claimed(), { intent: 'create', seq: 1, attempt: a1 }, atMs);
  expect(step.answer).toEqual({ granted: true, leaseMs: L });
  return step.state;
}

/** The job j1 (state `new`) is known, created by a1. */
function withJob(): JobRecordState {
  const step = resolveCreate(confirmedAt(T0), { seq: 1, attempt: a1, job: { jobId: 'j1', state: 'new' } }, T0 + 100);
  expect(step.answer).toEqual({ kind: 'known', jobId: 'j1', state: 'new', hasData: false });
  return step.state;
}

describe('job record: create', () => {
  it('gives a fresh record a create intent with a key of its own', () => {
    const state = claimed();
    expect(view(state).openIntents).toEqual([{ intent: 'create', seq: 1, owner: a1 }]);
    expect(jobKeyOf(version, 1)).not.toBe(jobKeyOf(version, 2));
  });

  it('lets a later attempt of the same workflow supersede: unconfirmed, it creates under the same key, no wait', () => {
    const { answer, state } = claimCreate(claimed(), { attempt: a2 }, T0 + 60_000);
    expect(answer).toEqual({ kind: 'create', seq: 1, jobKey: jobKeyOf(version, 1) });
    // The superseded owner is fenced.
    expect(confirm(state, { intent: 'create', seq: 1, attempt: a1 }, T0 + 60_001).answer).toMatchObject({
      granted: false,
    });
    expect(confirm(state, { intent: 'create', seq: 1, attempt: a2 }, T0 + 60_001).answer).toEqual({
      granted: true,
      leaseMs: L,
    });
  });

  it('makes a takeover of a confirmed intent resolve, settling lease + delivery bound + lag after the confirm', () => {
    const { answer, state } = claimCreate(confirmedAt(T0), { attempt: a2 }, T0 + 5_000);
    expect(answer).toEqual({
      kind: 'resolve',
      seq: 1,
      jobKey: jobKeyOf(version, 1),
      settleMs: L + BOUND + LAG - 5_000,
    });
    // The resolving owner may search, never create under the key.
    expect(confirm(state, { intent: 'create', seq: 1, attempt: a2 }, T0 + 6_000).answer).toMatchObject({
      granted: false,
    });
  });

  it('needs no settle for a takeover long after the last confirm, but still resolves', () => {
    const { answer } = claimCreate(confirmedAt(T0), { attempt: a2 }, T0 + L + BOUND + LAG + 1);
    expect(answer).toMatchObject({ kind: 'resolve', settleMs: 0 });
  });

  it('still resolves on a third takeover when the second never confirmed', () => {
    const second = claimCreate(confirmedAt(T0), { attempt: a2 }, T0 + 1_000).state;
    const a3 = attempt('wf-a', T0 + 120_000);
    expect(claimCreate(second, { attempt: a3 }, T0 + 2_000).answer).toMatchObject({
      kind: 'resolve',
      settleMs: L + BOUND + LAG - 2_000,
    });
  });

  it('refuses a stale attempt (earlier or equal scheduledMs) of the same workflow', () => {
    const state = claimCreate(claimed(), { attempt: a2 }, T0 + 60_000).state;
    expect(claimCreate(state, { attempt: a1 }, T0 + 60_001).answer).toMatchObject({ kind: 'refused' });
    const twin = attempt('wf-a', a2.scheduledMs, { activityId: '9' });
    expect(claimCreate(state, { attempt: twin }, T0 + 60_001).answer).toMatchObject({ kind: 'refused' });
  });

  it('lets an attempt of a later run (a workflow Reset) supersede', () => {
    const reset = attempt('wf-a', T0 + 90_000, { runId: 'reset-run', activityId: '1' });
    expect(claimCreate(confirmedAt(T0), { attempt: reset }, T0 + 90_000).answer).toMatchObject({ kind: 'resolve' });
  });

  it('makes another workflow follow (wait) while the owner runs, and supersede once its run is closed', () => {
    const state = confirmedAt(T0);
    expect(claimCreate(state, { attempt: b1 }, T0 + 10).answer).toEqual({
      kind: 'wait',
      reason: 'import wf-a owns the job creation of this object version',
      retryAfterMs: DEFAULT_JOB_RECORD_SETTINGS.retryAfterMs,
      owner: a1,
    });
    // A closed run that is not the owner's changes nothing.
    const otherRun = { workflowId: 'wf-a', runId: 'elsewhere' };
    expect(claimCreate(state, { attempt: b1, ownerClosed: otherRun }, T0 + 10).answer).toMatchObject({ kind: 'wait' });
    const ownerClosed = { workflowId: a1.workflowId, runId: a1.runId };
    expect(claimCreate(state, { attempt: b1, ownerClosed }, T0 + 10).answer).toMatchObject({
      kind: 'resolve',
      settleMs: L + BOUND + LAG - 10,
    });
  });

  it('grants a confirm only to the owner of the open intent', () => {
    const state = claimed();
    expect(confirm(state, { intent: 'create', seq: 1, attempt: b1 }, T0).answer).toMatchObject({ granted: false });
    expect(confirm(state, { intent: 'create', seq: 2, attempt: a1 }, T0).answer).toMatchObject({ granted: false });
    expect(confirm(state, { intent: 'upload', seq: 1, attempt: a1 }, T0).answer).toMatchObject({ granted: false });
    expect(confirm(state, { intent: 'create', seq: 1, attempt: a1 }, T0).answer).toMatchObject({ granted: true });
  });

  it('returns the known job to every later claim, whichever workflow', () => {
    const state = withJob();
    const knownJob: ClaimCreateAnswer = { kind: 'known', jobId: 'j1', state: 'new', hasData: false };
    expect(claimCreate(state, { attempt: b1 }, T0 + 200).answer).toEqual(knownJob);
    expect(claimCreate(state, { attempt: a2 }, T0 + 200).answer).toEqual(knownJob);
    expect(confirm(state, { intent: 'create', seq: 1, attempt: a1 }, T0 + 200).answer).toMatchObject({
      granted: false,
    });
  });

  it('after a settled search found none, opens a fresh intent with a fresh key for the owner only', () => {
    const resolving = claimCreate(confirmedAt(T0), { attempt: a2 }, T0 + 1_000).state;
    expect(resolveCreate(resolving, { seq: 1, attempt: b1 }, T0 + 30_000).answer).toMatchObject({ kind: 'refused' });
    const step = resolveCreate(resolving, { seq: 1, attempt: a2 }, T0 + 30_000);
    expect(step.answer).toEqual({ kind: 'create', seq: 2, jobKey: jobKeyOf(version, 2) });
    expect(confirm(step.state, { intent: 'create', seq: 2, attempt: a2 }, T0 + 30_001).answer).toMatchObject({
      granted: true,
    });
  });

  it('adopts a job reported by a superseded attempt (a late answer is a fact)', () => {
    const resolving = claimCreate(confirmedAt(T0), { attempt: a2 }, T0 + 1_000).state;
    const step = resolveCreate(resolving, { seq: 1, attempt: a1, job: { jobId: 'j1', state: 'new' } }, T0 + 2_000);
    expect(step.answer).toMatchObject({ kind: 'known', jobId: 'j1' });
    // The resolving owner's own report of the same job agrees.
    const again = resolveCreate(step.state, { seq: 1, attempt: a2, job: { jobId: 'j1', state: 'new' } }, T0 + 3_000);
    expect(again.answer).toMatchObject({ kind: 'known', jobId: 'j1' });
  });

  it('clears a failed job and remembers it: the next claim creates anew, the old id is never reused', () => {
    const failed = noteJobState(withJob(), { jobId: 'j1', state: 'FAILED' }, T0 + 500).state;
    expect(failed.failedJobs).toEqual(['j1']);
    expect(failed.job).toBeUndefined();
    expect(claimCreate(failed, { attempt: b1 }, T0 + 600).answer).toEqual({
      kind: 'create',
      seq: 2,
      jobKey: jobKeyOf(version, 2),
    });
    expect(claimUpload(failed, { jobId: 'j1', attempt: a2 }, T0 + 600).answer).toMatchObject({ kind: 'refused' });
    // A late report that j1 is processing changes nothing.
    expect(noteJobState(failed, { jobId: 'j1', state: 'processing' }, T0 + 700).state.job).toBeUndefined();
  });
});

describe('job record: upload', () => {
  const up1 = attempt('wf-a', T0 + 10_000, { activityId: '4' });
  const up2 = attempt('wf-a', T0 + 70_000, { activityId: '4' });

  it('sends at once when no upload went before', () => {
    expect(claimUpload(withJob(), { jobId: 'j1', attempt: up1 }, T0 + 10_000).answer).toEqual({
      kind: 'send',
      seq: 2,
      settleMs: 0,
    });
  });

  it('answers done once the job holds data (hasData), also to other workflows', () => {
    const noted = noteJobState(withJob(), { jobId: 'j1', state: 'processing' }, T0 + 1_000);
    expect(noted.answer.job).toEqual({ jobId: 'j1', state: 'processing', hasData: true });
    expect(claimUpload(noted.state, { jobId: 'j1', attempt: up1 }, T0 + 1_000).answer).toEqual({
      kind: 'done',
      state: 'processing',
    });
    expect(claimUpload(noted.state, { jobId: 'j1', attempt: b1 }, T0 + 1_000).answer).toMatchObject({ kind: 'done' });
    // A stale `new` reading does not take the data back.
    expect(noteJobState(noted.state, { jobId: 'j1', state: 'new' }, T0 + 2_000).state.job?.hasData).toBe(true);
  });

  it.each(['queued', 'created', 'Uploaded', ''])(
    'never takes a job in a state the spec does not name (%j) for one that holds its file',
    (unknown) => {
      const up1 = attempt('wf-a', T0 + 5_000, { activityId: '4' });
      const made = resolveCreate(confirmedAt(T0), { seq: 1, attempt: a1, job: { jobId: 'j1', state: unknown } }, T0);
      expect(made.answer).toMatchObject({ kind: 'known', jobId: 'j1', hasData: false });
      expect(claimUpload(made.state, { jobId: 'j1', attempt: up1 }, T0 + 1_000).answer).toMatchObject({ kind: 'send' });
      const noted = noteJobState(withJob(), { jobId: 'j1', state: unknown }, T0 + 1_000).state;
      expect(noted.job).toMatchObject({ state: 'new', hasData: false });
      expect(claimUpload(noted, { jobId: 'j1', attempt: up1 }, T0 + 1_000).answer).toMatchObject({ kind: 'send' });
    },
  );

  it('refuses a job that is not the record’s', () => {
    expect(claimUpload(withJob(), { jobId: 'other', attempt: up1 }, T0).answer).toMatchObject({ kind: 'refused' });
  });

  it('fences the superseded uploader and makes the next settle lease + bound + lag after its confirm', () => {
    let state = claimUpload(withJob(), { jobId: 'j1', attempt: up1 }, T0 + 10_000).state;
    state = confirm(state, { intent: 'upload', seq: 2, attempt: up1 }, T0 + 20_000).state;
    const step = claimUpload(state, { jobId: 'j1', attempt: up2 }, T0 + 22_000);
    expect(step.answer).toEqual({ kind: 'send', seq: 3, settleMs: L + BOUND + LAG - 2_000 });
    expect(confirm(step.state, { intent: 'upload', seq: 2, attempt: up1 }, T0 + 23_000).answer).toMatchObject({
      granted: false,
    });
    // Its late report of a broken request changes nothing.
    const late = uploadEnded(step.state, { seq: 2, attempt: up1, lastBytesSent: false }, T0 + 23_000).state;
    expect(view(late).openIntents).toEqual([{ intent: 'upload', seq: 3, owner: up2, confirmedAtMs: T0 + 20_000 }]);
  });

  it('needs no settle after a broken request whose last bytes never left', () => {
    let state = claimUpload(withJob(), { jobId: 'j1', attempt: up1 }, T0 + 10_000).state;
    state = uploadEnded(state, { seq: 2, attempt: up1, lastBytesSent: true }, T0 + 11_000).state;
    // No confirm was granted to it: it cannot have sent the last bytes, whatever it reported.
    expect(claimUpload(state, { jobId: 'j1', attempt: up2 }, T0 + 12_000).answer).toMatchObject({ settleMs: 0 });
  });

  it('settles the delivery bound and the lag after a broken request whose last bytes left', () => {
    let state = claimUpload(withJob(), { jobId: 'j1', attempt: up1 }, T0 + 10_000).state;
    state = confirm(state, { intent: 'upload', seq: 2, attempt: up1 }, T0 + 20_000).state;
    state = uploadEnded(state, { seq: 2, attempt: up1, lastBytesSent: true }, T0 + 21_000).state;
    expect(claimUpload(state, { jobId: 'j1', attempt: up2 }, T0 + 25_000).answer).toMatchObject({
      settleMs: BOUND + LAG - 4_000,
    });
  });

  it('keeps an inherited confirm: a takeover that broke before its own confirm still settles for the first', () => {
    let state = claimUpload(withJob(), { jobId: 'j1', attempt: up1 }, T0 + 10_000).state;
    state = confirm(state, { intent: 'upload', seq: 2, attempt: up1 }, T0 + 20_000).state;
    state = claimUpload(state, { jobId: 'j1', attempt: up2 }, T0 + 21_000).state;
    state = uploadEnded(state, { seq: 3, attempt: up2, lastBytesSent: false }, T0 + 22_000).state;
    const up3 = attempt('wf-a', T0 + 80_000, { activityId: '4' });
    expect(claimUpload(state, { jobId: 'j1', attempt: up3 }, T0 + 23_000).answer).toMatchObject({
      settleMs: L + BOUND + LAG - 3_000,
    });
  });

  it('makes another workflow wait for the import that made the job, until that run is closed', () => {
    const state = withJob();
    expect(claimUpload(state, { jobId: 'j1', attempt: b1 }, T0 + 1_000).answer).toMatchObject({
      kind: 'wait',
      owner: a1,
    });
    const ownerClosed = { workflowId: a1.workflowId, runId: a1.runId };
    expect(claimUpload(state, { jobId: 'j1', attempt: b1, ownerClosed }, T0 + 1_000).answer).toMatchObject({
      kind: 'send',
    });
  });

  it('lets anyone take over what a superseded import owned', () => {
    const released = supersede(withJob(), { workflowId: 'wf-a' }, T0 + 1_000).state;
    expect(released.superseded).toBe(true);
    expect(claimUpload(released, { jobId: 'j1', attempt: b1 }, T0 + 2_000).answer).toMatchObject({ kind: 'send' });
    const createOpen = supersede(confirmedAt(T0), { workflowId: 'wf-a' }, T0 + 1_000).state;
    expect(claimCreate(createOpen, { attempt: b1 }, T0 + 2_000).answer).toMatchObject({ kind: 'resolve' });
  });
});

describe('job record: small parts', () => {
  it('clamps the settle to lease + delivery bound + lag', () => {
    expect(settleAfterConfirm(undefined, DEFAULT_JOB_RECORD_SETTINGS, T0)).toBe(0);
    expect(settleAfterConfirm(T0 + 5, DEFAULT_JOB_RECORD_SETTINGS, T0)).toBe(L + BOUND + LAG);
  });

  it('keeps the delivery bound of the worker that started the record; one carried without it gets the default', () => {
    const started = createRecordState(version, { leaseMs: 3_000, lagMs: 1_000, deliveryBoundMs: 120_000 }, T0);
    expect(settleAfterConfirm(T0, started.settings, T0 + 4_000)).toBe(120_000);
    const { deliveryBoundMs: _none, ...olderSettings } = started.settings;
    const carried = carriedState({ ...started, settings: olderSettings }, version);
    expect(carried && settleAfterConfirm(T0, carried.settings, T0)).toBe(4_000 + BOUND);
  });

  it('names a record by tenant and a hash of bucket, key and the normalised ETag', () => {
    const id = jobRecordWorkflowId(version);
    expect(id).toMatch(/^job-record-acme-[0-9a-f]{16}$/u);
    expect(jobRecordWorkflowId({ ...version, etag: 'W/"abc"' })).toBe(id);
    expect(jobRecordWorkflowId({ ...version, etag: '"abd"' })).not.toBe(id);
    expect(jobRecordWorkflowId({ ...version, tenant: 'a/b' })).not.toBe(
      jobRecordWorkflowId({ ...version, tenant: 'a_b' }),
    );
  });

  it('names each part of a split version a record and job keys of its own, by its number and digest', () => {
    const part = (number: number, sha256: string) => ({ ...version, part: { number, sha256 } });
    const whole = jobRecordWorkflowId(version);
    const first = jobRecordWorkflowId(part(1, 'aa'));
    expect(first).toMatch(/^job-record-acme-[0-9a-f]{16}$/u);
    expect(new Set([whole, first, jobRecordWorkflowId(part(2, 'aa')), jobRecordWorkflowId(part(1, 'ab'))]).size).toBe(
      4,
    );
    expect(jobRecordWorkflowId({ ...part(1, 'aa'), etag: 'W/"abc"' })).toBe(first);
    expect(jobKeyOf(part(1, 'aa'), 1)).not.toBe(jobKeyOf(version, 1));
    expect(jobKeyOf(part(1, 'aa'), 1)).not.toBe(jobKeyOf(part(2, 'aa'), 1));
  });

  it('validates requests and carried state', () => {
    expect(claimRequestProblem({ attempt: a1 })).toBeUndefined();
    expect(claimRequestProblem({ attempt: { ...a1, scheduledMs: 'x' } })).toMatch(/scheduledMs/u);
    expect(claimRequestProblem({ attempt: a1, ownerClosed: { workflowId: 'x' } })).toMatch(/ownerClosed/u);
    expect(carriedState(withJob(), version)?.job?.id).toBe('j1');
    expect(carriedState({ nonsense: true }, version)).toBeUndefined();
  });

  it('marks a completed job terminal', () => {
    const state = noteJobState(withJob(), { jobId: 'j1', state: 'completed' }, T0 + 1_000).state;
    expect(view(state).job).toEqual({ jobId: 'j1', state: 'completed', hasData: true, terminal: 'completed' });
  });
});
