import { CancelledFailure } from '@temporalio/common';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { type AwaitJobCompletionDeps, makeAwaitJobCompletion } from '../../activities/await-job-completion.js';
import type {
  AwaitJobCompletionInput,
  AwaitJobCompletionResult,
  PollProgress,
} from '../../workflows/contracts/activities.js';
import { failureOf, runActivity } from '../support/activities.js';
import type { InMemoryBudgetGate } from '../support/in-memory-budget-gate.js';
import { InMemoryJobRecordGate } from '../support/in-memory-job-record-gate.js';
import { budgetWith, type ServiceWorld, startServiceWorld } from './environment.js';

const CSV = Buffer.from('Account Name,Account Domain\nAcme,acme.example\n');

describe('awaitJobCompletion', () => {
  let w: ServiceWorld;
  let budget: InMemoryBudgetGate;
  beforeAll(async () => {
    // Processing takes a few polls of the tiny schedule below.
    w = await startServiceWorld({ processingMs: 150 });
  });
  afterAll(() => w.close());
  beforeEach(() => {
    w.sim.clearFaults();
    w.sim.setJobOutcome('completed');
    budget = budgetWith();
  });

  function deps(overrides: Partial<AwaitJobCompletionDeps> = {}): AwaitJobCompletionDeps {
    return {
      service: w.service,
      budget,

      poll: { scheduleMs: [20, 40], jitterRatio: 0 },
      heartbeatIntervalMs: 10,
      ...overrides,
    };
  }
  const run = (input: AwaitJobCompletionInput, d = deps(), info = {}) =>
    runActivity<AwaitJobCompletionInput, AwaitJobCompletionResult, PollProgress>(
      makeAwaitJobCompletion(d),
      input,
      info,
    );
  async function uploadedJob(): Promise<string> {
    const job = await w.service.createJob({ dataImportName: 'await', entityType: 'Account' });
    await w.service.submitData(job.id, [CSV], { contentLength: CSV.length });
    return job.id;
  }
  async function newJob(): Promise<string> {
    return (await w.service.createJob({ dataImportName: 'never uploaded', entityType: 'Account' })).id;
  }
  const statusPolls = (jobId: string) =>
    w.sim.requests().filter((r) => r.endpoint === 'jobStatus' && r.path.endsWith(`/${jobId}`)).length;

  describe('the object version’s job record', () => {
    const version = { bucket: 'imports', key: 'accounts.csv', etag: '"e1"' };
    const owner = { workflowId: 'import-a', runId: 'r', activityId: '4', scheduledMs: 1 };
    async function recordWithJob(gate: InMemoryJobRecordGate, jobId: string) {
      const session = gate.session({ ...version, tenant: 't1' }, owner);
      const claim = await session.claimCreate();
      if (claim.kind !== 'create') throw new Error(`unexpected claim ${claim.kind}`);
      await session.resolveCreate(claim.seq, { jobId, state: 'new' });
    }

    it('is told a completed job: the record closes with it', async () => {
      const gate = new InMemoryJobRecordGate();
      const jobId = await uploadedJob();
      await recordWithJob(gate, jobId);
      await run({ tenant: 't1', jobId, timeoutMs: 60_000, objectVersion: version }, deps({ jobRecord: gate })).result;
      expect(gate.stateOf({ ...version, tenant: 't1' })?.job).toMatchObject({ id: jobId, terminal: 'completed' });
    });

    it('is told a failed job: the record forgets it, so a later import creates another', async () => {
      const gate = new InMemoryJobRecordGate();
      w.sim.setJobOutcome('failed');
      const jobId = await uploadedJob();
      await recordWithJob(gate, jobId);
      const a = run({ tenant: 't1', jobId, timeoutMs: 60_000, objectVersion: version }, deps({ jobRecord: gate }));
      expect((await failureOf(a.result)).type).toBe('JobFailed');
      const state = gate.stateOf({ ...version, tenant: 't1' });
      expect(state?.job).toBeUndefined();
      expect(state?.failedJobs).toEqual([jobId]);
    });
  });

  it('polls until completed, counting each poll against the budget and heartbeating progress', async () => {
    const jobId = await newJob();
    const a = run({ tenant: 't1', jobId, timeoutMs: 60_000 });
    // The data arrives only after two polls saw the job new, so the loop has to keep going.
    while (statusPolls(jobId) < 2) await new Promise((r) => setTimeout(r, 5));
    await w.service.submitData(jobId, [CSV], { contentLength: CSV.length });
    const result = await a.result;
    expect(result.state).toBe('completed');
    expect(result.polls).toBeGreaterThan(2);
    expect(result.apiCalls).toEqual({ jobStatus: result.polls });
    expect(statusPolls(jobId)).toBe(result.polls);
    expect(budget.requests.filter((r) => r.endpoint === 'jobStatus')).toHaveLength(result.polls);
    expect(a.heartbeats.map((h) => h.lastState)).toContain('new');
    expect(a.heartbeats.at(-1)).toMatchObject({ pollIndex: result.polls, lastState: 'completed' });
    expect(new Set(a.heartbeats.map((h) => h.waitingSince)).size).toBe(1);
  });

  it('logs each change of the job state once, not every poll', async () => {
    const jobId = await uploadedJob();
    const a = run({ tenant: 't1', jobId, timeoutMs: 60_000 });
    await a.result;
    const changes = a.logs.filter((l) => l.message === 'Import job state changed').map((l) => l.meta?.to);
    expect(changes.at(-1)).toBe('completed');
    expect(new Set(changes).size).toBe(changes.length);
    expect(a.logs[0]?.meta).toMatchObject({ jobId, workflowId: expect.any(String) });
  });

  it('heartbeats while sleeping between polls, not only after them', async () => {
    const jobId = await uploadedJob();
    const a = run({ tenant: 't1', jobId, timeoutMs: 60_000 }, deps({ poll: { scheduleMs: [200], jitterRatio: 0 } }));
    await a.result;
    // Before the first poll: one on start, then one per 10 ms slice of the 200 ms sleep.
    const beforeFirstPoll = a.heartbeats.filter((h) => h.pollIndex === 0);
    expect(beforeFirstPoll).toHaveLength(21);
  });

  it('a failed job fails JobFailed naming the job, not retryable', async () => {
    w.sim.setJobOutcome('failed');
    const jobId = await uploadedJob();
    const f = await failureOf(run({ tenant: 't1', jobId, timeoutMs: 60_000 }).result);
    expect(f.type).toBe('JobFailed');
    expect(f.nonRetryable).toBe(true);
    expect(f.message).toContain(`import job ${jobId} failed`);
    expect(f.details?.[0]).toEqual({ jobId });
  });

  it('a job that never finishes fails JobTimedOut after the limit, with a last poll at the deadline', async () => {
    const jobId = await newJob();
    const f = await failureOf(run({ tenant: 't1', jobId, timeoutMs: 100 }).result);
    expect(f.type).toBe('JobTimedOut');
    expect(f.nonRetryable).toBe(true);
    expect(f.message).toMatch(
      new RegExp(`^import job ${jobId} did not finish within 100 ms of .*; its last state was new$`),
    );
    expect(statusPolls(jobId)).toBeGreaterThan(0);
  });

  it('a job that completed during a long wait is completed, not timed out: it polls once past the deadline', async () => {
    const jobId = await uploadedJob();
    while (w.sim.job(jobId)?.state !== 'completed') await new Promise((r) => setTimeout(r, 5));
    const waitingSince = new Date(Date.now() - 10_000).toISOString();
    const result = await run({ tenant: 't1', jobId, timeoutMs: 5_000, waitingSince }).result;
    expect(result).toMatchObject({ state: 'completed', polls: 1 });
    expect(statusPolls(jobId)).toBe(1);
  });

  it('the limit counts from waitingSince: an unfinished job past it times out after exactly one poll', async () => {
    const jobId = await newJob();
    const waitingSince = new Date(Date.now() - 10_000).toISOString();
    const f = await failureOf(run({ tenant: 't1', jobId, timeoutMs: 5_000, waitingSince }).result);
    expect(f.type).toBe('JobTimedOut');
    expect(f.message).toContain(`of ${waitingSince}`);
    expect(statusPolls(jobId)).toBe(1);
  });

  it('resumes from the heartbeat details of the previous attempt', async () => {
    const jobId = await uploadedJob();
    const waitingSince = new Date().toISOString();
    const a = run({ tenant: 't1', jobId, timeoutMs: 60_000 }, deps(), {
      attempt: 2,
      heartbeatDetails: { pollIndex: 7, waitingSince, lastState: 'processing' },
    });
    const result = await a.result;
    expect(a.heartbeats[0]).toEqual({ pollIndex: 7, waitingSince, lastState: 'processing' });
    expect(a.heartbeats.at(-1)).toMatchObject({ pollIndex: 7 + result.polls, waitingSince });
  });

  it('starts at startPollIndex and waitingSince from the input (after a budget wait)', async () => {
    const jobId = await uploadedJob();
    const waitingSince = new Date().toISOString();
    const a = run({ tenant: 't1', jobId, timeoutMs: 60_000, startPollIndex: 4, waitingSince });
    await a.result;
    expect(a.heartbeats[0]).toEqual({ pollIndex: 4, waitingSince, lastState: 'unknown' });
  });

  it('ignores heartbeat details of another shape', async () => {
    const jobId = await uploadedJob();
    const a = run({ tenant: 't1', jobId, timeoutMs: 60_000, startPollIndex: 1 }, deps(), {
      heartbeatDetails: { bytesSent: 10 },
    });
    await a.result;
    expect(a.heartbeats[0]?.pollIndex).toBe(1);
  });

  it('cancellation while sleeping ends the activity as cancelled, without further polls', async () => {
    const jobId = await newJob();
    const a = run({ tenant: 't1', jobId, timeoutMs: 60_000 }, deps({ poll: { scheduleMs: [60_000], jitterRatio: 0 } }));
    while (a.heartbeats.length < 3) await new Promise((r) => setTimeout(r, 5));
    a.env.cancel('CANCELLED');
    await expect(a.result).rejects.toBeInstanceOf(CancelledFailure);
    expect(statusPolls(jobId)).toBe(0);
  });

  it('cancellation during a poll aborts the request and ends the activity as cancelled', async () => {
    const jobId = await newJob();
    w.sim.delayNext('jobStatus', 30_000);
    const a = run({ tenant: 't1', jobId, timeoutMs: 60_000 }, deps({ poll: { scheduleMs: [1], jitterRatio: 0 } }));
    while (statusPolls(jobId) < 1) await new Promise((r) => setTimeout(r, 5));
    a.env.cancel('CANCELLED');
    await expect(a.result).rejects.toBeInstanceOf(CancelledFailure);
  });

  it('a spent jobStatus budget fails BudgetExhausted with resetsAt after the polls it allowed', async () => {
    budget = budgetWith({ jobStatus: 2 });
    const jobId = await newJob();
    const f = await failureOf(run({ tenant: 't1', jobId, timeoutMs: 60_000 }).result);
    expect(f.type).toBe('BudgetExhausted');
    expect(f.details?.[0]).toEqual({ endpoint: 'jobStatus', resetsAt: expect.any(String) });
    expect(statusPolls(jobId)).toBe(2);
  });

  it("the service's own daily 429 fails DailyLimitReached and tells the ledger", async () => {
    const jobId = await newJob();
    w.sim.failNext('jobStatus', 429);
    const f = await failureOf(run({ tenant: 't1', jobId, timeoutMs: 60_000 }).result);
    expect(f.type).toBe('DailyLimitReached');
    expect((await budget.usage()).jobStatus.exhaustedUntil).toEqual(expect.any(String));
  });

  it('a transient 429 (429-100) fails retryably as RateLimited', async () => {
    const jobId = await newJob();
    w.sim.failNext('jobStatus', 429, {
      body: { errorCode: '429-100', errorMessage: 'Concurrent-query limit', diagnosticCode: 'd' },
    });
    const f = await failureOf(run({ tenant: 't1', jobId, timeoutMs: 60_000 }).result);
    expect(f.type).toBe('RateLimited');
    expect(f.nonRetryable).toBe(false);
  });
});
