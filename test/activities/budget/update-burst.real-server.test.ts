/**
 * Bursts of reservations to one ledger on a real dev server that admits only
 * two Updates in flight per workflow (the production default is 10, the
 * behaviour the same): every reservation is granted once, none is lost,
 * whether one process sends the burst or several do at once.
 * This file starts its own dev server, since the bound is a server setting.
 */
import { randomUUID } from 'node:crypto';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { Worker } from '@temporalio/worker';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { TemporalBudgetGate } from '../../../activities/budget/temporal-gate.js';
import type { ReserveResult } from '../../../workflows/contracts/budget.js';
import { SPEC_BUDGET_SETTINGS } from '../../support/in-memory-budget-gate.js';
import { createDevServerWith } from '../../support/temporal-server.js';
import { bundleWorkflows } from '../../support/workflow-bundle.js';

let env: TestWorkflowEnvironment;

beforeAll(async () => {
  env = await createDevServerWith({ 'history.maxInFlightUpdates': 2 });
}, 120_000);

afterAll(async () => {
  await env?.teardown();
});

/** A worker process's gate to the tenant's ledger, which runs on the worker's task queue. */
function processGate(taskQueue: string, tenant: string): TemporalBudgetGate {
  return new TemporalBudgetGate({
    client: env.client,
    taskQueue,
    tenant,
    settings: { ...SPEC_BUDGET_SETTINGS, stopGrantingBeforeResetMs: 0 },
    // This file is about grants, not time: on a loaded machine the Updates that several processes
    // send past the bound can take longer than the production patience, after which an activity is retried.
    burstPatienceMs: 240_000,
  });
}

async function ledgerWorker(): Promise<{ worker: Worker; taskQueue: string }> {
  const taskQueue = `burst-${randomUUID()}`;
  const worker = await Worker.create({
    connection: env.nativeConnection,
    taskQueue,
    workflowBundle: { code: await bundleWorkflows() },
    activities: { countWindowSpend: async () => ({ createJob: 0, submitData: 0, listJobs: 0 }) },
  });
  return { worker, taskQueue };
}

function refusals(outcomes: PromiseSettledResult<ReserveResult>[]): string[] {
  return outcomes.filter((o) => o.status === 'rejected').map((o) => String((o as PromiseRejectedResult).reason));
}

it('200 reservations at once from one process are each granted once, the process sending one Update at a time', {
  timeout: 300_000,
}, async () => {
  const { worker, taskQueue } = await ledgerWorker();
  const gate = processGate(taskQueue, 'one-process');
  const { outcomes, usage } = await worker.runUntil(async () => {
    await gate.reserve('jobStatus', 'opens-the-ledger');
    const outcomes = await Promise.allSettled(
      Array.from({ length: 200 }, (_, i) => gate.reserve('jobStatus', `burst-${i}`)),
    );
    return { outcomes, usage: await gate.usage() };
  });
  expect(refusals(outcomes).slice(0, 3)).toEqual([]);
  expect(outcomes.every((o) => o.status === 'fulfilled' && o.value.granted)).toBe(true);
  expect(usage.jobStatus.used).toBe(201);
});

it('four processes bursting at once, past the bound of two, are each granted once, none lost to ResourceExhausted', {
  timeout: 300_000,
}, async () => {
  const { worker, taskQueue } = await ledgerWorker();
  const gates = Array.from({ length: 4 }, () => processGate(taskQueue, 'four-processes'));
  const reader = processGate(taskQueue, 'four-processes');
  const { outcomes, usage } = await worker.runUntil(async () => {
    const outcomes = await Promise.allSettled(
      gates.flatMap((gate, g) =>
        Array.from({ length: 25 }, (_, i) => gate.reserve('jobStatus', `process-${g}-${i}-${randomUUID()}`)),
      ),
    );
    return { outcomes, usage: (await reader.usage()).jobStatus.used };
  });
  expect(refusals(outcomes).slice(0, 3)).toEqual([]);
  expect(outcomes.every((o) => o.status === 'fulfilled' && o.value.granted)).toBe(true);
  expect(usage).toBe(100);
});
