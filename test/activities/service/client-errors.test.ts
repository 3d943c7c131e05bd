import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
  BadRequest,
  Forbidden,
  NotFound,
  RateLimited,
  ServerError,
  Unauthorized,
  UnusableResponse,
} from '../../../activities/service/errors.js';
import { DEMO_TOKENS } from '../../simulator/server.js';
import { fixedToken, type Harness, rejectionOf, startHarness } from './helpers.js';

describe('ServiceClient: every non-2xx answer becomes its typed error', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness({ dailyLimits: { activityTypes: 1 } });
  });
  afterAll(() => h.close());
  beforeEach(() => h.sim.clearFaults());

  it('401 for an expired token is Unauthorized, not rotated, with the gateway {status} text', async () => {
    const client = h.clientWith({ tokens: fixedToken(DEMO_TOKENS.expired) });
    const e = await rejectionOf(client.listSources('Account'));
    expect(e).toBeInstanceOf(Unauthorized);
    expect(e).toMatchObject({ status: 401, tokenRotated: false, endpoint: 'listSources', method: 'GET' });
    expect((e as Unauthorized).serviceMessage).toMatch(/token expired/);
  });

  it('401 for an unknown token is Unauthorized', async () => {
    const client = h.clientWith({ tokens: fixedToken('not-a-known-token') });
    const e = await rejectionOf(client.getJob('1'));
    expect(e).toBeInstanceOf(Unauthorized);
    expect((e as Unauthorized).serviceMessage).toMatch(/invalid token/);
  });

  it('401 for a missing token (injected) is Unauthorized', async () => {
    h.sim.failNext('createJob', 401);
    const e = await rejectionOf(h.client.createJob({ dataImportName: 'x', entityType: 'Account' }));
    expect(e).toBeInstanceOf(Unauthorized);
  });

  it('403 on an import path is Forbidden naming the Import Data permission', async () => {
    const client = h.clientWith({ tokens: fixedToken(DEMO_TOKENS.noPermission) });
    const e = await rejectionOf(client.createJob({ dataImportName: 'x', entityType: 'Account' }));
    expect(e).toBeInstanceOf(Forbidden);
    expect(e).toMatchObject({ status: 403, permission: 'Import Data' });
    expect((e as Error).message).toContain('"Import Data" permission');
  });

  it('403 on a mapping path is Forbidden saying the permission is unpublished', async () => {
    h.sim.failNext('putFieldMappings', 403);
    const e = await rejectionOf(h.client.putFieldMappings('1001', 'person', []));
    expect(e).toBeInstanceOf(Forbidden);
    expect((e as Forbidden).permission).toMatch(/unpublished/);
  });

  it('404 of an unknown job is NotFound with the {message} text', async () => {
    const e = await rejectionOf(h.client.getJob('987654'));
    expect(e).toBeInstanceOf(NotFound);
    expect(e).toMatchObject({ status: 404, path: '/import/v1/job/987654' });
    expect((e as NotFound).serviceMessage).toBe('Import job 987654 not found');
  });

  it('404 of an unknown custom source carries the {error:{code,message,diagnosticCode}} fields', async () => {
    const e = await rejectionOf(h.client.getFieldMappings('999', 'account'));
    expect(e).toBeInstanceOf(NotFound);
    expect(e).toMatchObject({ errorCode: '404-000', serviceMessage: 'Custom source 999 not found' });
    expect((e as NotFound).diagnosticCode).toMatch(/^sim-/);
  });

  it('400 of an invalid create body is BadRequest with the service message', async () => {
    const e = await rejectionOf(h.client.createJob({ dataImportName: 'calls', entityType: 'Activity' }));
    expect(e).toBeInstanceOf(BadRequest);
    expect((e as BadRequest).serviceMessage).toBe('activityTypeId is required when entityType is Activity');
  });

  it('400 of a mapping body carries the 400-000 code', async () => {
    const e = await rejectionOf(
      h.client.putFieldMappings('1001', 'account', [{ sourceFieldLabel: '', serviceFieldName: 'n', dataType: 's' }]),
    );
    expect(e).toBeInstanceOf(BadRequest);
    expect((e as BadRequest).errorCode).toBe('400-000');
  });

  it('413 and 422 are BadRequest', async () => {
    h.sim.failNext('listSources', 413, { body: { message: 'too large' } });
    expect(await rejectionOf(h.client.listSources('Account'))).toBeInstanceOf(BadRequest);
    h.sim.failNext('listSources', 422, { body: { message: 'unprocessable' } });
    expect(await rejectionOf(h.client.listSources('Account'))).toBeInstanceOf(BadRequest);
  });

  it('429 of a spent daily limit is RateLimited 429-101 with the spec error object', async () => {
    await h.client.listActivityTypes();
    const e = await rejectionOf(h.client.listActivityTypes());
    expect(e).toBeInstanceOf(RateLimited);
    expect(e).toMatchObject({ status: 429, errorCode: '429-101' });
    expect((e as RateLimited).diagnosticCode).toMatch(/^sim-/);
  });

  it('429 of a concurrency limit is RateLimited 429-100', async () => {
    h.sim.failNext('jobStatus', 429, {
      body: { errorCode: '429-100', errorMessage: 'Concurrent-query limit', diagnosticCode: 'd-1' },
    });
    const e = await rejectionOf(h.client.getJob('1'));
    expect(e).toMatchObject({ type: 'RateLimited', errorCode: '429-100', diagnosticCode: 'd-1' });
    expect((e as Error).message).toContain('service said: Concurrent-query limit');
  });

  it('500 and 503 are ServerError', async () => {
    h.sim.failNext('listJobs', 500);
    const e500 = await rejectionOf(h.client.listJobs());
    expect(e500).toBeInstanceOf(ServerError);
    expect(e500).toMatchObject({ status: 500, serviceMessage: 'Injected 500' });
    h.sim.failNext('getFieldMappings', 503);
    const e503 = await rejectionOf(h.client.getFieldMappings('1001', 'account'));
    expect(e503).toBeInstanceOf(ServerError);
    expect(e503).toMatchObject({ status: 503, errorCode: '503-000' });
  });

  it('an unexpected status (409) is ServerError saying so', async () => {
    h.sim.failNext('createJob', 409, { body: { message: 'conflict' } });
    const e = await rejectionOf(h.client.createJob({ dataImportName: 'x', entityType: 'Account' }));
    expect(e).toBeInstanceOf(ServerError);
    expect((e as ServerError).serviceMessage).toBe('unexpected status 409: conflict');
  });

  it('an XML error body yields its errorCode, errorMessage and diagnosticCode', async () => {
    const xml =
      '<?xml version="1.0"?><error><errorCode>400-103</errorCode><errorMessage>companyId is not an integer</errorMessage><diagnosticCode>x-9</diagnosticCode></error>';
    h.sim.failNext('jobStatus', 400, { body: xml, contentType: 'application/xml' });
    const e = await rejectionOf(h.client.getJob('5'));
    expect(e).toBeInstanceOf(BadRequest);
    expect(e).toMatchObject({
      errorCode: '400-103',
      serviceMessage: 'companyId is not an integer',
      diagnosticCode: 'x-9',
    });
  });

  it('an XML 429 body yields the rate-limit code', async () => {
    h.sim.failNext('listJobs', 429, {
      body: '<error>\n  <errorCode>429-100</errorCode>\n  <errorMessage>slow down</errorMessage>\n</error>',
      contentType: 'application/xml; charset=utf-8',
    });
    expect(await rejectionOf(h.client.listJobs())).toMatchObject({ type: 'RateLimited', errorCode: '429-100' });
  });

  it('a text/plain body becomes a trimmed excerpt', async () => {
    h.sim.failNext('jobStatus', 502, {
      body: `  Bad gateway:\n upstream ${'x'.repeat(1000)}  `,
      contentType: 'text/plain',
    });
    const e = (await rejectionOf(h.client.getJob('5'))) as ServerError;
    expect(e).toBeInstanceOf(ServerError);
    expect(e.serviceMessage?.startsWith('Bad gateway: upstream xxx')).toBe(true);
    expect(e.serviceMessage?.endsWith('...')).toBe(true);
    expect(e.serviceMessage?.length).toBeLessThan(320);
  });

  it('an HTML error page becomes its text without tags', async () => {
    h.sim.failNext('jobStatus', 504, {
      body: '<html><body><h1>504 Gateway Time-out</h1></body></html>',
      contentType: 'text/html',
    });
    expect(await rejectionOf(h.client.getJob('5'))).toMatchObject({
      type: 'ServerError',
      serviceMessage: '504 Gateway Time-out',
    });
  });

  it('an empty error body still gives the status', async () => {
    h.sim.failNext('jobStatus', 500, { body: '', contentType: 'text/plain' });
    const e = await rejectionOf(h.client.getJob('5'));
    expect(e).toMatchObject({ type: 'ServerError', status: 500, serviceMessage: undefined });
  });

  it('a 200 whose body is not JSON is an UnusableResponse saying what was expected', async () => {
    h.sim.failNext('jobStatus', 200, { body: 'OK', contentType: 'text/plain' });
    const e = await rejectionOf(h.client.getJob('5'));
    expect(e).toBeInstanceOf(UnusableResponse);
    expect((e as UnusableResponse).serviceMessage).toBe('expected an import job object { id, state } as JSON, got OK');
  });

  it('a 200 whose JSON lacks a field the worker uses is an UnusableResponse naming the field', async () => {
    h.sim.failNext('jobStatus', 200, { body: { id: 'seven', state: 'new' } });
    const e = await rejectionOf(h.client.getJob('5'));
    expect(e).toBeInstanceOf(UnusableResponse);
    expect((e as UnusableResponse).serviceMessage).toMatch(/^expected an import job object .*; id: /);
  });
});
