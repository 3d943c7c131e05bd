/**
 * The budget ledger on the Temporal dev server, reached as the worker reaches
 * it: TemporalBudgetGate's update-with-start. The window tests configure a
 * reset at the next whole minute (the finest reset time the configuration
 * can name, `IMPORT_BUDGET_RESET_UTC=HH:MM`) and wait for it: at most a
 * minute, shared by the tests, which run concurrently.
 *
 * With RECORD_HISTORIES_DIR set (`npm run record:histories`), each test also
 * writes the ledger's runs as replay fixtures (recorded-histories.ts).
 */
import { WorkflowUpdateFailedError } from '@temporalio/client';
import { defaultPayloadConverter } from '@temporalio/common';
import { tsToMs } from '@temporalio/common/lib/time.js';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { Worker } from '@temporalio/worker';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AllowanceGate } from '../../activities/budget/allowance-gate.js';
import { TemporalBudgetGate } from '../../activities/budget/temporal-gate.js';
import { loadBudgetSettings } from '../../temporal.config.js';
import { nextResetMs } from '../../workflows/budget-window.js';
import {
  type BudgetSettings,
  type LedgerInput,
  ledgerWorkflowId,
  type ReserveRequest,
  type ReserveResult,
} from '../../workflows/contracts/budget.js';
import type { BudgetedEndpoint } from '../../workflows/contracts/endpoints.js';
import { allowanceUpdate, exhaustedSignal, reserveUpdate, usageQuery } from '../../workflows/contracts/messages.js';
import { createDevServerWith, createEnvironment } from '../support/temporal-server.js';
import { bundleWorkflows, WORKFLOW_SINKS } from '../support/workflow-bundle.js';
import { recordHistory } from './recorded-histories.js';

const DAY_MS = 86_400_000;
const MINUTE_MS = 60_000;
const limits = loadBudgetSettings({}).limits;

/** A new ledger reads what the service counted in its window: here, nothing yet. */
const nothingSpent = { countWindowSpend: async () => ({ createJob: 0, submitData: 0, listJobs: 0 }) };

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Settings whose daily reset is the next whole minute at least 10 s away (so a test can act before it). */
function resetSoon(nowMs = Date.now()): { settings: BudgetSettings; resetAtMs: number } {
  const resetAtMs = Math.ceil((nowMs + 10_000) / MINUTE_MS) * MINUTE_MS;
  const resetMinuteUtc = Math.round((resetAtMs % DAY_MS) / MINUTE_MS);
  // The ledger stops granting shortly before a reset (5 min by default): 1 s here, so the window can close in a test.
  const settings = { limits, headroomPercent: 0, resetMinuteUtc, stopGrantingBeforeResetMs: 1_000 };
  if (nextResetMs(nowMs, resetMinuteUtc) !== resetAtMs) throw new Error('resetSoon: the window policy disagrees');
  return { settings, resetAtMs };
}

