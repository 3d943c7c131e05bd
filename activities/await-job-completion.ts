/**
import type { BudgetGate } from './budget/gate.js';
import { budgetWaitFailure, failure } from './failures.js';
import { HEARTBEAT_PULSE_MS, withHeartbeatPulse } from './heartbeat-pulse.js';
import type { JobRecordGate } from './job-record/gate.js';
 */
import { Context, log } from '@temporalio/activity';
import type {
  AwaitJobCompletionInput,
  AwaitJobCompletionResult,
  JobSighting,
  PollProgress,
} from '../workflows/contracts/activities.js';
import { pollDelayMs } from '../workflows/poll-schedule.js';
import type { BudgetGate } from './budget/gate.js';
import { budgetWaitFailure, failure } from './failures.js';
import { HEARTBEAT_PULSE_MS, withHeartbeatPulse } from './heartbeat-pulse.js';
import type { JobRecordGate } from './job-record/gate.js';
import { knownJobState, unexpectedJobState } from './job-state.js';
import type { CallOptions, ImportJob } from './service/types.js';
import { ServiceCalls, type ServiceCallsDeps } from './service-calls.js';
import type { JobWatcher, Watch, WatchOutcome } from './watch/job-watcher.js';
import { paceFromUsage, readReserve } from './watch/pace.js';

/** What this activity needs of the service client. */
interface JobStatusService {
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
  /** The process's watcher of the tenant's processing jobs; without one, every job is polled. */
  watcher?: JobWatcher;
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
    const progress = {
      pollIndex: d.pollIndex,
      waitingSince: d.waitingSince,
      lastState: String(d.lastState ?? 'unknown'),
    };
    return isSighting(d.lastSeen) ? { ...progress, lastSeen: d.lastSeen } : progress;
  }
  return undefined;
}

function isSighting(s: unknown): s is JobSighting {
  const v = s as Partial<JobSighting> | undefined;
  return (
    typeof v?.state === 'string' &&
    typeof v.at === 'string' &&
    !Number.isNaN(Date.parse(v.at)) &&
    (v.by === 'status read' || v.by === 'watcher')
  );
}

/** A job is watched again at most this often after a confirming read found it still running. */
const MAX_WATCH_MISSES = 2;

