/**
 * The job record's decisions as pure functions over its state: the entity workflow serialises calls to them. No Temporal imports, no
 * clock of its own (every call is given `nowMs`), no I/O.
 *
 * Ownership: an intent (to create the job, to upload its file) is owned by
 * the attempt that claimed it last. A later attempt of the same workflow
 * supersedes its owner (Temporal runs one current attempt per activity, so the
 * earlier one is gone or a zombie); an earlier-or-equal one is stale and
 * refused; another workflow follows (`wait`) unless the gate saw the owner's
 * run closed. Only the owner is granted a confirm, and a body's last bytes go
 * out only within a confirm's lease: that is the fence.
 *
 * Settle: an attempt that takes over an intent some owner had confirmed waits
 * until that owner's last bytes cannot still arrive and the service has had
 * its lag to commit and list them: the lease (the last bytes leave within
 * it), the delivery bound (bytes that left arrive within it or never) and the
 * lag, after the last confirm, by the record's clock. That clock (the workflow task's time) is never earlier
 * than the confirm's send and never later than the real now, so the
 * remainder it computes is never too short. An intent never confirmed sent
 * nothing complete: no wait.
 */

import { fnv1a64 } from './contracts/job-key.js';
import {
  type Attempt,
  type ClaimCreateAnswer,
  type ClaimRefusal,
  type ClaimRequest,
  type ClaimUploadAnswer,
  type ClaimUploadRequest,
  type ClosedRun,
  type ConfirmAnswer,
  type ConfirmRequest,
  DEFAULT_JOB_RECORD_SETTINGS,
  type JobRecordSettings,
  type JobRecordView,
  type KnownJob,
  type NoteJobStateRequest,
  type ResolveCreateAnswer,
  type ResolveCreateRequest,
  type SupersedeRequest,
  type TenantObjectVersion,
  type TerminalJobState,
  type UploadEndedRequest,
} from './contracts/job-record.js';
import { versionName } from './contracts/object-version.js';

interface IntentBase {
  seq: number;
  owner: Attempt;
  /** The latest confirm granted in this intent, to whichever owner: carried across takeovers. */
  confirmedAtMs?: number;
  /** The owner's import moved on (supersede): any claim takes the intent over. */
  released?: boolean;
}

interface CreateIntent extends IntentBase {
  jobKey: string;
  /** A takeover of a confirmed intent: the owner must search, never create, under this key. */
  resolving?: boolean;
  ended?: 'created' | 'none';
}

interface UploadIntent extends IntentBase {
  jobId: string;
  /** The current owner was granted a confirm (else confirmedAtMs, if any, is an earlier owner's). */
  ownerConfirmed?: boolean;
  ended?: { atMs: number; lastBytesSent: boolean };
}

export interface RecordedJob {
  id: string;
  state: string;
  hasData: boolean;
  createIntent: number;
  terminal?: TerminalJobState;
  /** The attempt that owned the create: its import uploads the file; others follow while it runs. */
  creator?: Attempt;
}

export interface JobRecordState {
  version: TenantObjectVersion;
  settings: JobRecordSettings;
  job?: RecordedJob;
  /** Jobs the service marked failed: never reused. */
  failedJobs: string[];
  create?: CreateIntent;
  upload?: UploadIntent;
  nextSeq: number;
  superseded: boolean;
  lastMessageMs: number;
}

export interface Step<A> {
  state: JobRecordState;
  answer: A;
}

export function createRecordState(
  version: TenantObjectVersion,
  settings: Partial<JobRecordSettings> | undefined,
  nowMs: number,
): JobRecordState {
  return {
    version,
    settings: { ...DEFAULT_JOB_RECORD_SETTINGS, ...settings },
    failedJobs: [],
    nextSeq: 1,
    superseded: false,
    lastMessageMs: nowMs,
  };
}

/** The key the job of intent `seq` carries in its name: a fresh one per intent, so a settled search never meets an older one. */
export function jobKeyOf(version: TenantObjectVersion, seq: number): string {
  return fnv1a64(`jobRecord\n${version.tenant}\n${versionName(version)}\n${seq}`);
}

export function sameAttempt(a: Attempt, b: Attempt): boolean {
  return (
    a.workflowId === b.workflowId &&
    a.runId === b.runId &&
    a.activityId === b.activityId &&
    a.scheduledMs === b.scheduledMs
  );
}

