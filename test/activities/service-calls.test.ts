/**
 * A budgeted call's reservation against the simulator, with the worker's own
 * client-credentials exchange: a call that never reached the service (its
 * token could not be had) gives its grant back; a call that reached it keeps
 * its grant, whatever the answer.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { ServiceClient } from '../../activities/service/client.js';
import { ClientCredentialsTokenSource } from '../../activities/service/client-credentials.js';
import { ServiceCalls } from '../../activities/service-calls.js';
import { Secret } from '../../temporal.config.js';
import { DEMO_CLIENT, type Simulator, startSimulator } from '../simulator/server.js';
import { failureOf, runActivity } from '../support/activities.js';
import type { InMemoryBudgetGate } from '../support/in-memory-budget-gate.js';
import { budgetWith } from './environment.js';

let sim: Simulator;
let service: ServiceClient;
let budget: InMemoryBudgetGate;

async function start(clientSecret: { value: Secret } | { file: string } = { value: new Secret(DEMO_CLIENT.secret) }) {
  sim = await startSimulator();
  const tokens = new ClientCredentialsTokenSource(
    { tokenUrl: `${sim.baseUrl}/auth/v1/token`, clientId: DEMO_CLIENT.id, clientSecret },
    { log: { info: () => undefined } },
  );
  service = new ServiceClient({ baseUrl: sim.baseUrl, tokens });
  budget = budgetWith();
}

afterEach(async () => {
  await service?.close();
  await sim?.close();
});

/** One activity attempt that reads the sources through ServiceCalls, as the activities do. */
function readSources() {
  return runActivity(async function readSources() {
    const calls = ServiceCalls.forCurrentActivity({ budget }, 't1');
    await calls.run('listSources', () => service.listSources('Account'));
    return calls.counts;
  }, undefined).result;
}

const sent = (endpoint: string) => sim.requests().filter((r) => r.endpoint === endpoint).length;
const used = async () => (await budget.usage()).listSources.used;

describe('a budgeted call whose token exchange failed', () => {
  it.each([
    ['refused credentials (400)', 400, 'BadRequest'],
    ['a failing exchange (500)', 500, 'ServerError'],
  ])('%s: nothing was sent, so the grant is given back', async (_, status, type) => {
    await start();
    sim.failNext('tokenExchange', status);
    const f = await failureOf(readSources());
    expect(f.type).toBe(type);
    expect(sent('listSources')).toBe(0);
    expect(budget.requests).toHaveLength(1);
    expect(budget.released).toEqual([{ endpoint: 'listSources', requestId: budget.requests[0]?.requestId }]);
    expect(await used()).toBe(0);
  });

  it('an exchange answer it cannot use: nothing was sent, so the grant is given back', async () => {
    await start();
    sim.failNext('tokenExchange', 200, { body: { tokenType: 'bearer' } });
    expect((await failureOf(readSources())).type).toBe('UnusableResponse');
    expect(budget.released).toHaveLength(1);
    expect(await used()).toBe(0);
  });

  it('a client secret file that cannot be read: nothing was sent, so the grant is given back', async () => {
    await start({ file: '/nonexistent/client-secret' });
    await expect(readSources()).rejects.toThrow(/client secret file .* cannot be read/);
    expect(budget.released).toHaveLength(1);
    expect(await used()).toBe(0);
  });
});

describe('a budgeted call that reached the service', () => {
  it('keeps its grant when the service failed it (a real call counts)', async () => {
    await start();
    sim.failNext('listSources', 500);
    expect((await failureOf(readSources())).type).toBe('ServerError');
    expect(sent('listSources')).toBe(1);
    expect(budget.released).toEqual([]);
    expect(await used()).toBe(1);
  });

  it('keeps its grant when it succeeded, and the exchange before it spent none', async () => {
    await start();
    expect(await readSources()).toEqual({ listSources: 1 });
    expect(budget.released).toEqual([]);
    expect(await used()).toBe(1);
  });
});

describe('calls an activity says it makes next', () => {
  it('are named with the first reservation, and no more once made', async () => {
    await start();
    await runActivity(async function readThenList() {
      const calls = ServiceCalls.forCurrentActivity({ budget }, 't1');
      calls.expect({ listJobs: 1 });
      await calls.run('listSources', () => service.listSources('Account'));
      await calls.run('listJobs', () => service.listJobs({ perPage: 1 }));
    }, undefined).result;
    expect(budget.requests.map((r) => [r.endpoint, r.alongWith])).toEqual([
      ['listSources', { listJobs: 1 }],
      ['listJobs', {}],
    ]);
  });
});
