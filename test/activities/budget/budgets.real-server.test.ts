/**
 * The daily budgets end to end: the real budget ledger on a real Temporal dev
 * server (its Updates, signals and timers), reached by the production gate,
 * with the real service client calling the simulator (or a closed port) over
 * real sockets. Each case is a way the budgets could be overspent or stuck.
 */
import { randomUUID } from 'node:crypto';
import { createServer } from 'node:net';
import { Readable } from 'node:stream';
import { ApplicationFailure } from '@temporalio/common';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { Worker } from '@temporalio/worker';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TemporalBudgetGate } from '../../../activities/budget/temporal-gate.js';
import { makeCountWindowSpend } from '../../../activities/budget/window-spend.js';
import { makeCreateImportJob } from '../../../activities/create-job/create-import-job.js';
import { ServiceClient } from '../../../activities/service/client.js';
import { createTokenSource } from '../../../activities/service/token-source.js';
import { ServiceCalls } from '../../../activities/service-calls.js';
import { Secret } from '../../../temporal.config.js';
import type { CreateImportJobInput } from '../../../workflows/contracts/activities.js';
import { type BudgetSettings, ledgerWorkflowId } from '../../../workflows/contracts/budget.js';
import { clearExhaustedSignal, exhaustedSignal, usageQuery } from '../../../workflows/contracts/messages.js';
import { DEMO_TOKENS, type Simulator, startSimulator } from '../../simulator/server.js';
import { failureOf, runActivity } from '../../support/activities.js';
import { SPEC_BUDGET_SETTINGS } from '../../support/in-memory-budget-gate.js';
import { InMemoryJobRecordGate } from '../../support/in-memory-job-record-gate.js';
import { createEnvironment } from '../../support/temporal-server.js';
import { bundleWorkflows, WORKFLOW_SINKS } from '../../support/workflow-bundle.js';

const MINUTE_MS = 60_000;
const DAY_MINUTES = 24 * 60;

/** Settings whose daily reset is `offsetMinutes` from now (negative: it just happened). */
function resetIn(offsetMinutes: number): BudgetSettings {
  const nowMinute = Math.floor((Date.now() % 86_400_000) / MINUTE_MS);
  const resetMinuteUtc = (((nowMinute + offsetMinutes) % DAY_MINUTES) + DAY_MINUTES) % DAY_MINUTES;
  return { ...SPEC_BUDGET_SETTINGS, resetMinuteUtc, stopGrantingBeforeResetMs: undefined };
}