type Standing = 'same' | 'supersedes' | 'stale' | 'foreign';

/** How a claimant stands to an intent's owner (see the file comment). */
export function standing(owner: Attempt, claimant: Attempt, ownerClosed?: ClosedRun, released = false): Standing {
  if (sameAttempt(owner, claimant)) return 'same';
  if (owner.workflowId === claimant.workflowId)
    return claimant.scheduledMs > owner.scheduledMs ? 'supersedes' : 'stale';
  if (released) return 'supersedes';
  if (ownerClosed?.workflowId === owner.workflowId && ownerClosed.runId === owner.runId) return 'supersedes';
  return 'foreign';
}

function refusal(kind: 'stale' | 'foreign', owner: Attempt, state: JobRecordState, what: string): ClaimRefusal {
  if (kind === 'stale') return { kind: 'refused', reason: `a later attempt of this import owns the ${what}` };
  return {
    kind: 'wait',
    reason: `import ${owner.workflowId} owns the ${what} of this object version`,
    retryAfterMs: state.settings.retryAfterMs,
    owner,
  };
}

/** What is left of `fullMs` counted from `sinceMs`: never more than it, never below 0. */
function remainder(fullMs: number, sinceMs: number, nowMs: number): number {
  return Math.min(fullMs, Math.max(0, fullMs - (nowMs - sinceMs)));
}

/**
 * How long a takeover waits after the latest confirm of an intent: until its
 * lease ran out, its last bytes arrived or never will, and the lag passed.
 */
export function settleAfterConfirm(confirmedAtMs: number | undefined, settings: JobRecordSettings, nowMs: number) {
  if (confirmedAtMs === undefined) return 0;
  return remainder(settings.leaseMs + deliveryBoundOf(settings) + settings.lagMs, confirmedAtMs, nowMs);
}

/** A record started before the bound existed carries no value for it: the default, never none. */
function deliveryBoundOf(settings: JobRecordSettings): number {
  return settings.deliveryBoundMs ?? DEFAULT_JOB_RECORD_SETTINGS.deliveryBoundMs;
}

/**
 * How long a new upload waits after the intent before it. An owner that ended
 * its request (its last bytes left before it said so) needs the delivery bound
 * and the lag, and only if its last bytes left; an earlier owner's confirm it
 * inherited and never followed with its own still counts.
 */
function settleAfterUpload(previous: UploadIntent | undefined, settings: JobRecordSettings, nowMs: number): number {
  if (!previous) return 0;
  const ended = previous.ended;
  if (!ended || !previous.ownerConfirmed) return settleAfterConfirm(previous.confirmedAtMs, settings, nowMs);
  if (!ended.lastBytesSent) return 0;
  return remainder(deliveryBoundOf(settings) + settings.lagMs, ended.atMs, nowMs);
}

function known(job: RecordedJob): KnownJob & { kind: 'known' } {
  return { kind: 'known', jobId: job.id, state: job.state, hasData: job.hasData };
}

function touched(state: JobRecordState, nowMs: number): JobRecordState {
  return { ...state, lastMessageMs: nowMs };
}

function openCreate(state: JobRecordState, owner: Attempt): Step<ClaimCreateAnswer & { kind: 'create' }> {
  const seq = state.nextSeq;
  const jobKey = jobKeyOf(state.version, seq);
  return {
    state: { ...state, nextSeq: seq + 1, create: { seq, jobKey, owner } },
    answer: { kind: 'create', seq, jobKey },
  };
}

/** known: the job; create: a fresh intent; resolve: settle, then search `new` jobs for jobKey; wait/refused. */
export function claimCreate(state: JobRecordState, request: ClaimRequest, nowMs: number): Step<ClaimCreateAnswer> {
  const s = touched(state, nowMs);
  if (s.job) return { state: s, answer: known(s.job) };
  const c = s.create;
  if (!c || c.ended) return openCreate(s, request.attempt);
  const how = standing(c.owner, request.attempt, request.ownerClosed, c.released);
  if (how === 'stale' || how === 'foreign') return { state: s, answer: refusal(how, c.owner, s, 'job creation') };
  const taken: CreateIntent =
    how === 'same'
      ? c
      : { ...c, owner: request.attempt, released: false, resolving: c.resolving || c.confirmedAtMs !== undefined };
  const next = { ...s, create: taken };
  if (!taken.resolving) return { state: next, answer: { kind: 'create', seq: taken.seq, jobKey: taken.jobKey } };
  const settleMs = settleAfterConfirm(c.confirmedAtMs, s.settings, nowMs);
  return { state: next, answer: { kind: 'resolve', seq: taken.seq, jobKey: taken.jobKey, settleMs } };
}

