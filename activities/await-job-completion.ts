/**
 * The awaitJobCompletion activity: waits until the job is `completed` or
 * `failed` (in any case), or the overall limit passes (decided after a status
 * read, never before: a job may have finished during a long wait).
 *
 * With a watcher (production: createActivities gives one per process), a
 * fresh wait first reads its job once, soon after the upload, when the status
 * budget has room for it (a job that ends within seconds is done then). Then
 * the activity waits to be told that its job left the service's `processing`
 * list, and makes ONE status read to confirm the final state: two status
 * reads per import however long the job takes (a third, spared only when the
 * budget has room, for a job a sweep skipped between pages and told at its
 * first miss), the list calls shared by every process of the tenant
 * (watch/job-watcher.ts). A job the list never
 * shows (the service lists it late, or not at all, or ignores the filter) is
 * polled one by one instead, and the first such fallback is logged.
 *
 * Per-job polls follow the spec's schedule (5 s, 10 s, 20 s, 40 s, then every
 * 60 s, with jitter); a watcher's fallback polls stretch it when the status
 * reads left in the window, spread over the time left and the jobs polled,
 * require it (watch/pace.ts).
 *
 * A state the spec does not name fails the step (UnexpectedJobState), so that
 * it shows in the workflow's progress instead of a silent wait until the
 * limit. When the input names the object version, the job's end is told to
 * its job record. One long activity rather than a timer per poll keeps the
 * history small; it heartbeats its progress (also while waiting, so that
 * cancellation reaches it) and a retry resumes at the poll index it had
 * reached.
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
import type { JobWatcher, Watch, WatchOptions, WatchOutcome } from './watch/job-watcher.js';
import { paceFromUsage, readReserve, statusReadsToSpare } from './watch/pace.js';

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
  return function awaitJobCompletion(input: AwaitJobCompletionInput): Promise<AwaitJobCompletionResult> {
    return new JobWait(deps, input).run();
  };
}

/** One attempt of the wait for one job: its progress, its deadline, its reads. */
class JobWait {
  private readonly ctx = Context.current();
  private readonly calls: ServiceCalls;
  private readonly now: () => number;
  private readonly sliceMs: number;
  private readonly progress: PollProgress;
  private readonly deadlineMs: number;
  private polls = 0;

  constructor(
    private readonly deps: AwaitJobCompletionDeps,
    private readonly input: AwaitJobCompletionInput,
  ) {
    this.calls = ServiceCalls.forCurrentActivity(deps, input.tenant);
    this.now = deps.now ?? Date.now;
    this.sliceMs = deps.heartbeatIntervalMs ?? 5_000;
    this.progress = resumedProgress(this.ctx.info.heartbeatDetails) ?? {
      pollIndex: input.startPollIndex ?? 0,
      waitingSince: input.waitingSince ?? new Date(this.now()).toISOString(),
      lastState: 'unknown',
    };
    this.deadlineMs = Date.parse(this.progress.waitingSince) + input.timeoutMs;
  }

  run(): Promise<AwaitJobCompletionResult> {
    const beat = () => this.beat();
    beat();
    // A pause or reset must reach an attempt whose status call is slow too, and abort that call.
    return withHeartbeatPulse(beat, HEARTBEAT_PULSE_MS, () =>
      this.deps.watcher ? this.watchUntilEnd(this.deps.watcher) : this.pollUntilEnd(undefined),
    );
  }

  /** Told by the watcher, confirmed by one read; polls instead once the watcher cannot tell. */
  private async watchUntilEnd(watcher: JobWatcher): Promise<AwaitJobCompletionResult> {
    const early = await this.earlyRead(watcher);
    if (early) return early;
    let confirmAtFirstMiss = true;
    for (let misses = 0; ; ) {
      const outcome = await this.watched(watcher, { confirmAtFirstMiss });
      if (outcome?.kind === 'fallback') return this.fallBack(watcher, outcome.reason);
      // Left the list, or the deadline came: one read says how it ended.
      const step = await this.read();
      if (step.kind === 'done') return step.result;
      // Still running after a sweep missed it: it was skipped between pages; two misses from now on.
      if (outcome?.seen) confirmAtFirstMiss = false;
      if (outcome && !outcome.seen) misses += 1;
      if (misses >= MAX_WATCH_MISSES) return this.fallBack(watcher, 'a job in progress was never listed as processing');
    }
  }

  /**
   * A job that ends within seconds: one status read the schedule's first
   * delay after its wait began, when the status reads left have room for it
   * (watch/pace.ts statusReadsToSpare), so a small import completes in
   * seconds instead of waiting for sweeps to miss its job. Only on a fresh
   * wait: a wait resumed after a read or a budget wait has a job long running.
   */
  private async earlyRead(watcher: JobWatcher): Promise<AwaitJobCompletionResult | undefined> {
    if (this.progress.pollIndex > 0) return undefined;
    const usage = await readUsage(this.deps.budget);
    const now = (this.deps.now ?? Date.now)();
    if (!usage || statusReadsToSpare(usage, watcher.waiting + 1, now, watcher.settings.reserve) < 1) return undefined;
    await this.sleepBeating(this.deps.poll.scheduleMs[0] ?? 0);
    const step = await this.read();
    return step.kind === 'done' ? step.result : undefined;
  }