/** A local port nothing listens on: every connection to it is refused. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

function clientFor(baseUrl: string): ServiceClient {
  return new ServiceClient({
    baseUrl,
    tokens: createTokenSource({ kind: 'env', token: new Secret(DEMO_TOKENS.importer) }),
  });
}

function budgetWaitOf(f: ApplicationFailure): { resetsAt: string } {
  const details = f.details?.[0] as { resetsAt?: string } | undefined;
  if (!details?.resetsAt) throw new Error(`expected budget-wait details, got ${JSON.stringify(f.details)}`);
  return { resetsAt: details.resetsAt };
}

async function rejectionOf(p: Promise<unknown>): Promise<ApplicationFailure> {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(ApplicationFailure);
  return err as ApplicationFailure;
}

describe('daily budgets on a real Temporal server', () => {
  let env: TestWorkflowEnvironment;
  let worker: Worker;
  let running: Promise<void>;
  let sim: Simulator;
  let service: ServiceClient;
  /** The service whose record a new ledger reads: none of the jobs the tests create are in it. */
  let record: Simulator;
  let recordService: ServiceClient;
  let code: string;
  const taskQueue = `budgets-${randomUUID()}`;

  beforeAll(async () => {
    env = await createEnvironment();
    code = await bundleWorkflows();
    sim = await startSimulator();
    service = clientFor(sim.baseUrl);
    record = await startSimulator();
    recordService = clientFor(record.baseUrl);
    worker = await Worker.create({
      connection: env.nativeConnection,
      taskQueue,
      workflowBundle: { code },
      sinks: WORKFLOW_SINKS,
      activities: { countWindowSpend: makeCountWindowSpend({ service: recordService }) },
    });
    running = worker.run();
  }, 120_000);

  afterAll(async () => {
    worker?.shutdown();
    await running;
    await service?.close();
    await recordService?.close();
    await sim?.close();
    await record?.close();
    await env?.teardown();
  });

  function gate(settings: BudgetSettings = resetIn(12 * 60)) {
    return new TemporalBudgetGate({ client: env.client, taskQueue, tenant: `t-${randomUUID()}`, settings });
  }

  const listJobs = () => service.listJobs({ perPage: 1 });

  it('twenty refused connections spend nothing: every grant is given back', async () => {
    const budget = gate();
    const nowhere = clientFor(`http://127.0.0.1:${await closedPort()}`);
    try {
      const calls = new ServiceCalls({ budget }, 'refused');
      for (let i = 0; i < 20; i++) {
        const f = await rejectionOf(
          calls.run('createJob', () => nowhere.createJob({ dataImportName: 'x', entityType: 'Account' })),
        );
        expect(f.type).toBe('Network');
      }
      expect(calls.counts).toEqual({});
      expect((await budget.usage()).createJob).toMatchObject({ used: 0, remaining: 1200 });
    } finally {
      await nowhere.close();
    }
  });

  it('a call cancelled while its reservation was on the way is not sent and gives the grant back', async () => {
    const budget = gate();
    const cancelled = new AbortController();
    const calls = new ServiceCalls({ budget }, 'cancelled', cancelled.signal);
    const requestsBefore = sim.requests().length;
    const reservation = calls.run('listSources', () => service.listSources('Account', { signal: cancelled.signal }));
    cancelled.abort(new Error('activity cancelled'));
    await expect(reservation).rejects.toThrow('activity cancelled');
    expect(sim.requests().length).toBe(requestsBefore);
    expect((await budget.usage()).listSources.used).toBe(0);
  });

  it('grants nothing in the last minutes before the reset: such a call could land in the next window', async () => {
    const budget = gate(resetIn(2));
    const answer = await budget.reserve('submitData', 'just-before-reset');
    expect(answer.granted).toBe(false);
    const resetsAt = Date.parse((answer as { resetsAt: string }).resetsAt);
    expect(resetsAt - Date.now()).toBeLessThanOrEqual(2 * MINUTE_MS);
  });

  it('a daily-limit 429 a minute after the configured reset blocks the endpoint for 15 minutes, not a day', async () => {
    const budget = gate(resetIn(-1));
    sim.failNext('createJob', 429); // the simulator's daily-limit body, errorCode 429-101
    const before = Date.now();
    const f = await rejectionOf(
      new ServiceCalls({ budget }, 'after-reset').run('createJob', () =>
        service.createJob({ dataImportName: 'x', entityType: 'Account' }),
      ),
    );
    expect(f.type).toBe('DailyLimitReached');
    const { resetsAt } = budgetWaitOf(f);
    const blockedMs = Date.parse(resetsAt) - before;
    expect(blockedMs).toBeGreaterThanOrEqual(15 * MINUTE_MS);
    expect(blockedMs).toBeLessThan(16 * MINUTE_MS);
    expect((await budget.usage()).createJob.exhaustedUntil).toBe(resetsAt);
  });

  it("a daily-limit 429 with Retry-After blocks for exactly the service's wait", async () => {
    const budget = gate();
    sim.failNext('jobStatus', 429, { headers: { 'retry-after': '5400' } });
    const before = Date.now();
    const f = await rejectionOf(new ServiceCalls({ budget }, 'told').run('jobStatus', () => service.getJob('1')));
    expect(f.type).toBe('DailyLimitReached');
    const blockedMs = Date.parse(budgetWaitOf(f).resetsAt) - before;
    expect(blockedMs).toBeGreaterThanOrEqual(5_400_000);
    expect(blockedMs).toBeLessThan(5_400_000 + MINUTE_MS);
  });

  it.each([
    [
      'a concurrency code with Retry-After',
      { body: { errorCode: '429-100', errorMessage: 'busy' }, headers: { 'retry-after': '120' } },
    ],
    ['a bare "100" code', { body: { errorCode: '100', errorMessage: 'Too many requests' } }],
    ["a gateway's plain text", { body: 'Too Many Requests', contentType: 'text/plain' }],
  ])('a 429 with %s is retried and never blocks the tenant', async (_, fault) => {
    const budget = gate();
    sim.failNext('listJobs', 429, fault);
    const f = await rejectionOf(new ServiceCalls({ budget }, 'short-429').run('listJobs', listJobs));
    expect(f.type).toBe('RateLimited');
    expect(f.nonRetryable).toBe(false);
    const retryAfter = (fault as { headers?: Record<string, string> }).headers?.['retry-after'];
    if (retryAfter) expect(f.nextRetryDelay).toBe(Number(retryAfter) * 1000);
    expect((await budget.usage()).listJobs.exhaustedUntil).toBeUndefined();
    expect((await budget.reserve('listJobs', `after-${randomUUID()}`)).granted).toBe(true);
  });

  it('a workflow id with spaces, 300 characters long, reserves like any other', async () => {
    const budget = gate();
    const workflowId = `nightly import of ${'accounts '.repeat(40)}`.slice(0, 300);
    const activity = async function listWithBudget() {
      const calls = ServiceCalls.forCurrentActivity({ budget }, undefined);
      await calls.run('listSources', () => service.listSources('Account'));
      return calls.counts;
    };
    const counts = await runActivity(activity, undefined, {
      workflowExecution: { workflowId, runId: randomUUID() },
    }).result;
    expect(counts).toEqual({ listSources: 1 });
    expect((await budget.usage()).listSources.used).toBe(1);
  });

  it('a reservation the ledger rejects fails at once and clearly, instead of being retried forever', async () => {
    const calls = new ServiceCalls({ budget: gate() }, 'an id with spaces');
    const f = await rejectionOf(calls.run('listJobs', listJobs));
    expect(f.type).toBe('UpdateRefused');
    expect(f.nonRetryable).toBe(true);
    expect(f.message).toContain('requestId');
  });

  it("an input naming another tenant is refused before any call; without one, the worker's tenant pays", async () => {
    const budget = gate();
    const createImportJob = makeCreateImportJob({ service, budget, jobRecord: new InMemoryJobRecordGate() });
    const input: CreateImportJobInput = {
      dataImportName: 'tenant check',
      entityType: 'Account',
      objectVersion: { bucket: 'b', key: `k${randomUUID().slice(0, 8)}.csv`, etag: '"e"' },
    };
    const requestsBefore = sim.requests().length;
    const refused = await failureOf(runActivity(createImportJob, { ...input, tenant: 'someone-else' }).result);
    expect(refused.type).toBe('TenantMismatch');
    expect(refused.nonRetryable).toBe(true);
    expect(refused.message).toContain('"someone-else"');
    expect(sim.requests().length).toBe(requestsBefore);

    await runActivity(createImportJob, input).result;
    expect((await budget.usage()).createJob.used).toBe(1);
  });

  it('a lowered limit takes effect at once in a running ledger started with the old one', async () => {
    const before = gate();
    expect(await before.reserve('createJob', 'old-settings')).toEqual({ granted: true, remaining: 1199 });
    const lowered = new TemporalBudgetGate({
      client: env.client,
      taskQueue,
      tenant: before.tenant,
      settings: { ...resetIn(12 * 60), limits: { ...SPEC_BUDGET_SETTINGS.limits, createJob: 3 } },
    });
    expect(await lowered.reserve('createJob', 'new-1')).toEqual({ granted: true, remaining: 1 });
    expect(await lowered.reserve('createJob', 'new-2')).toEqual({ granted: true, remaining: 0 });
    expect((await lowered.reserve('createJob', 'new-3')).granted).toBe(false);
    // A worker still on the old settings cannot raise it again within the window.
    expect((await before.reserve('createJob', 'old-again')).granted).toBe(false);
  });

  it("a ledger that starts without counts takes the service's own record of the window", async () => {
    // Another service with a spent window: three jobs created today, one of them already uploaded.
    const spentSim = await startSimulator();
    const spentService = clientFor(spentSim.baseUrl);
    const seededQueue = `seeded-${randomUUID()}`;
    const seededWorker = await Worker.create({
      connection: env.nativeConnection,
      taskQueue: seededQueue,
      workflowBundle: { code },
      sinks: WORKFLOW_SINKS,
      activities: { countWindowSpend: makeCountWindowSpend({ service: spentService }) },
    });
    try {
      const jobs = [];
      for (let i = 0; i < 3; i++)
        jobs.push(await spentService.createJob({ dataImportName: `j${i}`, entityType: 'Account' }));
      const body = Buffer.from('Account Name,Account Domain\nA,a.example\n');
      await spentService.submitData(jobs[0]?.id ?? '0', Readable.from([body]), {
        contentLength: body.length,
        listAction: 'noop',
      });
      const usage = await seededWorker.runUntil(async () => {
        // As after an operator terminated the ledger: nothing carried over.
        const fresh = new TemporalBudgetGate({
          client: env.client,
          taskQueue: seededQueue,
          tenant: `t-${randomUUID()}`,
          settings: resetIn(12 * 60),
        });
        expect(await fresh.reserve('createJob', 'first-after-restart')).toEqual({ granted: true, remaining: 1196 });
        return fresh.usage();
      });
      expect(usage.createJob.used).toBe(4);
      expect(usage.submitData.used).toBe(1);
      expect(usage.listJobs.used).toBeGreaterThanOrEqual(1);
    } finally {
      await spentService.close();
      await spentSim.close();
    }
  });

  describe('the ledger as operators see it', () => {
    async function ledgerOf(budget: TemporalBudgetGate) {
      await budget.reserve('jobStatus', `start-${randomUUID()}`);
      return env.client.workflow.getHandle(ledgerWorkflowId(budget.tenant));
    }

    it('clearExhausted lifts a block set by mistake', async () => {
      const budget = gate();
      const ledger = await ledgerOf(budget);
      const until = new Date(Date.now() + 6 * 3_600_000).toISOString();
      await ledger.signal(exhaustedSignal, { endpoint: 'submitData', until });
      expect((await budget.reserve('submitData', 'blocked')).granted).toBe(false);
      await ledger.signal(clearExhaustedSignal, { endpoint: 'submitData' });
      expect((await budget.reserve('submitData', 'cleared')).granted).toBe(true);
    });

    it('usage stops showing a block once it has ended', async () => {
      const budget = gate();
      const ledger = await ledgerOf(budget);
      const untilMs = Date.now() + 2_000;
      await ledger.signal(exhaustedSignal, { endpoint: 'listJobs', until: new Date(untilMs).toISOString() });
      expect((await ledger.query(usageQuery)).listJobs.exhaustedUntil).toBeDefined();
      while (Date.now() <= untilMs + 500) await new Promise((resolve) => setTimeout(resolve, 250));
      for (;;) {
        // The ledger's timer at the block's end is a workflow task away: wait for it, never for a wall clock.
        const usage = await ledger.query(usageQuery);
        if (usage.listJobs.exhaustedUntil === undefined) break;
        await new Promise((resolve) => setTimeout(resolve, 250));
      }
    });
  });
});