/** Granted only to the owner of the open intent `seq`; never to a resolving create or an upload whose job holds data. */
export function confirm(state: JobRecordState, request: ConfirmRequest, nowMs: number): Step<ConfirmAnswer> {
  const s = touched(state, nowMs);
  const refuse = (reason: string): Step<ConfirmAnswer> => ({ state: s, answer: { granted: false, reason } });
  const intent = request.intent === 'create' ? s.create : s.upload;
  if (!intent || intent.ended || intent.seq !== request.seq)
    return refuse(`no open ${request.intent} intent ${request.seq}`);
  if (!sameAttempt(intent.owner, request.attempt)) return refuse('another attempt owns this intent');
  if (request.intent === 'create' && (s.job || s.create?.resolving))
    return refuse('the job must be resolved, not created');
  if (request.intent === 'upload' && s.job?.hasData) return refuse('the job holds its file');
  const confirmed = {
    ...intent,
    confirmedAtMs: nowMs,
    ...(request.intent === 'upload' ? { ownerConfirmed: true } : {}),
  };
  const next =
    request.intent === 'create'
      ? { ...s, create: confirmed as CreateIntent }
      : { ...s, upload: confirmed as UploadIntent };
  return { state: next, answer: { granted: true, leaseMs: s.settings.leaseMs } };
}

/**
 * Only the states the spec names after `new` say the job holds its file. Any
 * other word (`queued`, `created`, a state added later) says nothing: the
 * upload reads the job again before it sends or skips.
 */
function holdsData(jobState: string): boolean {
  return jobState === 'processing' || jobState === 'completed';
}

function recordJob(s: JobRecordState, job: { jobId: string; state: string }, seq: number): JobRecordState {
  const jobState = job.state.trim().toLowerCase();
  if (jobState === 'failed') return { ...s, failedJobs: [...s.failedJobs, job.jobId] };
  const creator = s.create && !s.create.released ? s.create.owner : undefined;
  const recorded: RecordedJob = { id: job.jobId, state: jobState, hasData: holdsData(jobState), createIntent: seq };
  if (creator) recorded.creator = creator;
  return { ...s, job: recorded, ...(s.create ? { create: { ...s.create, ended: 'created' as const } } : {}) };
}

/**
 * A job the create made or the search found is a fact, whoever reports it
 * (a zombie's late answer included) while no job is known. "None" (a settled
 * search found nothing) only from the owner: it ends the intent and opens a
 * fresh one for the same attempt.
 */
export function resolveCreate(
  state: JobRecordState,
  request: ResolveCreateRequest,
  nowMs: number,
): Step<ResolveCreateAnswer> {
  const s = touched(state, nowMs);
  if (s.job) return { state: s, answer: known(s.job) };
  if (request.job) {
    if (request.seq < 1 || request.seq >= s.nextSeq)
      return { state: s, answer: { kind: 'refused', reason: 'no such intent' } };
    const next = recordJob(s, request.job, request.seq);
    if (next.job) return { state: next, answer: known(next.job) };
    return { state: next, answer: { kind: 'refused', reason: 'the job failed' } };
  }
  const c = s.create;
  if (!c || c.ended || c.seq !== request.seq || !sameAttempt(c.owner, request.attempt)) {
    return { state: s, answer: { kind: 'refused', reason: 'only the owner of the open intent can end it' } };
  }
  return openCreate({ ...s, create: { ...c, ended: 'none' } }, request.attempt);
}