  private fallBack(watcher: JobWatcher, reason: string): Promise<AwaitJobCompletionResult> {
    const notice = watcher.takeFallbackNotice(reason);
    if (notice) log.warn(`job watching falls back to per-job status polls: ${notice}`, { jobId: this.input.jobId });
    return this.pollUntilEnd(watcher);
  }

  private async pollUntilEnd(watcher: JobWatcher | undefined): Promise<AwaitJobCompletionResult> {
    if (watcher) watcher.polling += 1;
    try {
      for (;;) {
        await this.sleepBeating(await pollDelay(this.deps, this.progress.pollIndex, watcher));
        const step = await this.read();
        if (step.kind === 'done') return step.result;
      }
    } finally {
      if (watcher) watcher.polling -= 1;
    }
  }

  /** Waits for the watcher's word, heartbeating; undefined when the deadline came first. */
  private async watched(watcher: JobWatcher, options: WatchOptions): Promise<WatchOutcome | undefined> {
    const watch = watcher.watch(this.input.jobId, options);
    let outcome: WatchOutcome | undefined;
    void watch.outcome.then((o) => {
      outcome = o;
    });
    try {
      while (outcome === undefined && this.msToDeadline() > 0) {
        this.noteWatcherWord(watcher, watch);
        await Promise.race([watch.outcome, this.ctx.sleep(Math.min(this.sliceMs, Math.max(1, this.msToDeadline())))]);
        this.noteWatcherWord(watcher, watch);
        this.beat();
      }
      return outcome;
    } finally {
      watch.cancel();
    }
  }

  /** What the watcher knows of this job, for the heartbeat: the last sweep that listed it, the next one. */
  private noteWatcherWord(watcher: JobWatcher, watch: Watch): void {
    const listedAtMs = watch.lastListedAtMs();
    const known = this.progress.lastSeen ? Date.parse(this.progress.lastSeen.at) : Number.NEGATIVE_INFINITY;
    if (listedAtMs !== undefined && listedAtMs > known) {
      this.progress.lastSeen = { state: 'processing', at: new Date(listedAtMs).toISOString(), by: 'watcher' };
    }
    if (watcher.nextSweepAtMs !== undefined) this.progress.nextCheckAt = new Date(watcher.nextSweepAtMs).toISOString();
  }

  /** One status read: the result when the job ended, else 'running'; throws on failed, unknown or timed out. */
  private async read(): Promise<Step> {
    const { jobId } = this.input;
    const job = await this.calls.run('jobStatus', () =>
      this.deps.service.getJob(jobId, { signal: this.ctx.cancellationSignal }),
    );
    this.polls += 1;
    this.noteRead(job.state);
    const state = knownJobState(job.state);
    if (state === 'completed' || state === 'failed') await this.tellRecord(job.state);
    if (state === undefined) throw unexpectedJobState(jobId, job.state, 'polling stopped instead of waiting on it');
    if (state === 'completed') {
      return { kind: 'done', result: { state: 'completed', polls: this.polls, apiCalls: this.calls.counts } };
    }
    if (state === 'failed') {
      throw failure(
        'JobFailed',
        `import job ${jobId} failed: the service reports state failed and gives no reason; check the file's rows and the job in the service`,
        { jobId },
      );
    }
    // Decided after a read, never before one: a job that finished during a long wait is completed, not timed out.
    if (this.msToDeadline() <= 0) throw this.timedOut();
    return { kind: 'running' };
  }

  /** The read's word in the progress (the service's own spelling, so an unknown state shows as it is). */
  private noteRead(state: string): void {
    const { progress } = this;
    progress.pollIndex += 1;
    if (state !== progress.lastState) {
      log.info('Import job state changed', {
        jobId: this.input.jobId,
        from: progress.lastState,
        to: state,
        polls: this.polls,
      });
    }
    progress.lastState = state;
    progress.lastSeen = { state, at: new Date(this.now()).toISOString(), by: 'status read' };
    this.beat();
  }

  /** The job's end, told to the version's job record when the input names the version. */
  private async tellRecord(state: string): Promise<void> {
    const { objectVersion } = this.input;
    if (!objectVersion || !this.deps.jobRecord) return;
    const version = { ...objectVersion, tenant: this.deps.budget.tenant };
    await this.deps.jobRecord.session(version).noteJobState(this.input.jobId, state);
  }

  private timedOut(): Error {
    const { jobId, timeoutMs } = this.input;
    const { lastState, waitingSince } = this.progress;
    return failure(
      'JobTimedOut',
      `import job ${jobId} did not finish within ${timeoutMs} ms of ${waitingSince}; its last state was ${lastState}`,
      { jobId, lastState, waitingSince, timeoutMs },
    );
  }

  /** Sleeps `ms` (cut at the deadline) in heartbeat slices, so that cancellation reaches it. */
  private async sleepBeating(ms: number): Promise<void> {
    const delayMs = Math.max(0, Math.min(ms, this.msToDeadline()));
    this.progress.nextCheckAt = new Date(this.now() + delayMs).toISOString();
    for (let slept = 0; slept < delayMs; slept += this.sliceMs) {
      await this.ctx.sleep(Math.min(this.sliceMs, delayMs - slept));
      this.beat();
    }
  }

  private msToDeadline(): number {
    return this.deadlineMs - this.now();
  }

  private beat(): void {
    this.ctx.heartbeat({ ...this.progress });
  }
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
