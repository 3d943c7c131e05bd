/**
 * A burst of reservations to one ledger on a real dev server that admits only
 * two Updates in flight per workflow (the production default is higher, the
 * behaviour the same): every reservation is granted once, none is lost.
 * This file starts its own dev server, since the bound is a server setting.
 */
import { randomUUID } from 'node:crypto';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { Worker } from '@temporalio/worker';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { SPEC_BUDGET_SETTINGS } from '../../../activities/budget/in-memory-gate.js';
import { TemporalBudgetGate } from '../../../activities/budget/temporal-gate.js';
import { createDevServerWith } from '../../support/temporal-server.js';
import { bundleWorkflows } from '../../support/workflow-bundle.js';

let env: TestWorkflowEnvironment;

beforeAll(async () => {
  env = await createDevServerWith({ 'history.maxInFlightUpdates': 2 });
}, 120_000);

afterAll(async () => {
  await env?.teardown();
});

it('200 reservations at once to one ledger are each granted once, none lost to ResourceExhausted', {
  timeout: 300_000,
}, async () => {
  const code = await bundleWorkflows();
  const taskQueue = `burst-${randomUUID()}`;
  const worker = await Worker.create({
    connection: env.nativeConnection,
    taskQueue,
    workflowBundle: { code },
    activities: { countWindowSpend: async () => ({ createJob: 0, submitData: 0, listJobs: 0 }) },
  });
  const gate = new TemporalBudgetGate({
    client: env.client,
    taskQueue,
    tenant: 'burst',
    settings: { ...SPEC_BUDGET_SETTINGS, stopGrantingBeforeResetMs: 0 },
    // This test is about grants, not time: on a loaded machine 200 Updates two at a time
    // can take longer than the production patience, after which an activity would be retried.
    burstPatienceMs: 240_000,
  });
  const { outcomes, usage } = await worker.runUntil(async () => {
    await gate.reserve('jobStatus', 'opens-the-ledger');
    const outcomes = await Promise.allSettled(
      Array.from({ length: 200 }, (_, i) => gate.reserve('jobStatus', `burst-${i}`)),
    );
    return { outcomes, usage: await gate.usage() };
  });
  const refused = outcomes.filter((o) => o.status === 'rejected');
  expect(refused.map((o) => String((o as PromiseRejectedResult).reason)).slice(0, 3)).toEqual([]);
  expect(outcomes.every((o) => o.status === 'fulfilled' && o.value.granted)).toBe(true);
  expect(usage.jobStatus.used).toBe(201);
});