/** done: the job holds its file; send: settle, read the job, then send; wait/refused. */
export function claimUpload(
  state: JobRecordState,
  request: ClaimUploadRequest,
  nowMs: number,
): Step<ClaimUploadAnswer> {
  const s = touched(state, nowMs);
  const job = s.job;
  if (s.failedJobs.includes(request.jobId)) return { state: s, answer: { kind: 'refused', reason: 'the job failed' } };
  if (!job || job.id !== request.jobId)
    return { state: s, answer: { kind: 'refused', reason: 'not this record’s job' } };
  if (job.hasData) return { state: s, answer: { kind: 'done', state: job.state } };
  const u = s.upload;
  const open = u && !u.ended && u.jobId === request.jobId ? u : undefined;
  // With no upload under way, the import that made the job is the one to upload it.
  const owner = open?.owner ?? job.creator;
  const how = owner ? standing(owner, request.attempt, request.ownerClosed, open?.released) : 'supersedes';
  if ((how === 'stale' || how === 'foreign') && owner) {
    return { state: s, answer: refusal(how, owner, s, 'upload') };
  }
  if (how === 'same' && open) {
    return {
      state: s,
      answer: { kind: 'send', seq: open.seq, settleMs: settleAfterConfirm(open.confirmedAtMs, s.settings, nowMs) },
    };
  }
  const settleMs = settleAfterUpload(u?.jobId === request.jobId ? u : undefined, s.settings, nowMs);
  const seq = s.nextSeq;
  const upload: UploadIntent = { seq, jobId: request.jobId, owner: request.attempt };
  // A takeover keeps the last confirm: a third attempt still waits for the first one's lease.
  if (open?.confirmedAtMs !== undefined) upload.confirmedAtMs = open.confirmedAtMs;
  return { state: { ...s, nextSeq: seq + 1, upload }, answer: { kind: 'send', seq, settleMs } };
}

/** The owner's report that its request ended without an answer (a broken connection): best effort. */
export function uploadEnded(state: JobRecordState, request: UploadEndedRequest, nowMs: number): Step<void> {
  const s = touched(state, nowMs);
  const u = s.upload;
  if (!u || u.ended || u.seq !== request.seq || !sameAttempt(u.owner, request.attempt))
    return { state: s, answer: undefined };
  // Without a confirm of its own the owner cannot have released its last bytes, whatever it says.
  const lastBytesSent = request.lastBytesSent && u.ownerConfirmed === true;
  return { state: { ...s, upload: { ...u, ended: { atMs: nowMs, lastBytesSent } } }, answer: undefined };
}

/**
 * What the service said of the record's job. `processing` or `completed`: it
 * holds the file; `new` or a state the spec does not name changes nothing.
 * `completed` ends the record's work; `failed` forgets the job (remembered
 * among failedJobs, never reused) so a later import creates another.
 */
export function noteJobState(state: JobRecordState, request: NoteJobStateRequest, nowMs: number): Step<JobRecordView> {
  const s = touched(state, nowMs);
  const job = s.job;
  const jobState = request.state.trim().toLowerCase();
  if (!job || job.id !== request.jobId || job.terminal) return { state: s, answer: view(s) };
  if (jobState === 'failed') {
    const { job: _failed, create: _c, upload: _u, ...rest } = s;
    const next = { ...rest, failedJobs: [...s.failedJobs, job.id] };
    return { state: next, answer: view(next) };
  }
  if (!holdsData(jobState)) return { state: s, answer: view(s) };
  const updated: RecordedJob = { ...job, state: jobState, hasData: true };
  if (jobState === 'completed') updated.terminal = 'completed';
  const next = { ...s, job: updated };
  return { state: next, answer: view(next) };
}

/** The import moved on to a newer version of the object: what it owned here may be taken over by anyone. */
export function supersede(state: JobRecordState, request: SupersedeRequest, nowMs: number): Step<void> {
  const s = touched(state, nowMs);
  const mine = (a: Attempt | undefined) => a?.workflowId === request.workflowId;
  const next: JobRecordState = { ...s, superseded: true };
  if (s.create && !s.create.ended && mine(s.create.owner)) next.create = { ...s.create, released: true };
  if (s.upload && !s.upload.ended && mine(s.upload.owner)) next.upload = { ...s.upload, released: true };
  if (s.job && mine(s.job.creator)) {
    const { creator: _gone, ...job } = s.job;
    next.job = job;
  }
  return { state: next, answer: undefined };
}

/** The record's work is done once its job completed. */
export function isFinished(state: JobRecordState): boolean {
  return state.job?.terminal === 'completed';
}

