import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type Simulator, startSimulator } from './server.js';
import { call, createJob, upload, waitForOutcome } from './test-client.js';

let sim: Simulator;
beforeEach(async () => {
  sim = await startSimulator({ processingMs: 20, customSources: [{ id: '1001', name: 'Salesforce CRM' }] });
});
afterEach(() => sim.close());

const PATH = '/integration/v1/custom-sources/1001/field-mappings/account';
const MAPPINGS = [
  { sourceFieldLabel: 'Company', serviceFieldName: 'name', dataType: 'string' },
  { sourceFieldLabel: 'Web Site', serviceFieldName: 'domain', dataType: 'string' },
];
const SOURCE = 'Salesforce CRM';

describe('field mappings', () => {
  it('reads an empty set before any PUT', async () => {
    expect(await call(sim, 'GET', PATH)).toMatchObject({ status: 200, body: { fieldMappings: [] } });
  });

  it('answers 201 with no body to a PUT and reads the set back', async () => {
    const put = await call(sim, 'PUT', PATH, { body: { fieldMappings: MAPPINGS } });
    expect(put).toEqual({ status: 201, body: undefined, text: '' });
    expect(await call(sim, 'GET', PATH)).toMatchObject({ status: 200, body: { fieldMappings: MAPPINGS } });
    expect(sim.fieldMappings('1001', 'account')).toEqual(MAPPINGS);
  });

  it('replaces the whole set on each PUT', async () => {
    await call(sim, 'PUT', PATH, { body: { fieldMappings: MAPPINGS } });
    await call(sim, 'PUT', PATH, { body: { fieldMappings: [MAPPINGS[1]] } });
    expect((await call(sim, 'GET', PATH)).body).toEqual({ fieldMappings: [MAPPINGS[1]] });
  });

  it('keeps account and person sets apart', async () => {
    await call(sim, 'PUT', PATH, { body: { fieldMappings: MAPPINGS } });
    expect((await call(sim, 'GET', PATH.replace('account', 'person'))).body).toEqual({ fieldMappings: [] });
  });

  it('answers 404 with the error envelope for an unknown source', async () => {
    const answer = await call(sim, 'GET', PATH.replace('1001', '9999'));
    expect(answer.status).toBe(404);
    expect(answer.body).toEqual({
      error: { code: '404-000', message: expect.any(String), diagnosticCode: expect.any(String) },
    });
    expect((await call(sim, 'PUT', PATH.replace('1001', '9999'), { body: { fieldMappings: [] } })).status).toBe(404);
  });

  it('answers 400-000 for an object type other than account or person', async () => {
    const answer = await call(sim, 'GET', PATH.replace('account', 'opportunity'));
    expect(answer).toMatchObject({ status: 400, body: { error: { code: '400-000' } } });
  });

  it.each([
    [{ fieldMappings: [{ sourceFieldLabel: 'A', serviceFieldName: 'a' }] }, 'dataType'],
    [{ fieldMappings: [{ sourceFieldLabel: '', serviceFieldName: 'a', dataType: 'string' }] }, 'sourceFieldLabel'],
    [
      { fieldMappings: [{ sourceFieldLabel: 'A', serviceFieldName: 'a', dataType: 'string' }, 'x'] },
      'fieldMappings[1]',
    ],
    [{ mappings: [] }, 'fieldMappings'],
  ])('refuses PUT body %j with 400-000 naming %s and keeps the old set', async (body, what) => {
    await call(sim, 'PUT', PATH, { body: { fieldMappings: MAPPINGS } });
    const answer = await call(sim, 'PUT', PATH, { body });
    expect(answer).toMatchObject({
      status: 400,
      body: { error: { code: '400-000', message: expect.stringContaining(what) } },
    });
    expect(sim.fieldMappings('1001', 'account')).toEqual(MAPPINGS);
  });

  it('seedFieldMappings makes a source known and its mappings readable', async () => {
    sim.seedFieldMappings('2002', 'person', MAPPINGS);
    expect((await call(sim, 'GET', '/integration/v1/custom-sources/2002/field-mappings/person')).body).toEqual({
      fieldMappings: MAPPINGS,
    });
  });
});

describe('custom sources', () => {
  it('answers one source by id, and 404 with the error envelope for an unknown one', async () => {
    expect(await call(sim, 'GET', '/integration/v1/custom-sources/1001')).toMatchObject({
      status: 200,
      body: { id: 1001, name: SOURCE, sourceGroup: 'custom', priority: 50 },
    });
    expect(await call(sim, 'GET', '/integration/v1/custom-sources/9999')).toMatchObject({
      status: 404,
      body: { error: { code: '404-000' } },
    });
  });

  it('lists the sources a page at a time', async () => {
    sim.seedFieldMappings('1002', 'person', MAPPINGS);
    const first = await call(sim, 'GET', '/integration/v1/custom-sources?group=custom&page=1&perPage=1');
    expect(first.body).toEqual({ totalCount: 2, data: [expect.objectContaining({ id: 1001, name: SOURCE })] });
    const second = await call(sim, 'GET', '/integration/v1/custom-sources?group=custom&page=2&perPage=1');
    expect(second.body).toMatchObject({ data: [{ id: 1002, name: 'Custom source 1002' }] });
  });

  it('lists CSV and the custom sources by name, never by id, as what a job may name', async () => {
    for (const entityType of ['Account', 'person']) {
      expect((await call(sim, 'GET', `/import/v1/${entityType}/sources`)).body).toEqual({ data: ['CSV', SOURCE] });
    }
  });
});

