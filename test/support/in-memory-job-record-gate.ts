/**
 * A JobRecordGate over the record's own pure decisions, held in memory: it
 * stands in for the record workflow where no Temporal server runs (activity
 * tests). Records never close here; `clock` drives the leases and `now` the
 * record's time, so a test can move either.
 */

import {
  currentAttempt,
  type JobRecordGate,
  type JobRecordReader,
  type JobRecordSession,
  leaseFrom,
} from '../../activities/job-record/gate.js';
import {
  type Attempt,
  type ClosedRun,
  type JobRecordReading,
  type JobRecordSettings,
  jobRecordWorkflowId,
  type TenantObjectVersion,
} from '../../workflows/contracts/job-record.js';
import {
  claimCreate,
  claimUpload,
  confirm,
  createRecordState,
  type JobRecordState,
  noteJobState,
  resolveCreate,
  type Step,
  supersede,
  uploadEnded,
  view,
} from '../../workflows/job-record-state.js';

export class InMemoryJobRecordGate implements JobRecordGate, JobRecordReader {
  readonly records = new Map<string, JobRecordState>();
  /** Runs a test declared closed: a `wait` naming one of them is claimed again with ownerClosed. */
  readonly closedRuns = new Set<string>();
  /** Every message, in order (tests assert on it). */
  readonly messages: { step: string; request: unknown; answer: unknown }[] = [];

  constructor(
    private readonly settings: Partial<JobRecordSettings> = {},
    readonly now: () => number = Date.now,
    readonly clock: () => number = () => performance.now(),
  ) {}

  stateOf(version: TenantObjectVersion): JobRecordState | undefined {
    return this.records.get(jobRecordWorkflowId(version));
  }

  /** A look, never a message: a record that does not exist is not made. */
  async read(version: TenantObjectVersion): Promise<JobRecordReading> {
    const state = this.stateOf(version);
    return state ? { status: 'running', view: view(state) } : { status: 'absent' };
  }

  apply<R, A>(
    version: TenantObjectVersion,
    step: string,
    decide: (s: JobRecordState, r: R, nowMs: number) => Step<A>,
    request: R,
  ): A {
    const id = jobRecordWorkflowId(version);
    const current = this.records.get(id) ?? createRecordState(version, this.settings, this.now());
    const next = decide(current, request, this.now());
    this.records.set(id, next.state);
    this.messages.push({ step, request, answer: next.answer });
    return next.answer;
  }

  isClosed(run: ClosedRun): boolean {
    return this.closedRuns.has(`${run.workflowId}/${run.runId}`);
  }

  session(version: TenantObjectVersion, attempt: Attempt = currentAttempt()): JobRecordSession {
    const gate = this;
    const apply = <R, A>(step: string, decide: (s: JobRecordState, r: R, nowMs: number) => Step<A>, r: R) =>
      gate.apply(version, step, decide, r);
    const closedOwner = (owner: Attempt): ClosedRun | undefined => {
      const run = { workflowId: owner.workflowId, runId: owner.runId };
      return gate.isClosed(run) ? run : undefined;
    };
    return {
      attempt,
      async claimCreate() {
        const first = apply('claimCreate', claimCreate, { attempt });
        const ownerClosed = first.kind === 'wait' ? closedOwner(first.owner) : undefined;
        return ownerClosed ? apply('claimCreate', claimCreate, { attempt, ownerClosed }) : first;
      },
      async resolveCreate(seq, job) {
        return apply('resolveCreate', resolveCreate, { seq, attempt, ...(job ? { job } : {}) });
      },
      async claimUpload(jobId) {
        const first = apply('claimUpload', claimUpload, { jobId, attempt });
        const ownerClosed = first.kind === 'wait' ? closedOwner(first.owner) : undefined;
        return ownerClosed ? apply('claimUpload', claimUpload, { jobId, attempt, ownerClosed }) : first;
      },
      async confirm(intent, seq) {
        const sentAt = gate.clock();
        const answer = apply('confirm', confirm, { intent, seq, attempt });
        return answer.granted ? leaseFrom(sentAt, answer.leaseMs, gate.clock) : undefined;
      },
      async uploadEnded(seq, lastBytesSent) {
        apply('uploadEnded', uploadEnded, { seq, attempt, lastBytesSent });
      },
      async noteJobState(jobId, state) {
        return apply('noteJobState', noteJobState, { jobId, state });
      },
      async supersede() {
        apply('supersede', supersede, { workflowId: attempt.workflowId });
      },
    };
  }
}