/** When the record completes as abandoned, by its clock, unless another message comes first. */
export function idleDeadlineMs(state: JobRecordState): number {
  return state.lastMessageMs + state.settings.idleMs;
}

export function view(state: JobRecordState): JobRecordView {
  const openIntents: JobRecordView['openIntents'] = [];
  for (const [intent, i] of [
    ['create', state.create],
    ['upload', state.upload],
  ] as const) {
    if (!i || i.ended) continue;
    openIntents.push({
      intent,
      seq: i.seq,
      owner: i.owner,
      ...(i.confirmedAtMs === undefined ? {} : { confirmedAtMs: i.confirmedAtMs }),
    });
  }
  const job = state.job;
  return {
    version: state.version,
    ...(job
      ? {
          job: {
            jobId: job.id,
            state: job.state,
            hasData: job.hasData,
            ...(job.terminal ? { terminal: job.terminal } : {}),
          },
        }
      : {}),
    failedJobs: [...state.failedJobs],
    openIntents,
    superseded: state.superseded,
  };
}

// Validators: a malformed Update is rejected before it reaches the history.

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null;
const isText = (v: unknown): v is string => typeof v === 'string' && v.length > 0 && v.length <= 1_000;
const isCount = (v: unknown): v is number => typeof v === 'number' && Number.isSafeInteger(v) && v >= 0;

function attemptProblem(v: unknown): string | undefined {
  if (!isRecord(v)) return 'attempt must be { workflowId, runId, activityId, scheduledMs }';
  for (const field of ['workflowId', 'runId', 'activityId'] as const) {
    if (!isText(v[field])) return `attempt.${field} must be a non-empty string`;
  }
  return isCount(v.scheduledMs) ? undefined : 'attempt.scheduledMs must be a millisecond instant';
}

function closedRunProblem(v: unknown): string | undefined {
  if (v === undefined) return undefined;
  if (!isRecord(v) || !isText(v.workflowId) || !isText(v.runId)) return 'ownerClosed must be { workflowId, runId }';
  return undefined;
}

export function claimRequestProblem(v: unknown): string | undefined {
  if (!isRecord(v)) return 'claim expects { attempt }';
  return attemptProblem(v.attempt) ?? closedRunProblem(v.ownerClosed);
}

export function claimUploadRequestProblem(v: unknown): string | undefined {
  if (!isRecord(v) || !isText(v.jobId)) return 'claimUpload expects { jobId, attempt }';
  return claimRequestProblem(v);
}

export function confirmRequestProblem(v: unknown): string | undefined {
  if (!isRecord(v) || (v.intent !== 'create' && v.intent !== 'upload'))
    return 'confirm expects { intent, seq, attempt }';
  if (!isCount(v.seq)) return 'confirm: seq must be a count';
  return attemptProblem(v.attempt);
}

export function resolveCreateRequestProblem(v: unknown): string | undefined {
  if (!isRecord(v) || !isCount(v.seq)) return 'resolveCreate expects { seq, attempt, job? }';
  if (v.job !== undefined && (!isRecord(v.job) || !isText(v.job.jobId) || !isText(v.job.state))) {
    return 'resolveCreate: job must be { jobId, state }';
  }
  return attemptProblem(v.attempt);
}

export function uploadEndedRequestProblem(v: unknown): string | undefined {
  if (!isRecord(v) || !isCount(v.seq) || typeof v.lastBytesSent !== 'boolean') {
    return 'uploadEnded expects { seq, attempt, lastBytesSent }';
  }
  return attemptProblem(v.attempt);
}

export function noteJobStateRequestProblem(v: unknown): string | undefined {
  return isRecord(v) && isText(v.jobId) && isText(v.state) ? undefined : 'noteJobState expects { jobId, state }';
}

export function supersedeRequestProblem(v: unknown): string | undefined {
  return isRecord(v) && isText(v.workflowId) ? undefined : 'supersede expects { workflowId }';
}

/** A carried state is trusted only in its outline: it was written by this code. */
export function carriedState(v: unknown, version: TenantObjectVersion): JobRecordState | undefined {
  if (!isRecord(v) || !isRecord(v.settings) || !Array.isArray(v.failedJobs) || !isCount(v.nextSeq)) return undefined;
  return { ...(v as unknown as JobRecordState), version };
}
