import { afterEach, describe, expect, it } from 'vitest';
import { DEMO_CLIENT, DEMO_TOKENS, type Simulator, startSimulator } from './server.js';
import { call } from './test-client.js';

let sim: Simulator | undefined;
afterEach(() => sim?.close());

const BEARER = (token: string) => ({ authorization: `Bearer ${token}` });
const CREATE = { dataImportName: 'accounts', entityType: 'Account' };

describe('authentication', () => {
  it.each([
    ['no Authorization header', {}],
    ['an unknown token', BEARER('not-a-token')],
    ['an expired token', BEARER(DEMO_TOKENS.expired)],
    ['a non-bearer scheme', { authorization: `Basic ${DEMO_TOKENS.importer}` }],
  ])('answers 401 {status} to %s on import and mapping paths', async (_, headers) => {
    sim = await startSimulator();
    for (const [method, path] of [
      ['POST', '/import/v1/job'],
      ['GET', '/import/v1/job/1'],
      ['GET', '/integration/v1/custom-sources/1001/field-mappings/account'],
    ] as const) {
      const answer = await fetch(`${sim.baseUrl}${path}`, {
        method,
        headers,
        ...(method === 'POST' ? { body: JSON.stringify(CREATE) } : {}),
      });
      expect(answer.status).toBe(401);
      expect(await answer.json()).toEqual({ status: expect.any(String) });
    }
    expect(sim.jobs()).toEqual([]);
  });

  it('answers 403 {status} on import paths to a token without Import Data, and creates nothing', async () => {
    sim = await startSimulator();
    const answer = await call(sim, 'POST', '/import/v1/job', {
      body: CREATE,
      headers: BEARER(DEMO_TOKENS.noPermission),
    });
    expect(answer).toEqual({
      status: 403,
      body: { status: expect.stringContaining('Import Data') },
      text: expect.any(String),
    });
    expect(sim.jobs()).toEqual([]);
  });

  it('lets a token without Import Data read field mappings (they are not an import path)', async () => {
    sim = await startSimulator();
    const answer = await call(sim, 'GET', '/integration/v1/custom-sources/1001/field-mappings/account', {
      headers: BEARER(DEMO_TOKENS.noPermission),
    });
    expect(answer.status).toBe(200);
  });

  it('accepts tokens from the tokens option', async () => {
    sim = await startSimulator({ tokens: { mine: { permissions: ['Import Data'] } } });
    expect((await call(sim, 'GET', '/import/v1/jobs', { headers: BEARER('mine') })).status).toBe(200);
    expect((await call(sim, 'GET', '/import/v1/jobs')).status).toBe(401);
  });
});

describe('the client-credentials exchange', () => {
  const EXCHANGE = { grantType: 'client_credentials', clientId: DEMO_CLIENT.id, clientSecret: DEMO_CLIENT.secret };

  it('issues a bearer token for expiresIn seconds; after that it is refused as expired', async () => {
    const clock = { now: Date.parse('2026-11-22T00:00:00Z') };
    sim = await startSimulator({ now: () => clock.now });
    const answer = await call(sim, 'POST', '/auth/v1/token', { body: EXCHANGE, headers: { authorization: '' } });
    expect(answer.body).toEqual({ accessToken: expect.any(String), tokenType: 'bearer', expiresIn: 28_800 });
    const token = (answer.body as { accessToken: string }).accessToken;
    clock.now += 28_799_000;
    expect((await call(sim, 'GET', '/import/v1/jobs', { headers: BEARER(token) })).status).toBe(200);
    clock.now += 1_000;
    const expired = await call(sim, 'GET', '/import/v1/jobs', { headers: BEARER(token) });
    expect(expired).toMatchObject({ status: 401, body: { status: 'Unauthorized: token expired' } });
  });

  it.each([
    [{ ...EXCHANGE, grantType: 'password' }],
    [{ ...EXCHANGE, clientSecret: undefined }],
    [{ ...EXCHANGE, clientSecret: 'wrong' }],
    [{ ...EXCHANGE, clientId: 'nobody' }],
  ])('answers 400 to %o', async (body) => {
    sim = await startSimulator();
    expect((await call(sim, 'POST', '/auth/v1/token', { body })).status).toBe(400);
    expect(sim.issuedTokens()).toEqual([]);
  });

  it('expireTokenNext expires the token of the next matching request early', async () => {
    sim = await startSimulator();
    const { accessToken } = (await call(sim, 'POST', '/auth/v1/token', { body: EXCHANGE })).body as {
      accessToken: string;
    };
    sim.expireTokenNext('listJobs');
    expect((await call(sim, 'GET', '/import/v1/job/1', { headers: BEARER(accessToken) })).status).toBe(404);
    expect((await call(sim, 'GET', '/import/v1/jobs', { headers: BEARER(accessToken) })).status).toBe(401);
    expect((await call(sim, 'GET', '/import/v1/job/1', { headers: BEARER(accessToken) })).status).toBe(401);
  });
});