describe('budget ledger on the dev server', () => {
  let env: TestWorkflowEnvironment;
  let code: string;
  let worker: Worker;
  let running: Promise<void>;
  const taskQueue = `ledger-${process.pid}`;
  // One reset instant for the window tests, fixed once the server is up.
  let soon: ReturnType<typeof resetSoon>;

  beforeAll(async () => {
    env = await createEnvironment();
    code = await bundleWorkflows();
    worker = await ledgerWorker(taskQueue);
    running = worker.run();
    soon = resetSoon();
  }, 120_000);

  afterAll(async () => {
    worker?.shutdown();
    await running;
    await env?.teardown();
  });

  const ledgerWorker = (queue: string) =>
    Worker.create({
      connection: env.nativeConnection,
      taskQueue: queue,
      workflowBundle: { code },
      sinks: WORKFLOW_SINKS,
      activities: nothingSpent,
    });
  const gateWith = (tenant: string, settings: BudgetSettings) =>
    new TemporalBudgetGate({ client: env.client, taskQueue, tenant, settings });
  const tenantFor = (name: string) => `${name}-${process.pid}`;
  const record = (name: string, scenario: string, workflowId: string, runId?: string) =>
    recordHistory(env.client, { name, scenario, server: 'dev-server', workflowId, runId });

  const currentRunId = async (workflowId: string) => (await env.client.workflow.getHandle(workflowId).describe()).runId;

  /** Waits until run `runId` has continued as new; returns the run that continued it. */
  async function nextRunAfter(workflowId: string, runId: string): Promise<string> {
    for (;;) {
      const run = await env.client.workflow.getHandle(workflowId, runId).describe();
      if (run.status.name === 'CONTINUED_AS_NEW') return currentRunId(workflowId);
      await sleep(200);
    }
  }

  it('a process spends an allowance: many calls, few Updates, every one counted first and the rest given back', async () => {
    const tenant = tenantFor('allowance');
    const ledger = gateWith(tenant, { limits, headroomPercent: 0, resetMinuteUtc: 0 });
    const gate = new AllowanceGate(ledger);
    for (let i = 0; i < 12; i++) expect(await gate.reserve('jobStatus', `read/${i}`)).toMatchObject({ granted: true });
    await gate.release('jobStatus', 'read/11');
    const handle = env.client.workflow.getHandle(ledgerWorkflowId(tenant));
    const history = await handle.fetchHistory();
    const updates = (history.events ?? []).filter((e) => e.workflowExecutionUpdateAcceptedEventAttributes);
    // Allowances of 1, 2, 4 and 8 calls: four Updates for twelve reads.
    expect(updates).toHaveLength(4);
    expect((await handle.query(usageQuery)).jobStatus).toMatchObject({ used: 15, held: 8 });
    // Malformed: refused by the validator, nothing counted.
    const refused = (await handle
      .executeUpdate(allowanceUpdate, { args: [{ requestId: 'x', calls: { jobStatus: 0 }, holdMs: 1 }] })
      .then(
        () => undefined,
        (err: unknown) => err,
      )) as (Error & { cause?: Error }) | undefined;
    expect(refused?.cause?.message).toMatch(/calls.jobStatus must be a whole number of at least 1/);
    expect((await handle.query(usageQuery)).jobStatus.used).toBe(15);
    await record('ledger-allowances', 'ledger: allowances of 1, 2, 4 and 8 calls, a release', handle.workflowId);
  });

  it('grants once per requestId, rejects unknown endpoints, and honours the exhausted signal', async () => {
    const tenant = tenantFor('grants');
    const gate = gateWith(tenant, { limits, headroomPercent: 0, resetMinuteUtc: 0 });
    const first = await gate.reserve('createJob', 'wf/1/1');
    expect(first).toEqual({ granted: true, remaining: 1199 });
    // A retried RPC: the same update id, answered by the server from the first update.
    expect(await gate.reserve('createJob', 'wf/1/1')).toEqual(first);
    // A retried activity with a new update id: the ledger remembers the requestId.
    const handle = env.client.workflow.getHandle(ledgerWorkflowId(tenant));
    const reserve = (request: ReserveRequest) => handle.executeUpdate(reserveUpdate, { args: [request] });
    expect(await reserve({ endpoint: 'createJob', requestId: 'wf/1/1' })).toEqual(first);
    await expect(
      reserve({ endpoint: 'getFieldMappings' as BudgetedEndpoint, requestId: 'wf/1/2' }),
    ).rejects.toBeInstanceOf(WorkflowUpdateFailedError);
    // The service said 429 with a Retry-After of an hour: nothing is granted on that endpoint until then.
    const until = await gate.reportDailyLimit({ endpoint: 'submitData', requestId: 'wf/1/3', retryAfterMs: 3_600_000 });
    expect(await gate.reserve('submitData', 'wf/1/4')).toEqual({ granted: false, resetsAt: until });
    const usage = await handle.query(usageQuery);
    expect(usage.createJob).toMatchObject({ used: 1, limit: 1200, remaining: 1199 });
    expect(usage.submitData).toMatchObject({ used: 0, exhaustedUntil: until });
    await record('ledger-reserve-and-exhausted', 'ledger: grants, duplicates, rejection, exhausted', handle.workflowId);
    await handle.terminate('test done');
  });

  it.concurrent('starts a fresh window at the reset by continuing as new', async ({ expect }) => {
    const tenant = tenantFor('window');
    const gate = gateWith(tenant, soon.settings);
    const workflowId = ledgerWorkflowId(tenant);
    expect(await gate.reserve('createJob', 'before-reset')).toEqual({ granted: true, remaining: 1199 });
    const until = new Date(soon.resetAtMs).toISOString();
    await env.client.workflow.getHandle(workflowId).signal(exhaustedSignal, { endpoint: 'jobStatus', until });
    const firstRunId = await currentRunId(workflowId);
    const nextRunId = await nextRunAfter(workflowId, firstRunId);

    const usage = await env.client.workflow.getHandle(workflowId).query(usageQuery);
    expect(usage.createJob).toMatchObject({ used: 0, remaining: 1200 });
    expect(Date.parse(usage.createJob.resetsAt)).toBe(soon.resetAtMs + DAY_MS);
    // The exhaustion ended at the reset: the new window grants the endpoint again.
    expect(usage.jobStatus.exhaustedUntil).toBeUndefined();
    expect(await gate.reserve('jobStatus', 'after-reset')).toEqual({ granted: true, remaining: 3599 });

    const scenario = 'ledger: a fresh window at the reset, by continuing as new';
    await record('ledger-window-reset-first-run', scenario, workflowId, firstRunId);
    await record('ledger-window-reset-next-run', scenario, workflowId, nextRunId);
    await env.client.workflow.getHandle(workflowId).terminate('test done');
  }, 150_000);

  it.concurrent('continues as new at the reset with reservations in flight: every grant answered once, counted in one window', async ({
    expect,
  }) => {
    const tenant = tenantFor('in-flight');
    const gate = gateWith(tenant, soon.settings);
    const workflowId = ledgerWorkflowId(tenant);
    await gate.reserve('createJob', 'opening');
    const firstRunId = await currentRunId(workflowId);
    // Six callers reserve back to back from 3 s before the reset to 1.5 s after it, each request once.
    // Those that reach the first run while it closes are refused by the server and retried by the client
    // on the next run; those that reach it after the reset, before it closes, count in the new window.
    await sleep(soon.resetAtMs - 3_000 - Date.now());
    const answers: ReserveResult[] = [];
    const caller = async (n: number) => {
      for (let i = 0; Date.now() < soon.resetAtMs + 1_500; i++) {
        answers.push(await gate.reserve('createJob', `caller-${n}/${i}`));
        await sleep(30);
      }
    };
    await Promise.all([0, 1, 2, 3, 4, 5].map(caller));
    await nextRunAfter(workflowId, firstRunId);

    // The first run hands on exactly the grants it answered at or after the reset by its clock (the start of
    // the workflow task that answered them), whether before or after its window timer fired.
    const events = (await env.client.workflow.getHandle(workflowId, firstRunId).fetchHistory()).events ?? [];
    let clockMs = 0;
    let answeredAfterReset = 0;
    for (const e of events) {
      if (e.workflowTaskStartedEventAttributes) clockMs = tsToMs(e.eventTime);
      if (e.workflowExecutionUpdateCompletedEventAttributes && clockMs >= soon.resetAtMs) answeredAfterReset += 1;
    }
    const continued = events.at(-1)?.workflowExecutionContinuedAsNewEventAttributes;
    const [carried] = continued?.input?.payloads?.map((p) => defaultPayloadConverter.fromPayload(p)) ?? [];
    expect((carried as LedgerInput).state?.used.createJob ?? 0).toBe(answeredAfterReset);

    const usage = await env.client.workflow.getHandle(workflowId).query(usageQuery);
    // In the last second before the reset the ledger refuses, naming the reset; nothing refused is counted.
    const refusals = answers.filter((a) => !a.granted);
    expect(refusals.every((a) => a.resetsAt === new Date(soon.resetAtMs).toISOString())).toBe(true);
    const grants = [{ granted: true, remaining: 1199 }, ...answers.filter((a) => a.granted)];
    // Grants of one window count down from 1199 without a gap or a repeat; the new window's count is `used`.
    const inNewWindow = usage.createJob.used;
    const inOldWindow = grants.length - inNewWindow;
    const countdown = (n: number) => Array.from({ length: n }, (_, i) => 1199 - i);
    const remainders = grants.map((a) => (a.granted ? a.remaining : -1)).sort((a, b) => b - a);
    expect(remainders).toEqual([...countdown(inOldWindow), ...countdown(inNewWindow)].sort((a, b) => b - a));
    expect(inOldWindow).toBeGreaterThan(1);
    expect(inNewWindow).toBeGreaterThan(0);

    const scenario = 'ledger: continue-as-new at the reset with reservations in flight';
    await record('ledger-reset-in-flight-first-run', scenario, workflowId, firstRunId);
    await env.client.workflow.getHandle(workflowId).terminate('test done');
  }, 150_000);
});