type Step = { kind: 'done'; result: AwaitJobCompletionResult } | { kind: 'running' };

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

    /** One status read: the result when the job ended, else 'running'; throws on failed, unknown or timed out. */
    async function read(): Promise<Step> {
      const job = await calls.run('jobStatus', () => deps.service.getJob(jobId, { signal }));
      polls += 1;
      progress.pollIndex += 1;
      const state = knownJobState(job.state);
      if (job.state !== progress.lastState) {
        log.info('Import job state changed', { jobId, from: progress.lastState, to: job.state, polls });
      }
      // The service's own spelling, so an unknown state shows as it is.
      progress.lastState = job.state;
      progress.lastSeen = { state: job.state, at: new Date(now()).toISOString(), by: 'status read' };
      beat();
      if ((state === 'completed' || state === 'failed') && input.objectVersion && deps.jobRecord) {
        const version = { ...input.objectVersion, tenant: deps.budget.tenant };
        await deps.jobRecord.session(version).noteJobState(jobId, job.state);
      }
      if (state === undefined) throw unexpectedJobState(jobId, job.state, 'polling stopped instead of waiting on it');
      if (state === 'completed') return { kind: 'done', result: { state: 'completed', polls, apiCalls: calls.counts } };
      if (state === 'failed') {
        throw failure(
          'JobFailed',
          `import job ${jobId} failed: the service reports state failed and gives no reason; check the file's rows and the job in the service`,
          { jobId },
        );
      }
      // Decided after a read, never before one: a job that finished during a long wait is completed, not timed out.
      if (deadlineMs - now() <= 0) {
        throw failure(
          'JobTimedOut',
          `import job ${jobId} did not finish within ${timeoutMs} ms of ${progress.waitingSince}; its last state was ${progress.lastState}`,
          { jobId, lastState: progress.lastState, waitingSince: progress.waitingSince, timeoutMs },
        );
      }
      return { kind: 'running' };
    }

    /** Sleeps `ms` (cut at the deadline) in heartbeat slices, so that cancellation reaches it. */
    async function sleepBeating(ms: number): Promise<void> {
      const delayMs = Math.max(0, Math.min(ms, deadlineMs - now()));
      progress.nextCheckAt = new Date(now() + delayMs).toISOString();
      for (let slept = 0; slept < delayMs; slept += sliceMs) {
        await ctx.sleep(Math.min(sliceMs, delayMs - slept));
        beat();
      }
    }

    /** What the watcher knows of this job, for the heartbeat: the last sweep that listed it, the next one. */
    function noteWatcherWord(watcher: JobWatcher, watch: Watch): void {
      const listedAtMs = watch.lastListedAtMs();
      const known = progress.lastSeen ? Date.parse(progress.lastSeen.at) : Number.NEGATIVE_INFINITY;
      if (listedAtMs !== undefined && listedAtMs > known) {
        progress.lastSeen = { state: 'processing', at: new Date(listedAtMs).toISOString(), by: 'watcher' };
      }
      if (watcher.nextSweepAtMs !== undefined) progress.nextCheckAt = new Date(watcher.nextSweepAtMs).toISOString();
    }

    /** Waits for the watcher's word, heartbeating; undefined when the deadline came first. */
    async function watched(watcher: JobWatcher): Promise<WatchOutcome | undefined> {
      const watch = watcher.watch(jobId);
      let outcome: WatchOutcome | undefined;
      void watch.outcome.then((o) => {
        outcome = o;
      });
      try {
        while (outcome === undefined && deadlineMs - now() > 0) {
          noteWatcherWord(watcher, watch);
          await Promise.race([watch.outcome, ctx.sleep(Math.min(sliceMs, Math.max(1, deadlineMs - now())))]);
          noteWatcherWord(watcher, watch);
          beat();
        }
        return outcome;
      } finally {
        watch.cancel();
      }
    }

    async function pollUntilEnd(watcher: JobWatcher | undefined): Promise<AwaitJobCompletionResult> {
      if (watcher) watcher.polling += 1;
      try {
        for (;;) {
          await sleepBeating(await pollDelay(deps, progress.pollIndex, watcher));
          const step = await read();
          if (step.kind === 'done') return step.result;
        }
      } finally {
        if (watcher) watcher.polling -= 1;
      }
    }

    beat();
    // A pause or reset must reach an attempt whose status call is slow too, and abort that call.
    return withHeartbeatPulse(beat, HEARTBEAT_PULSE_MS, async () => {
      const watcher = deps.watcher;
      if (!watcher) return pollUntilEnd(undefined);
      for (let misses = 0; ; ) {
        const outcome = await watched(watcher);
        if (outcome?.kind === 'fallback') {
          const notice = watcher.takeFallbackNotice(outcome.reason);
          if (notice) log.warn(`job watching falls back to per-job status polls: ${notice}`, { jobId });
          return pollUntilEnd(watcher);
        }
        // Left the list, or the deadline came: one read says how it ended.
        const step = await read();
        if (step.kind === 'done') return step.result;
        if (outcome && !outcome.seen) misses += 1;
        if (misses >= MAX_WATCH_MISSES) {
          const notice = watcher.takeFallbackNotice('a job in progress was never listed as processing');
          if (notice) log.warn(`job watching falls back to per-job status polls: ${notice}`, { jobId });
          return pollUntilEnd(watcher);
        }
      }
    });
  };
}

/**
 * The schedule's delay; for the polls of a watcher's fallback, stretched when
 * the status reads left, less those uploads and confirming reads need, cannot
 * pay for every polled job at that pace. When they cannot pay for one more
 * round, the import waits for the window's reset in its workflow (a durable
 * budget wait), not in an activity slot. Without a watcher (tests of the
 * schedule itself) the schedule alone applies; every read is reserved anyway.
 */
async function pollDelay(deps: AwaitJobCompletionDeps, pollIndex: number, watcher?: JobWatcher): Promise<number> {
  const scheduled = pollDelayMs(pollIndex, deps.poll.scheduleMs, deps.poll.jitterRatio, deps.random);
  const usage = watcher ? await readUsage(deps.budget) : undefined;
  if (!watcher || !usage) return scheduled;
  const { reserve, compression } = watcher.settings;
  const round = { callsPerRound: watcher.polling, jobsWaiting: watcher.waiting, minIntervalMs: scheduled };
  if (usage.jobStatus.remaining - readReserve('jobStatus', usage, round.jobsWaiting, reserve) < round.callsPerRound) {
    throw budgetWaitFailure('BudgetExhausted', 'The status reads left in this window are kept for uploads', {
      endpoint: 'jobStatus',
      resetsAt: usage.jobStatus.exhaustedUntil ?? usage.jobStatus.resetsAt,
    });
  }
  return paceFromUsage('jobStatus', usage, round, (deps.now ?? Date.now)(), reserve, compression) ?? scheduled;
}

async function readUsage(budget: BudgetGate) {
  try {
    return await budget.usage();
  } catch {
    // The ledger could not answer: the schedule alone; every read is still reserved.
    return undefined;
  }
}
