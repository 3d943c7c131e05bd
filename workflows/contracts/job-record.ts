/**
 * The contract of the job record (one entity workflow per object version),
 * shared by the workflow that keeps it and the activity-side gate that
 * reaches it. Only activities talk to a record, always through Updates with
 * update-with-start (defined in messages.ts); the query is for operators and
 * tests.
 */
import { fnv1a64 } from './job-key.js';
import { type ObjectVersion, versionName } from './object-version.js';

export const JOB_RECORD_WORKFLOW_TYPE = 'jobRecord';

/** The object version a record is about, in one tenant: one job, ever, per version (until the service fails it). */
export interface TenantObjectVersion extends ObjectVersion {
  tenant: string;
}

/**
 * One activity attempt, as Temporal names it. `scheduledMs` is the server's
 * currentAttemptScheduledTimestampMs: later for every later attempt of one
 * activity, for an activity reset from the UI and for any activity of a later
 * run after a workflow Reset, so a later value means the earlier attempt is
 * gone or a zombie.
 */
export interface Attempt {
  workflowId: string;
  runId: string;
  activityId: string;
  scheduledMs: number;
}

/** A run the gate saw closed (described through the client): its open intents may be taken over. */
export interface ClosedRun {
  workflowId: string;
  runId: string;
}

export interface JobRecordSettings {
  /** How long a granted confirm lets its attempt send the last bytes, measured from before it asked. */
  leaseMs: number;
  /** How late the service may commit or list what it received. */
  lagMs: number;
  /**
   * The one assumption of the fence: bytes that left a worker (into its
   * socket, the kernel, a proxy or a slow reader at the service) arrive within
   * this long or never. Every takeover waits it on top of the lease.
   */
  deliveryBoundMs: number;
  /** How long a follower waits before asking again while another import owns the intent. */
  retryAfterMs: number;
  /** A record with no message for this long completes as abandoned. */
  idleMs: number;
  /**
   * Under Worker Versioning, how often a waiting record wakes to learn
   * whether another release became current (and move to it): the longest a
   * record keeps an old release from draining.
   */
  releaseCheckMs: number;
}

export const DEFAULT_JOB_RECORD_SETTINGS: JobRecordSettings = {
  leaseMs: 10_000,
  lagMs: 15_000,
  // Linux gives up retransmitting unacknowledged bytes after about 924.6 s (tcp_retries2 = 15): 16 min covers it.
  deliveryBoundMs: 16 * 60_000,
  retryAfterMs: 15_000,
  idleMs: 30 * 86_400_000,
  releaseCheckMs: 60 * 60_000,
};

export type TerminalJobState = 'completed' | 'failed';

export interface KnownJob {
  jobId: string;
  /** The last state the service reported for it (`new`, `processing`, `completed`, ...). */
  state: string;
  /** The job holds the file: the service said `processing` or `completed` (an unknown state says nothing). */
  hasData: boolean;
}

export interface ClaimRequest {
  attempt: Attempt;
  ownerClosed?: ClosedRun;
}

export interface ClaimUploadRequest extends ClaimRequest {
  jobId: string;
}

/** Why a claim cannot be served now: another import's attempt owns the intent (a follower waits), or this attempt is stale. */
export type ClaimRefusal =
  | { kind: 'wait'; reason: string; retryAfterMs: number; owner: Attempt }
  | { kind: 'refused'; reason: string };

export type ClaimCreateAnswer =
  | ({ kind: 'known' } & KnownJob)
  | { kind: 'create'; seq: number; jobKey: string }
  | { kind: 'resolve'; seq: number; jobKey: string; settleMs: number }
  | ClaimRefusal;

export type ClaimUploadAnswer =
  | { kind: 'done'; state: string }
  | { kind: 'send'; seq: number; settleMs: number }
  | ClaimRefusal;

export type Intent = 'create' | 'upload';

export interface ConfirmRequest {
  intent: Intent;
  seq: number;
  attempt: Attempt;
}

export type ConfirmAnswer = { granted: true; leaseMs: number } | { granted: false; reason: string };

export interface ResolveCreateRequest {
  seq: number;
  attempt: Attempt;
  /** The job the create made or the search found; absent: the settled search found none. */
  job?: { jobId: string; state: string };
}

/** `create` after a search found nothing: the record opened a fresh intent for the same attempt. */
export type ResolveCreateAnswer =
  | ({ kind: 'known' } & KnownJob)
  | { kind: 'create'; seq: number; jobKey: string }
  | { kind: 'refused'; reason: string };

export interface UploadEndedRequest {
  seq: number;
  attempt: Attempt;
  /** The attempt had released the body's last bytes: a complete body may have reached the service. */
  lastBytesSent: boolean;
}

export interface NoteJobStateRequest {
  jobId: string;
  state: string;
}

export interface SupersedeRequest {
  /** The import that moved on to a newer version of the object. */
  workflowId: string;
}

export interface JobRecordView {
  version: TenantObjectVersion;
  job?: KnownJob & { terminal?: TerminalJobState };
  failedJobs: string[];
  openIntents: { intent: Intent; seq: number; owner: Attempt; confirmedAtMs?: number }[];
  superseded: boolean;
}

/**
 * A record as the next import of its version would find it: none yet (that
 * import starts it), running, completed (its job completed: the version's
 * answer), abandoned (idle; the next import starts it again from its state),
 * or ended otherwise (failed, terminated, timed out: the next import starts
 * afresh, knowing no job).
 */
export type JobRecordStatus = 'absent' | 'running' | 'completed' | 'abandoned' | 'ended';

/** What a record holds, read without starting, claiming or writing anything (a dry run's look). */
export interface JobRecordReading {
  status: JobRecordStatus;
  /** Absent when the next import would find nothing: no record, or one that ended otherwise. */
  view?: JobRecordView;
}

/** What a closed record returns: a completed one is the version's answer for as long as Temporal keeps it. */
export interface JobRecordResult {
  outcome: 'completed' | 'abandoned';
  view: JobRecordView;
  /** The whole state: a later import of an abandoned record's version starts a new record from it. */
  state: unknown;
}

/** The record's input; `state` is carried across continue-as-new and into a restarted abandoned record. */
export interface JobRecordInput {
  version: TenantObjectVersion;
  settings?: Partial<JobRecordSettings>;
  state?: unknown;
}

/**
 * Readable where it can be (the tenant), hashed where anything may appear
 * (bucket, key, ETag). The hash covers the tenant too, so two tenants whose
 * names read alike once cleaned never share a record.
 */
export function jobRecordWorkflowId(version: TenantObjectVersion): string {
  const readable = version.tenant.replace(/[^A-Za-z0-9_.-]/gu, '_').slice(0, 64);
  const object = `${version.tenant}\n${versionName(version)}`;
  return `job-record-${readable}-${fnv1a64(object)}`;
}
