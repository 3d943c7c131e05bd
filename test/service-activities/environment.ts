/**
 * What the service-centric activity tests run against: the service simulator
 * on loopback, the real service client, the in-memory budget gate, and the
 * activities run under MockActivityEnvironment (no Temporal server here).
 */
import type { Info } from '@temporalio/activity';
import { ApplicationFailure } from '@temporalio/common';
import { MockActivityEnvironment } from '@temporalio/testing';
import { DefaultLogger } from '@temporalio/worker';
import { InMemoryBudgetGate, SPEC_BUDGET_SETTINGS } from '../../activities/budget/in-memory-gate.js';
import { ServiceClient } from '../../activities/service/client.js';
import { createTokenSource } from '../../activities/service/token-source.js';
import { Secret } from '../../temporal.config.js';
import type { BudgetedEndpoint } from '../../workflows/policy/endpoints.js';
import { DEMO_TOKENS, type Simulator, type SimulatorOptions, startSimulator } from '../simulator/server.js';

export interface ServiceWorld {
  sim: Simulator;
  service: ServiceClient;
  close(): Promise<void>;
}

export async function startServiceWorld(options: SimulatorOptions = {}): Promise<ServiceWorld> {
  const sim = await startSimulator(options);
  const service = new ServiceClient({
    baseUrl: sim.baseUrl,
    tokens: createTokenSource({ kind: 'env', token: new Secret(DEMO_TOKENS.importer) }),
  });
  return {
    sim,
    service,
    async close() {
      await service.close();
      await sim.close();
    },
  };
}

/** A budget gate with the spec's limits, except the ones given. */
export function budgetWith(limits: Partial<Record<BudgetedEndpoint, number>> = {}): InMemoryBudgetGate {
  return new InMemoryBudgetGate({ ...SPEC_BUDGET_SETTINGS, limits: { ...SPEC_BUDGET_SETTINGS.limits, ...limits } });
}

export interface ActivityRun<R, H> {
  env: MockActivityEnvironment;
  heartbeats: H[];
  result: Promise<R>;
}

/** Runs one attempt of an activity, recording its heartbeats. */
export function runActivity<A, R, H = unknown>(
  fn: (input: A) => Promise<R>,
  input: A,
  info: Partial<Info> = {},
): ActivityRun<R, H> {
  // Failed attempts are what many tests expect: the SDK's WARN line for each would only be noise.
  const env = new MockActivityEnvironment({ activityId: fn.name, ...info }, { logger: new DefaultLogger('ERROR') });
  const heartbeats: H[] = [];
  env.on('heartbeat', (d: H) => heartbeats.push(d));
  const result = env.run(fn, input) as Promise<R>;
  return { env, heartbeats, result };
}

/** The ApplicationFailure `p` rejects with; fails the test on anything else. */
export async function failureOf(p: Promise<unknown>): Promise<ApplicationFailure> {
  try {
    await p;
  } catch (e) {
    if (e instanceof ApplicationFailure) return e;
    throw new Error(`expected an ApplicationFailure, got ${String(e)}`);
  }
  throw new Error('expected the activity to fail, but it succeeded');
}
