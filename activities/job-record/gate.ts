/**
 * How activities reach the job record of an object version
 * (workflows/job-record.ts): each call is an Update with update-with-start
 * (activities/entity-updates), so the record starts on first use, and
 * carries an Update id fixed by the attempt and the step, so a resend is
 * applied once.
 *
 * A closed record: a completed one is the version's answer (its job
 * completed) for as long as Temporal keeps closed workflows (the namespace's
 * retention period: after it, a new import of the version would start a new
 * record and a new job). An abandoned one (idle for 30 days) is started again
 * from the state it returned. One that failed or was terminated starts afresh
 * (the id reuse policy allows it), losing what it knew: an operator's act.
 *
 * The fence: `confirm()` returns a lease measured from before the Update
 * was sent, by a monotonic clock, so its end is never later than the
 * record's own reckoning.
 */
import { Context } from '@temporalio/activity';
import { type Client, WorkflowExecutionAlreadyStartedError, WorkflowNotFoundError } from '@temporalio/client';
import type { UpdateDefinition } from '@temporalio/common';
import {
  type Attempt,
  type ClaimCreateAnswer,
  type ClaimUploadAnswer,
  type ClosedRun,
  type Intent,
  JOB_RECORD_WORKFLOW_TYPE,
  type JobRecordInput,
  type JobRecordReading,
  type JobRecordResult,
  type JobRecordSettings,
  type JobRecordView,
  jobRecordWorkflowId,
  type ResolveCreateAnswer,
  type TenantObjectVersion,
} from '../../workflows/contracts/job-record.js';
import {
  claimCreateUpdate,
  claimUploadUpdate,
  confirmUpdate,
  noteJobStateUpdate,
  resolveCreateUpdate,
  supersedeUpdate,
  uploadEndedUpdate,
} from '../../workflows/contracts/messages.js';
import { EntityUpdates } from '../entity-updates/client.js';
import { updateId } from '../entity-updates/update-id.js';
import { readJobRecord } from './read-record.js';

/** Permission to send a body's last bytes, until `valid()` turns false. */
export interface Lease {
  /** True while the lease has more than `marginMs` left (the margin covers the write after the check). */
  valid(marginMs?: number): boolean;
  remainingMs(): number;
}

/** What one activity attempt may ask of one record. */
export interface JobRecordSession {
  readonly attempt: Attempt;
  /** A `wait` naming an owner whose run is closed is claimed again with `ownerClosed`, once. */
  claimCreate(): Promise<ClaimCreateAnswer>;
  resolveCreate(seq: number, job?: { jobId: string; state: string }): Promise<ResolveCreateAnswer>;
  claimUpload(jobId: string): Promise<ClaimUploadAnswer>;
  /** A lease when granted; undefined when another attempt owns the intent (abort: send nothing more). */
  confirm(intent: Intent, seq: number): Promise<Lease | undefined>;
  uploadEnded(seq: number, lastBytesSent: boolean): Promise<void>;
  noteJobState(jobId: string, state: string): Promise<JobRecordView | undefined>;
  supersede(): Promise<void>;
}

export interface JobRecordGate {
  session(version: TenantObjectVersion, attempt?: Attempt): JobRecordSession;
}

/** The dry run's way to a record: a look that starts, claims and writes nothing. */
export interface JobRecordReader {
  /** What the record holds, as the next import of the version would find it. */
  read(version: TenantObjectVersion): Promise<JobRecordReading>;
}

/** The running activity's attempt, as the record names attempts. */
export function currentAttempt(): Attempt {
  const info = Context.current().info;
  const execution = info.workflowExecution;
  if (!execution) throw new Error('the job record serves activities of a workflow only');
  return {
    workflowId: execution.workflowId,
    runId: execution.runId,
    activityId: info.activityId,
    scheduledMs: info.currentAttemptScheduledTimestampMs,
  };
}

/** A lease of `leaseMs` counted from `sentAt` on `clock` (a monotonic clock, never the wall clock). */
export function leaseFrom(sentAt: number, leaseMs: number, clock: () => number): Lease {
  const endsAt = sentAt + leaseMs;
  return {
    valid: (marginMs = 1_000) => clock() < endsAt - marginMs,
    remainingMs: () => Math.max(0, endsAt - clock()),
  };
}

