import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type Simulator, startSimulator } from './server.js';
import { call, createJob, upload, waitForOutcome } from './test-client.js';

let sim: Simulator;
beforeEach(async () => {
  sim = await startSimulator({ processingMs: 20 });
});
afterEach(() => sim.close());

describe('import job lifecycle', () => {
  it('creates a job in state new with the fields the service returns', async () => {
    const answer = await call(sim, 'POST', '/import/v1/job', {
      body: { dataImportName: 'accounts', entityType: 'Account' },
    });
    expect(answer.status).toBe(200);
    expect(answer.body).toEqual({
      id: 100001,
      dataImportName: 'accounts',
      entityType: 'Account',
      state: 'new',
      source: 'CSV',
      createdAt: expect.stringMatching(/Z$/),
      updatedAt: expect.stringMatching(/Z$/),
    });
  });

  it('moves new -> processing on upload and then to completed', async () => {
    const { id } = await createJob(sim);
    const accepted = await upload(sim, id, 'Account Name,Account Domain\nAcme,acme.com\n');
    expect(accepted.status).toBe(200);
    expect(accepted.body).toMatchObject({ id, state: 'processing' });
    expect(await waitForOutcome(sim, id)).toMatchObject({ id, state: 'completed' });
    expect(sim.job(id)).toMatchObject({ uploads: 1, listAction: 'noop', header: ['Account Name', 'Account Domain'] });
  });

  it('fails the job when told to with setJobOutcome', async () => {
    sim.setJobOutcome('failed');
    const { id } = await createJob(sim);
    await upload(sim, id, 'Account Name\nAcme\n');
    expect(await waitForOutcome(sim, id)).toMatchObject({ state: 'failed' });
  });

  it('refuses a second upload to the same job with 400 and keeps the first', async () => {
    const { id } = await createJob(sim);
    await upload(sim, id, 'a\n1\n');
    const second = await upload(sim, id, 'a\n2\n');
    expect(second.status).toBe(400);
    expect(second.body).toEqual({ message: expect.stringContaining('state new') });
    expect(sim.job(id)?.uploads).toBe(1);
  });

  it('answers 404 {message} for an unknown job, on status and on upload', async () => {
    expect(await call(sim, 'GET', '/import/v1/job/999')).toMatchObject({
      status: 404,
      body: { message: expect.any(String) },
    });
    expect((await upload(sim, 999, 'a\n')).status).toBe(404);
  });

  it('answers 400 for a job id that is not an integer', async () => {
    expect(await call(sim, 'GET', '/import/v1/job/abc')).toMatchObject({
      status: 400,
      body: { message: expect.any(String) },
    });
  });

  it('answers 400 for a listAction outside replace|insert|delete|noop and does not take the data', async () => {
    const { id } = await createJob(sim);
    expect((await upload(sim, id, 'a\n', 'merge')).status).toBe(400);
    expect(sim.job(id)?.state).toBe('new');
  });

  it('records no listAction when the client sends none (the service then applies replace)', async () => {
    const { id } = await createJob(sim);
    await call(sim, 'PUT', `/import/v1/job/${id}/data`, { raw: 'a\n1\n' });
    expect(sim.job(id)?.listAction).toBeUndefined();
  });

  it.each([
    [{}, 'dataImportName'],
    [{ dataImportName: 'x' }, 'entityType'],
    [{ dataImportName: 'x', entityType: 'Company' }, 'entityType'],
    [{ dataImportName: 'x', entityType: 'Activity' }, 'activityTypeId'],
    [{ dataImportName: 'x', entityType: 'Activity', activityTypeId: 2 ** 31 }, 'activityTypeId'],
    [{ dataImportName: 'x', entityType: 'Account', source: 7 }, 'source'],
  ])('refuses create body %j with 400 naming %s', async (body, field) => {
    const answer = await call(sim, 'POST', '/import/v1/job', { body });
    expect(answer.status).toBe(400);
    expect(answer.body).toEqual({ message: expect.stringContaining(field) });
  });

  it('refuses a create body that is not JSON with 400', async () => {
    const answer = await call(sim, 'POST', '/import/v1/job', {
      raw: '{nope',
      headers: { 'content-type': 'application/json' },
    });
    expect(answer).toMatchObject({ status: 400, body: { message: expect.any(String) } });
  });

  it('creates an Activity job with its activityTypeId and a custom source', async () => {
    const answer = await call(sim, 'POST', '/import/v1/job', {
      body: { dataImportName: 'webinars', entityType: 'Activity', activityTypeId: 1, source: '1001' },
    });
    expect(answer.body).toMatchObject({ entityType: 'Activity', activityTypeId: 1, source: '1001' });
  });

  it('answers 404 {message} for a path that is no endpoint', async () => {
    expect(await call(sim, 'GET', '/import/v2/nothing')).toMatchObject({
      status: 404,
      body: { message: expect.any(String) },
    });
    expect(sim.requests().at(-1)).toMatchObject({ endpoint: 'unknown', status: 404 });
  });
});