describe("a job reads its header through its custom source's mappings", () => {
  it('completes a job on the custom source whose mappings supply the required fields', async () => {
    sim.seedFieldMappings('1001', 'account', MAPPINGS);
    const { id } = await createJob(sim, { entityType: 'Account', source: SOURCE });
    await upload(sim, id, '\uFEFF"Web Site",Company,Extra\r\nacme.com,Acme,1\r\n');
    expect(await waitForOutcome(sim, id)).toMatchObject({ state: 'completed', source: SOURCE });
    expect(sim.job(id)).toMatchObject({
      header: ['Web Site', 'Company', 'Extra'],
      readAs: ['domain', 'name', 'Extra'],
    });
  });

  it('fails a job whose header, read through the mappings, lacks a required field', async () => {
    sim.seedFieldMappings('1001', 'account', MAPPINGS);
    const { id } = await createJob(sim, { entityType: 'Account', source: SOURCE });
    // "Domain" is neither mapped nor the display name "Account Domain".
    await upload(sim, id, 'Company,Domain\nAcme,acme.com\n');
    expect(await waitForOutcome(sim, id)).toMatchObject({ state: 'failed' });
    expect(sim.job(id)?.failureReason).toContain('"Account Domain" (or a mapping onto "domain")');
  });

  it('takes a display-name label the mappings leave alone', async () => {
    sim.seedFieldMappings('1001', 'account', [MAPPINGS[0]]);
    const { id } = await createJob(sim, { entityType: 'Account', source: SOURCE });
    await upload(sim, id, 'Company,Account Domain\nAcme,acme.com\n');
    expect(await waitForOutcome(sim, id)).toMatchObject({ state: 'completed' });
  });

  it('ignores the mappings on a job on CSV: its header must hold the display names', async () => {
    sim.seedFieldMappings('1001', 'account', MAPPINGS);
    const { id } = await createJob(sim, { entityType: 'Account' });
    await upload(sim, id, 'Company,Web Site\nAcme,acme.com\n');
    expect(await waitForOutcome(sim, id)).toMatchObject({ state: 'failed' });
    expect(sim.job(id)?.readAs).toEqual(['Company', 'Web Site']);
  });

  it('reads a Person job through the person set only', async () => {
    sim.seedFieldMappings('1001', 'account', MAPPINGS);
    const { id } = await createJob(sim, { entityType: 'Person', source: SOURCE });
    await upload(sim, id, 'Company,Web Site\nAcme,acme.com\n');
    expect(await waitForOutcome(sim, id)).toMatchObject({ state: 'failed' });
    const person = await createJob(sim, { entityType: 'Person', source: SOURCE });
    await upload(sim, person.id, 'First Name,Last Name,Email,External Person Id\nAda,L,ada@example.com,p1\n');
    expect(await waitForOutcome(sim, person.id)).toMatchObject({ state: 'completed' });
  });

  it('fails, without a reason in the API, a job on a source the tenant does not list (an id is not a name)', async () => {
    sim.seedFieldMappings('1001', 'account', MAPPINGS);
    const { id } = await createJob(sim, { entityType: 'Account', source: '1001' });
    await upload(sim, id, 'Company,Web Site\nAcme,acme.com\n');
    const outcome = await waitForOutcome(sim, id);
    expect(outcome).toMatchObject({ state: 'failed' });
    expect(Object.keys(outcome as object)).not.toContain('failureReason');
    expect(sim.job(id)?.failureReason).toContain('source "1001" is not one the tenant lists');
  });
});

describe('header check against the labels the entity type requires', () => {
  it('fails a job whose file lacks a required label, after taking the upload (as production does)', async () => {
    const { id } = await createJob(sim, { entityType: 'Account' });
    expect((await upload(sim, id, 'Account Name,Domain\nAcme,acme.com\n')).status).toBe(200);
    expect(await waitForOutcome(sim, id)).toMatchObject({ state: 'failed' });
    expect(sim.job(id)).toMatchObject({ uploads: 1 });
    expect(sim.job(id)?.failureReason).toContain('"Account Domain"');
  });

  it('matches labels trimmed, without a BOM, with any case and spacing', async () => {
    const { id } = await createJob(sim, { entityType: 'Opportunity' });
    await upload(sim, id, '\uFEFF external opportunity id ,OPPORTUNITY  NAME,Account Name,account domain\n1,A,B,c.d\n');
    expect(await waitForOutcome(sim, id)).toMatchObject({ state: 'completed' });
  });

  it('fails an Activity job whose file lacks a field its type requires for CSV imports', async () => {
    const { id } = await createJob(sim, { entityType: 'Activity', activityTypeId: 2 });
    await upload(sim, id, 'Email,Activity Date\nada@example.com,2026-11-22\n');
    expect(await waitForOutcome(sim, id)).toMatchObject({ state: 'failed' });
    expect(sim.job(id)?.failureReason).toContain('"Event Name"');
  });
});
