/**
 * The awaitJobCompletion activity: polls the job on the spec's schedule
 * (5 s, 10 s, 20 s, 40 s, then every 60 s, with jitter) until it is
 * `completed` or `failed` (in any case), or the overall limit passes (decided
 * after a poll, never before: a job may have finished during a long wait). A
 * state the spec does not name fails the step (UnexpectedJobState), so that it
 * shows in the workflow's progress instead of a silent wait until the limit.
 * One long activity rather than a timer per poll keeps the history small; it
 * heartbeats its progress (also while sleeping, so that cancellation reaches
 * it) and a retry resumes at the poll index it had reached.
 *
 * Given the object version (runs with the job-record marker), the job's end
 * is told to the version's record before the activity returns or fails: a
 * completed job closes the record (a later import of the version follows it),
 * a failed one is forgotten there so a later import creates another.
 */
import { Context, log } from '@temporalio/activity';
import type {
  AwaitJobCompletionInput,
  AwaitJobCompletionResult,
  PollProgress,
} from '../workflows/contracts/activities.js';
import { pollDelayMs } from '../workflows/poll-schedule.js';
import { failure } from './failures.js';
import type { JobRecordGate } from './job-record/gate.js';
import { knownJobState, unexpectedJobState } from './job-state.js';
import type { CallOptions, ImportJob } from './service/types.js';
import { ServiceCalls, type ServiceCallsDeps } from './service-calls.js';

/** What this activity needs of the service client. */
export interface JobStatusService {
  getJob(jobId: string, options?: CallOptions): Promise<ImportJob>;
}

export interface AwaitJobCompletionDeps extends ServiceCallsDeps {
  service: JobStatusService;
  poll: { scheduleMs: readonly number[]; jitterRatio: number };
  /** Where the job's end is told, when the input names the object version. */
  jobRecord?: JobRecordGate;
  /** Longest sleep between heartbeats; keep well under the activity's heartbeat timeout. */
  heartbeatIntervalMs?: number;
  random?: () => number;
  now?: () => number;
}

function resumedProgress(details: unknown): PollProgress | undefined {
  const d = details as Partial<PollProgress> | undefined;
  if (
    typeof d?.pollIndex === 'number' &&
    Number.isInteger(d.pollIndex) &&
    d.pollIndex >= 0 &&
    typeof d.waitingSince === 'string' &&
    !Number.isNaN(Date.parse(d.waitingSince))
  ) {
    return { pollIndex: d.pollIndex, waitingSince: d.waitingSince, lastState: String(d.lastState ?? 'unknown') };
  }
  return undefined;
}

export function makeAwaitJobCompletion(deps: AwaitJobCompletionDeps) {
  const sliceMs = deps.heartbeatIntervalMs ?? 5_000;
  const now = deps.now ?? Date.now;
  return async function awaitJobCompletion(input: AwaitJobCompletionInput): Promise<AwaitJobCompletionResult> {
    const ctx = Context.current();
    const signal = ctx.cancellationSignal;
    const calls = ServiceCalls.forCurrentActivity(deps, input.tenant);
    const { jobId, timeoutMs } = input;
    const progress: PollProgress = resumedProgress(ctx.info.heartbeatDetails) ?? {
      pollIndex: input.startPollIndex ?? 0,
      waitingSince: input.waitingSince ?? new Date(now()).toISOString(),
      lastState: 'unknown',
    };
    const deadlineMs = Date.parse(progress.waitingSince) + timeoutMs;
    const beat = () => ctx.heartbeat({ ...progress });
    let polls = 0;
    beat();
    for (;;) {
      // The last sleep is cut at the deadline, so the final poll happens at it rather than after it;
      // a deadline already past (after a long budget wait) still gets one poll.
      const delayMs = Math.max(
        0,
        Math.min(
          pollDelayMs(progress.pollIndex, deps.poll.scheduleMs, deps.poll.jitterRatio, deps.random),
          deadlineMs - now(),
        ),
      );
      for (let slept = 0; slept < delayMs; slept += sliceMs) {
        await ctx.sleep(Math.min(sliceMs, delayMs - slept));
        beat();
      }
      const job = await calls.run('jobStatus', () => deps.service.getJob(jobId, { signal }));
      polls += 1;
      progress.pollIndex += 1;
      const state = knownJobState(job.state);
      if (job.state !== progress.lastState) {
        log.info('Import job state changed', { jobId, from: progress.lastState, to: job.state, polls });
      }
      // The service's own spelling, so an unknown state shows as it is.
      progress.lastState = job.state;
      beat();
      if ((state === 'completed' || state === 'failed') && input.objectVersion && deps.jobRecord) {
        const version = { ...input.objectVersion, tenant: deps.budget.tenant };
        await deps.jobRecord.session(version).noteJobState(jobId, job.state);
      }
      if (state === undefined) throw unexpectedJobState(jobId, job.state, 'polling stopped instead of waiting on it');
      if (state === 'completed') return { state: 'completed', polls, apiCalls: calls.counts };
      if (state === 'failed') {
        throw failure(
          'JobFailed',
          `import job ${jobId} failed: the service reports state failed and gives no reason; check the file's rows and the job in the service`,
          { jobId },
        );
      }
      // Decided after a poll, never before one: a job that finished during a long wait is completed, not timed out.
      if (deadlineMs - now() <= 0) {
        throw failure(
          'JobTimedOut',
          `import job ${jobId} did not finish within ${timeoutMs} ms of ${progress.waitingSince}; its last state was ${progress.lastState}`,
          { jobId, lastState: progress.lastState, waitingSince: progress.waitingSince, timeoutMs },
        );
      }
    }
  };
}
