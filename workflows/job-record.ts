/**
 * The job record of one object version (id `jobRecordWorkflowId(version)`):
 * which job imports it, who may create or upload it now, and what the
 * service said of the job. Activities reach it only through Updates with
 * update-with-start (activities/job-record/gate.ts); Updates run one at a
 * time here, so every decision in job-record-state.ts sees the one current
 * state. It completes (after its handlers finished) once its job completed,
 * as abandoned after `idleMs` without a message, and continues as new when
 * the server suggests it (a handful of Updates per import: it should not).
 *
 * Releases: a record outlives the import that started it (a job that failed
 * or never completed waits for the next import of its version, for up to
 * `idleMs`), so it must not keep that import's release alive. Under Worker
 * Versioning it is pinned like every workflow here, and it continues as new
 * on the current release as soon as it learns one is (versioning.ts), with
 * its whole state in the input: the next import of the version finds the same
 * job, failed jobs and intent keys, answered by the new release's workers.
 * Temporal tells a pinned run of a new current release only on its next
 * workflow task, so a waiting record wakes every `releaseCheckMs` to ask;
 * an old release is rid of its records that long after the switch at the
 * latest, and drains. Unversioned, the record never wakes for it.
 */
import { allHandlersFinished, condition, setHandler, workflowInfo } from '@temporalio/workflow';
import type { JobRecordInput, JobRecordResult } from './contracts/job-record.js';
import {
  claimCreateUpdate,
  claimUploadUpdate,
  confirmUpdate,
  jobRecordQuery,
  noteJobStateUpdate,
  resolveCreateUpdate,
  supersedeUpdate,
  uploadEndedUpdate,
} from './contracts/messages.js';
import {
  carriedState,
  claimCreate,
  claimRequestProblem,
  claimUpload,
  claimUploadRequestProblem,
  confirm,
  confirmRequestProblem,
  createRecordState,
  idleDeadlineMs,
  isFinished,
  type JobRecordState,
  noteJobState,
  noteJobStateRequestProblem,
  resolveCreate,
  resolveCreateRequestProblem,
  type Step,
  supersede,
  supersedeRequestProblem,
  uploadEnded,
  uploadEndedRequestProblem,
  view,
} from './job-record-state.js';
import { continueAsNewOnCurrentVersion, newVersionIsCurrent } from './versioning.js';

function validated(problemOf: (arg: unknown) => string | undefined) {
  return (arg: unknown) => {
    const problem = problemOf(arg);
    if (problem) throw new Error(problem);
  };
}

export async function jobRecord(input: JobRecordInput): Promise<JobRecordResult> {
  let state: JobRecordState =
    carriedState(input.state, input.version) ?? createRecordState(input.version, input.settings, Date.now());

  /** Runs one decision on the current state, at the workflow's time. */
  function apply<R, A>(decide: (s: JobRecordState, request: R, nowMs: number) => Step<A>) {
    return (request: R): A => {
      const step = decide(state, request, Date.now());
      state = step.state;
      return step.answer;
    };
  }

  setHandler(claimCreateUpdate, apply(claimCreate), { validator: validated(claimRequestProblem) });
  setHandler(confirmUpdate, apply(confirm), { validator: validated(confirmRequestProblem) });
  setHandler(resolveCreateUpdate, apply(resolveCreate), { validator: validated(resolveCreateRequestProblem) });
  setHandler(claimUploadUpdate, apply(claimUpload), { validator: validated(claimUploadRequestProblem) });
  setHandler(uploadEndedUpdate, apply(uploadEnded), { validator: validated(uploadEndedRequestProblem) });
  setHandler(noteJobStateUpdate, apply(noteJobState), { validator: validated(noteJobStateRequestProblem) });
  setHandler(supersedeUpdate, apply(supersede), { validator: validated(supersedeRequestProblem) });
  setHandler(jobRecordQuery, () => view(state));

  const runIsOver = () => workflowInfo().continueAsNewSuggested || newVersionIsCurrent();
  const versioned = workflowInfo().currentDeploymentVersion !== undefined;
  let idle = false;
  while (!isFinished(state) && !runIsOver() && !idle) {
    const seen = state.lastMessageMs;
    const untilIdleMs = Math.max(1, idleDeadlineMs(state) - Date.now());
    const woke = await condition(
      () => isFinished(state) || runIsOver() || state.lastMessageMs !== seen,
      versioned ? Math.min(untilIdleMs, state.settings.releaseCheckMs) : untilIdleMs,
    );
    idle = !woke && Date.now() >= idleDeadlineMs(state);
  }
  await condition(allHandlersFinished);
  if (isFinished(state)) return { outcome: 'completed', view: view(state), state };
  if (idle) return { outcome: 'abandoned', view: view(state), state };
  return continueAsNewOnCurrentVersion<typeof jobRecord>({ version: input.version, state });
}