describe('jobs list', () => {
  async function seed(): Promise<number[]> {
    const ids: number[] = [];
    for (const entityType of ['Account', 'Person', 'Account']) ids.push((await createJob(sim, { entityType })).id);
    await upload(sim, ids[0]!, 'a\n');
    return ids;
  }

  it('lists all jobs ascending by id with totalCount', async () => {
    const ids = await seed();
    const answer = await call(sim, 'GET', '/import/v1/jobs');
    expect(answer.status).toBe(200);
    const { totalCount, data } = answer.body as { totalCount: number; data: { id: number }[] };
    expect(totalCount).toBe(3);
    expect(data.map((j) => j.id)).toEqual(ids);
  });

  it('filters by entityType case-insensitively and by state', async () => {
    const ids = await seed();
    const accounts = await call(sim, 'GET', '/import/v1/jobs?entityType=account');
    expect((accounts.body as { data: { id: number }[] }).data.map((j) => j.id)).toEqual([ids[0], ids[2]]);
    const fresh = await call(sim, 'GET', '/import/v1/jobs?entityType=ACCOUNT&state=new');
    expect((fresh.body as { data: { id: number }[] }).data.map((j) => j.id)).toEqual([ids[2]]);
  });

  it('sorts by -createdAt descending and pages with perPage', async () => {
    const ids = await seed();
    const page1 = await call(sim, 'GET', '/import/v1/jobs?sort=-createdAt&perPage=2');
    const page2 = await call(sim, 'GET', '/import/v1/jobs?sort=-createdAt&perPage=2&page=2');
    const idsOf = (a: { body: unknown }) => (a.body as { data: { id: number }[] }).data.map((j) => j.id);
    expect([...idsOf(page1), ...idsOf(page2)]).toEqual([...ids].reverse());
    expect((page2.body as { totalCount: number }).totalCount).toBe(3);
  });

  it.each(['perPage=101', 'perPage=0', 'page=0', 'page=x', 'sort=name', 'state=done', 'entityType=Company'])(
    'refuses %s with 400',
    async (query) => {
      expect((await call(sim, 'GET', `/import/v1/jobs?${query}`)).status).toBe(400);
    },
  );
});

describe('import metadata', () => {
  it('lists CSV and the custom sources by name for a known entity type and 400 for an unknown one', async () => {
    expect(await call(sim, 'GET', '/import/v1/person/sources')).toMatchObject({
      status: 200,
      body: { data: ['CSV', 'Salesforce CRM', 'HubSpot CRM'] },
    });
    expect((await call(sim, 'GET', '/import/v1/Company/sources')).status).toBe(400);
  });

  it('lists supported activity types and the fields of one, 404 for an unknown one', async () => {
    const types = await call(sim, 'GET', '/import/v1/supported_activity_types');
    expect(types.status).toBe(200);
    const [first] = types.body as { id: number }[];
    expect(first).toEqual({
      id: expect.any(Number),
      name: expect.any(String),
      description: expect.any(String),
      activitySource: expect.any(String),
    });
    const fields = await call(sim, 'GET', `/import/v1/activity_fields/${first!.id}`);
    expect(fields.body).toMatchObject({
      activityType: { name: expect.any(String), label: expect.any(String), description: expect.any(String) },
      fields: expect.arrayContaining([
        { fieldName: 'Email', fieldDataType: 'string', defaultField: true, isRequiredForCsvImport: true },
      ]),
    });
    expect((await call(sim, 'GET', '/import/v1/activity_fields/424242')).status).toBe(404);
  });
});