/** Events after which this dev server suggests continue-as-new (the default is 4,096). */
const SUGGEST_CONTINUE_AS_NEW_AT = 40;

describe('budget ledger on a dev server that suggests continue-as-new early', () => {
  let env: TestWorkflowEnvironment;
  let worker: Worker;
  let running: Promise<void>;
  const taskQueue = `ledger-suggested-${process.pid}`;

  beforeAll(async () => {
    env = await createDevServerWith({ 'limit.historyCount.suggestContinueAsNew': SUGGEST_CONTINUE_AS_NEW_AT });
    worker = await Worker.create({
      connection: env.nativeConnection,
      taskQueue,
      workflowBundle: { code: await bundleWorkflows() },
      sinks: WORKFLOW_SINKS,
      activities: nothingSpent,
    });
    running = worker.run();
  }, 120_000);

  afterAll(async () => {
    worker?.shutdown();
    await running;
    await env?.teardown();
  });

  it('continues as new when the server suggests it, carrying every grant of the window', async () => {
    const tenant = `suggested-${process.pid}`;
    const workflowId = ledgerWorkflowId(tenant);
    const gate = new TemporalBudgetGate({
      client: env.client,
      taskQueue,
      tenant,
      settings: { limits, headroomPercent: 0, resetMinuteUtc: 0 },
    });
    const answers: ReserveResult[] = [await gate.reserve('createJob', 'r/0')];
    const firstRunId = (await env.client.workflow.getHandle(workflowId).describe()).runId;
    const firstRun = env.client.workflow.getHandle(workflowId, firstRunId);
    // Five events a reservation: the hint comes after about eight; stop at 100 if it never does.
    for (let i = 1; i < 100 && (await firstRun.describe()).status.name === 'RUNNING'; i++) {
      answers.push(await gate.reserve('createJob', `r/${i}`));
    }
    expect((await firstRun.describe()).status.name).toBe('CONTINUED_AS_NEW');
    // Far below the ledger's own bound: the server's hint ended the run.
    expect((await firstRun.fetchHistory()).events?.length).toBeLessThan(2 * SUGGEST_CONTINUE_AS_NEW_AT);

    // The next run counts on from the grants of the first: one countdown, no gap, no repeat.
    const usage = await env.client.workflow.getHandle(workflowId).query(usageQuery);
    expect(usage.createJob.used).toBe(answers.length);
    expect(answers.map((a) => (a.granted ? a.remaining : -1))).toEqual(answers.map((_, i) => 1199 - i));
    // A retried reservation from before the hand-over is still answered from memory, not counted again.
    expect(await gate.reserve('createJob', 'r/0')).toEqual(answers[0]);
    expect((await env.client.workflow.getHandle(workflowId).query(usageQuery)).createJob.used).toBe(answers.length);

    await recordHistory(env.client, {
      name: 'ledger-continue-as-new-suggested-first-run',
      scenario: 'ledger: continue-as-new when the server suggests it',
      server: 'dev-server',
      workflowId,
      runId: firstRunId,
    });
    await env.client.workflow.getHandle(workflowId).terminate('test done');
  });
});
