/**
 * The built-in client-credentials token source against the simulator's
 * exchange: one exchange shared by concurrent calls, a refresh before the
 * 8-hour token expires, one refresh after a 401, and a secret that never
 * shows in what fails.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { inspect } from 'node:util';
import { afterEach, describe, expect, it } from 'vitest';
import { ServiceClient } from '../../../activities/service/client.js';
import { ClientCredentialsTokenSource } from '../../../activities/service/client-credentials.js';
import { BadRequest, Unauthorized, UnusableResponse } from '../../../activities/service/errors.js';
import { Secret } from '../../../temporal.config.js';
import { DEMO_CLIENT, type Simulator, type SimulatorOptions, startSimulator } from '../../simulator/server.js';
import { runActivity } from '../../support/activities.js';
import { rejectionOf } from './helpers.js';

const HOUR_MS = 3_600_000;

let sim: Simulator;
let client: ServiceClient;
const clock = { now: Date.parse('2026-11-22T01:00:00Z') };

const logged: { message: string; meta?: Record<string, unknown> }[] = [];
const log = { info: (message: string, meta?: Record<string, unknown>) => logged.push({ message, meta }) };

async function start(
  secret: { value: Secret } | { file: string } = { value: new Secret(DEMO_CLIENT.secret) },
  simOptions: SimulatorOptions = {},
) {
  logged.length = 0;
  sim = await startSimulator({ now: () => clock.now, ...simOptions });
  const tokens = new ClientCredentialsTokenSource(
    { tokenUrl: `${sim.baseUrl}/auth/v1/token`, clientId: DEMO_CLIENT.id, clientSecret: secret },
    { now: () => clock.now, log },
  );
  client = new ServiceClient({ baseUrl: sim.baseUrl, tokens });
  return tokens;
}

afterEach(async () => {
  await client?.close();
  await sim?.close();
});

const exchanges = () => sim.requests().filter((r) => r.endpoint === 'tokenExchange');
const statusesOf = (endpoint: string) =>
  sim
    .requests()
    .filter((r) => r.endpoint === endpoint)
    .map((r) => r.status);

describe('the client-credentials token source', () => {
  it('concurrent calls share one exchange, and the token is used until near its expiry', async () => {
    await start();
    const answers = await Promise.all(Array.from({ length: 8 }, () => client.listSources('Account')));
    expect(answers.every((a) => a.includes('CSV'))).toBe(true);
    expect(exchanges()).toHaveLength(1);
    clock.now += 7 * HOUR_MS;
    await client.listSources('Person');
    expect(exchanges()).toHaveLength(1);
  });

  it('exchanges again before the 8-hour token expires, so no call meets an expired token', async () => {
    await start();
    await client.listSources('Account');
    // 4 minutes before expiry: inside the refresh margin, still valid for the service.
    clock.now += 8 * HOUR_MS - 4 * 60_000;
    await client.listSources('Account');
    expect(exchanges()).toHaveLength(2);
    expect(sim.issuedTokens()).toHaveLength(2);
    expect(statusesOf('listSources')).toEqual([200, 200]);
  });

  it('a token expired early meets a 401 once: a new exchange, and the call is sent again with the new token', async () => {
    await start();
    await client.listSources('Account');
    sim.expireTokenNext('listJobs');
    expect(await client.listJobs()).toMatchObject({ data: [] });
    expect(exchanges()).toHaveLength(2);
    expect(statusesOf('listJobs')).toEqual([401, 200]);
  });

  it('a 401 to the token exchanged after a 401 is final: Unauthorized, no third exchange', async () => {
    await start();
    await client.listSources('Account');
    sim.expireTokenNext('listJobs', { count: 2 });
    const e = await rejectionOf(client.listJobs());
    expect(e).toBeInstanceOf(Unauthorized);
    expect((e as Unauthorized).tokenRotated).toBe(false);
    expect(exchanges()).toHaveLength(2);
    expect(statusesOf('listJobs')).toEqual([401, 401]);
  });

  it('a 401 a minute after a refresh-after-401 exchanges again (a later revocation is not final)', async () => {
    await start();
    await client.listSources('Account');
    sim.expireTokenNext('listJobs');
    await client.listJobs();
    clock.now += 60_000;
    sim.expireTokenNext('listJobs');
    expect(await client.listJobs()).toMatchObject({ data: [] });
    expect(exchanges()).toHaveLength(3);
  });

  it('an answer without expiresIn: the token is kept for the published 8 hours, and the assumption is logged', async () => {
    await start(undefined, { omitExpiresIn: true });
    expect(await client.listSources('Account')).toContain('CSV');
    clock.now += 7 * HOUR_MS;
    await client.listSources('Person');
    expect(exchanges()).toHaveLength(1);
    // Inside the refresh margin of an 8-hour token: exchanged again before the service would refuse it.
    clock.now += HOUR_MS - 4 * 60_000;
    await client.listSources('Account');
    expect(exchanges()).toHaveLength(2);
    expect(statusesOf('listSources')).toEqual([200, 200, 200]);
    expect(logged).toEqual([
      { message: expect.stringContaining('without expiresIn'), meta: { assumedExpiresInSeconds: 28_800 } },
      { message: expect.stringContaining('without expiresIn'), meta: { assumedExpiresInSeconds: 28_800 } },
    ]);
  });

  it('by default, tells the assumed lifetime on the log of the activity that exchanged', async () => {
    sim = await startSimulator({ omitExpiresIn: true });
    const tokens = new ClientCredentialsTokenSource({
      tokenUrl: `${sim.baseUrl}/auth/v1/token`,
      clientId: DEMO_CLIENT.id,
      clientSecret: { value: new Secret(DEMO_CLIENT.secret) },
    });
    client = new ServiceClient({ baseUrl: sim.baseUrl, tokens });
    const run = runActivity(async function readSources() {
      return client.listSources('Account');
    }, undefined);
    expect(await run.result).toContain('CSV');
    expect(run.logs.map((l) => [l.level, l.message, l.meta?.assumedExpiresInSeconds])).toEqual([
      ['INFO', expect.stringContaining('without expiresIn'), 28_800],
    ]);
  });

  it.each([
    ['no accessToken', { tokenType: 'bearer', expiresIn: 28_800 }],
    ['an accessToken that cannot be a header', { accessToken: 'two words', expiresIn: 28_800 }],
    ['expiresIn as text', { accessToken: 'tok', expiresIn: '28800' }],
    ['expiresIn null', { accessToken: 'tok', expiresIn: null }],
    ['expiresIn of zero', { accessToken: 'tok', expiresIn: 0 }],
  ])('an answer with %s is an UnusableResponse of the exchange, and the call is not sent', async (_, body) => {
    await start();
    sim.failNext('tokenExchange', 200, { body });
    const e = await rejectionOf(client.listSources('Account'));
    expect(e).toBeInstanceOf(UnusableResponse);
    expect((e as UnusableResponse).endpoint).toBe('tokenExchange');
    expect((e as Error).message).not.toContain('tok"');
    expect(statusesOf('listSources')).toEqual([]);
    expect(logged).toEqual([]);
  });

  it('refused credentials are a BadRequest naming the exchange, without the secret even when the service echoes it', async () => {
    await start({ value: new Secret('wrong/secret+value=') });
    const echo = '{"message":"invalid clientSecret wrong\\/secret\\u002bvalue="}';
    sim.failNext('tokenExchange', 400, { body: Buffer.from(echo), contentType: 'application/json' });
    const e = await rejectionOf(client.listSources('Account'));
    expect(e).toBeInstanceOf(BadRequest);
    expect((e as Error).message).toContain('POST /auth/v1/token: the service rejected the request; HTTP 400');
    expect((e as Error).message).toContain('the client credentials were refused');
    const rendered = `${(e as Error).message} ${JSON.stringify(e)} ${inspect(e, { depth: 5, showHidden: true })}`;
    expect(rendered).not.toContain('wrong/secret+value=');
    expect(rendered).not.toContain('wrong\\/secret');
    // The simulator's own 400 for a wrong secret, without an injected echo.
    const again = await rejectionOf(client.listSources('Account'));
    expect(again).toBeInstanceOf(BadRequest);
    expect(statusesOf('listSources')).toEqual([]);
  });

  it('reads the secret from a file at each exchange, so it can be rotated', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'client-secret-'));
    try {
      const file = join(dir, 'secret');
      await writeFile(file, `${DEMO_CLIENT.secret}\n`);
      await start({ file });
      expect(await client.listSources('Account')).toContain('CSV');
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