export interface TemporalJobRecordGateOptions {
  client: Client;
  /** Where the record workflow runs (the worker's main task queue). */
  taskQueue: string;
  settings?: Partial<JobRecordSettings>;
  /** Monotonic milliseconds; performance.now() unless a test gives another. */
  clock?: () => number;
}

const CLOSED_RECORD_TRIES = 3;

type Sent<R> = { kind: 'answer'; value: R } | { kind: 'closed'; result: JobRecordResult };

export class TemporalJobRecordGate implements JobRecordGate, JobRecordReader {
  private readonly clock: () => number;
  /** A worker process has one gate, so its Updates to each record take turns. */
  private readonly updates: EntityUpdates;

  constructor(private readonly options: TemporalJobRecordGateOptions) {
    this.clock = options.clock ?? (() => performance.now());
    this.updates = new EntityUpdates(options.client);
  }

  session(version: TenantObjectVersion, attempt: Attempt = currentAttempt()): JobRecordSession {
    return new TemporalSession(this.options, this.updates, this.clock, version, attempt);
  }

  read(version: TenantObjectVersion): Promise<JobRecordReading> {
    return readJobRecord(this.options.client, version);
  }
}

class TemporalSession implements JobRecordSession {
  private readonly workflowId: string;
  private readonly stepCounts = new Map<string, number>();

  constructor(
    private readonly options: TemporalJobRecordGateOptions,
    private readonly updates: EntityUpdates,
    private readonly clock: () => number,
    private readonly version: TenantObjectVersion,
    readonly attempt: Attempt,
  ) {
    this.workflowId = jobRecordWorkflowId(version);
  }

  /** The same for the same step of the same attempt, so the server applies a retried RPC once. */
  private updateId(step: string): string {
    const n = (this.stepCounts.get(step) ?? 0) + 1;
    this.stepCounts.set(step, n);
    const a = this.attempt;
    return updateId(a.workflowId, a.runId, a.activityId, String(a.scheduledMs), `${step}-${n}`);
  }

  private startOptions(carried?: unknown) {
    const input: JobRecordInput = {
      version: this.version,
      ...(this.options.settings ? { settings: this.options.settings } : {}),
      ...(carried === undefined ? {} : { state: carried }),
    };
    return {
      workflowId: this.workflowId,
      taskQueue: this.options.taskQueue,
      args: [input],
      workflowIdConflictPolicy: 'USE_EXISTING' as const,
      // A completed record must stay closed (it is the version's answer); a failed or terminated one may start again.
      workflowIdReusePolicy:
        carried === undefined ? ('ALLOW_DUPLICATE_FAILED_ONLY' as const) : ('ALLOW_DUPLICATE' as const),
    };
  }

  private async send<R, A>(update: UpdateDefinition<R, [A]>, step: string, arg: A): Promise<Sent<R>> {
    const id = this.updateId(step);
    let carried: unknown;
    let closedTries = 0;
    for (;;) {
      try {
        const value = await this.updates.execute({
          update,
          arg,
          updateId: id,
          workflowType: JOB_RECORD_WORKFLOW_TYPE,
          start: this.startOptions(carried),
        });
        return { kind: 'answer', value };
      } catch (err) {
        if (++closedTries > CLOSED_RECORD_TRIES) throw err;
        // A closed record, or one that closed while this Update was in flight.
        const result = await this.closedResult();
        if (!result) {
          if (err instanceof WorkflowExecutionAlreadyStartedError) continue;
          throw err;
        }
        if (result.outcome === 'completed') return { kind: 'closed', result };
        carried = result.state;
      }
    }
  }

  /** The result of the record's latest run when it completed; undefined while it runs or after a failure. */
  private async closedResult(): Promise<JobRecordResult | undefined> {
    const handle = this.options.client.workflow.getHandle(this.workflowId);
    try {
      const run = await handle.describe();
      if (run.status.name !== 'COMPLETED') return undefined;
      return (await this.options.client.workflow.getHandle(this.workflowId, run.runId).result()) as JobRecordResult;
    } catch (err) {
      if (err instanceof WorkflowNotFoundError) return undefined;
      throw err;
    }
  }