describe('daily limits', () => {
  it('answers 429 with the spec error object once an endpoint spends its limit, without applying the call', async () => {
    sim = await startSimulator({ dailyLimits: { createJob: 2 } });
    expect((await call(sim, 'POST', '/import/v1/job', { body: CREATE })).status).toBe(200);
    expect((await call(sim, 'POST', '/import/v1/job', { body: CREATE })).status).toBe(200);
    const refused = await call(sim, 'POST', '/import/v1/job', { body: CREATE });
    expect(refused.status).toBe(429);
    expect(refused.body).toEqual({
      errorCode: '429-101',
      errorMessage: 'Daily request limit of 2 reached for POST /import/v1/job',
      diagnosticCode: expect.any(String),
    });
    expect(sim.jobs()).toHaveLength(2);
    expect(sim.counters().createJob).toBe(2);
  });

  it('counts each endpoint on its own', async () => {
    sim = await startSimulator({ dailyLimits: { createJob: 1 } });
    await call(sim, 'POST', '/import/v1/job', { body: CREATE });
    expect((await call(sim, 'POST', '/import/v1/job', { body: CREATE })).status).toBe(429);
    expect((await call(sim, 'GET', '/import/v1/jobs')).status).toBe(200);
    expect(sim.counters()).toMatchObject({ createJob: 1, listJobs: 1, jobStatus: 0 });
  });

  it('counts 400 and 404 answers but not 401/403 refusals', async () => {
    sim = await startSimulator();
    await call(sim, 'GET', '/import/v1/job/5');
    await call(sim, 'GET', '/import/v1/job/x');
    await call(sim, 'GET', '/import/v1/job/5', { headers: BEARER('unknown') });
    await call(sim, 'GET', '/import/v1/job/5', { headers: BEARER(DEMO_TOKENS.noPermission) });
    expect(sim.counters().jobStatus).toBe(2);
  });

  it('starts a fresh window at midnight UTC by default', async () => {
    let nowMs = Date.UTC(2026, 10, 22, 23, 59, 0);
    sim = await startSimulator({ dailyLimits: { listJobs: 1 }, now: () => nowMs });
    expect((await call(sim, 'GET', '/import/v1/jobs')).status).toBe(200);
    expect((await call(sim, 'GET', '/import/v1/jobs')).status).toBe(429);
    nowMs = Date.UTC(2026, 10, 23, 0, 0, 0);
    expect(sim.counters().listJobs).toBe(0);
    expect((await call(sim, 'GET', '/import/v1/jobs')).status).toBe(200);
  });

  it('resets at the configured minute after midnight UTC, not before', async () => {
    let nowMs = Date.UTC(2026, 10, 23, 0, 30, 0);
    sim = await startSimulator({ dailyLimits: { jobStatus: 1 }, resetMinuteUtc: 7 * 60 + 30, now: () => nowMs });
    await call(sim, 'GET', '/import/v1/job/1');
    nowMs = Date.UTC(2026, 10, 23, 7, 29, 59);
    expect((await call(sim, 'GET', '/import/v1/job/1')).status).toBe(429);
    nowMs = Date.UTC(2026, 10, 23, 7, 30, 0);
    expect((await call(sim, 'GET', '/import/v1/job/1')).status).toBe(404);
  });

  it('resetCounters gives the endpoint its limit back', async () => {
    sim = await startSimulator({ dailyLimits: { listJobs: 1 } });
    await call(sim, 'GET', '/import/v1/jobs');
    sim.resetCounters();
    expect((await call(sim, 'GET', '/import/v1/jobs')).status).toBe(200);
  });

  it('refuses a resetMinuteUtc outside one day', async () => {
    await expect(startSimulator({ resetMinuteUtc: 1440 })).rejects.toThrow(
      'resetMinuteUtc must be an integer from 0 to 1439',
    );
  });
});