  /** True when the owner's run is no longer running (closed, reset away, or gone past retention). */
  private async runClosed(run: ClosedRun): Promise<boolean> {
    try {
      const described = await this.options.client.workflow.getHandle(run.workflowId, run.runId).describe();
      return described.status.name !== 'RUNNING';
    } catch (err) {
      if (err instanceof WorkflowNotFoundError) return true;
      throw err;
    }
  }

  async claimCreate(): Promise<ClaimCreateAnswer> {
    const first = await this.claimCreateOnce();
    if (first.kind !== 'wait' || !(await this.runClosed(first.owner))) return first;
    return this.claimCreateOnce({ workflowId: first.owner.workflowId, runId: first.owner.runId });
  }

  private async claimCreateOnce(ownerClosed?: ClosedRun): Promise<ClaimCreateAnswer> {
    const sent = await this.send(claimCreateUpdate, 'claimCreate', {
      attempt: this.attempt,
      ...(ownerClosed ? { ownerClosed } : {}),
    });
    return sent.kind === 'answer' ? sent.value : knownFrom(sent.result);
  }

  async resolveCreate(seq: number, job?: { jobId: string; state: string }): Promise<ResolveCreateAnswer> {
    const sent = await this.send(resolveCreateUpdate, `resolveCreate-${seq}`, {
      seq,
      attempt: this.attempt,
      ...(job ? { job } : {}),
    });
    return sent.kind === 'answer' ? sent.value : knownFrom(sent.result);
  }

  async claimUpload(jobId: string): Promise<ClaimUploadAnswer> {
    const first = await this.claimUploadOnce(jobId);
    if (first.kind !== 'wait' || !(await this.runClosed(first.owner))) return first;
    return this.claimUploadOnce(jobId, { workflowId: first.owner.workflowId, runId: first.owner.runId });
  }

  private async claimUploadOnce(jobId: string, ownerClosed?: ClosedRun): Promise<ClaimUploadAnswer> {
    const sent = await this.send(claimUploadUpdate, 'claimUpload', {
      jobId,
      attempt: this.attempt,
      ...(ownerClosed ? { ownerClosed } : {}),
    });
    if (sent.kind === 'answer') return sent.value;
    const job = sent.result.view.job;
    if (job?.jobId === jobId) return { kind: 'done', state: job.state };
    return { kind: 'refused', reason: 'the record closed with another job' };
  }

  async confirm(intent: Intent, seq: number): Promise<Lease | undefined> {
    // Counted from before the Update leaves: the record grants it later than this, never earlier.
    const sentAt = this.clock();
    const sent = await this.send(confirmUpdate, `confirm-${intent}-${seq}`, {
      intent,
      seq,
      attempt: this.attempt,
    });
    if (sent.kind !== 'answer' || !sent.value.granted) return undefined;
    return leaseFrom(sentAt, sent.value.leaseMs, this.clock);
  }

  async uploadEnded(seq: number, lastBytesSent: boolean): Promise<void> {
    await this.send(uploadEndedUpdate, `uploadEnded-${seq}`, { seq, attempt: this.attempt, lastBytesSent });
  }

  async noteJobState(jobId: string, state: string): Promise<JobRecordView | undefined> {
    const sent = await this.send(noteJobStateUpdate, 'noteJobState', { jobId, state });
    return sent.kind === 'answer' ? sent.value : sent.result.view;
  }

  async supersede(): Promise<void> {
    await this.send(supersedeUpdate, 'supersede', { workflowId: this.attempt.workflowId });
  }
}

/** A completed record's job, as a claim's answer. */
function knownFrom(result: JobRecordResult): ClaimCreateAnswer & ResolveCreateAnswer {
  const job = result.view.job;
  if (!job) return { kind: 'refused', reason: 'the record completed without a job' };
  return { kind: 'known', jobId: job.jobId, state: job.state, hasData: job.hasData };
}
