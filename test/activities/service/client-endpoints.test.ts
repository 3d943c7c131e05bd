import { createHash, randomBytes } from 'node:crypto';
import { Readable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Harness, startHarness } from './helpers.js';

describe('ServiceClient: every endpoint answers with its typed result', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness();
  });
  afterAll(() => h.close());

  it('createJob returns the new job in state new', async () => {
    const job = await h.client.createJob({ dataImportName: 'accounts nightly', entityType: 'Account' });
    expect(job).toMatchObject({ dataImportName: 'accounts nightly', entityType: 'Account', state: 'new' });
    expect(job.id).toMatch(/^[0-9]+$/);
    expect(h.sim.job(job.id)?.source).toBe('CSV');
  });

  it('createJob sends source and activityTypeId when given', async () => {
    const job = await h.client.createJob({
      dataImportName: 'calls',
      entityType: 'Activity',
      source: 'CSV',
      activityTypeId: 1,
    });
    expect(h.sim.job(job.id)).toMatchObject({ entityType: 'Activity', activityTypeId: 1 });
  });

  it('submitData streams the file byte-exact and returns the job processing', async () => {
    const job = await h.client.createJob({ dataImportName: 'upload', entityType: 'Account' });
    const data = Buffer.concat([Buffer.from('Account Name,Account Domain\n'), randomBytes(3 * 1024 * 1024 + 17)]);
    const progress: number[] = [];
    const answered = await h.client.submitData(job.id, Readable.from(chunks(data, 64 * 1024)), {
      contentLength: data.length,
      listAction: 'noop',
      onProgress: (n) => progress.push(n),
    });
    expect(answered).toMatchObject({ id: job.id, state: 'processing' });
    const stored = h.sim.job(job.id);
    expect(stored?.bytesReceived).toBe(data.length);
    expect(stored?.sha256).toBe(createHash('sha256').update(data).digest('hex'));
    expect(stored?.listAction).toBe('noop');
    expect(progress.at(-1)).toBe(data.length);
  });

  it('submitData accepts a plain async iterable', async () => {
    const job = await h.client.createJob({ dataImportName: 'iterable', entityType: 'Person' });
    const data = Buffer.from('First Name,Last Name,Email,External Person Id\nA,B,a@b.c,1\n');
    await h.client.submitData(job.id, chunks(data, 7), { contentLength: data.length });
    expect(h.sim.job(job.id)?.sha256).toBe(createHash('sha256').update(data).digest('hex'));
    expect(h.sim.job(job.id)?.listAction).toBeUndefined();
  });

  it('getJob reads the job status', async () => {
    const created = await h.client.createJob({ dataImportName: 'status', entityType: 'Account' });
    expect(await h.client.getJob(created.id)).toMatchObject({ id: created.id, state: 'new' });
  });

  it('listJobs filters and pages, and sends no page for the first page', async () => {
    const a = await h.client.createJob({ dataImportName: 'opp 1', entityType: 'Opportunity' });
    const b = await h.client.createJob({ dataImportName: 'opp 2', entityType: 'Opportunity' });
    const first = await h.client.listJobs({ entityType: 'Opportunity', state: 'new', perPage: 1 });
    expect(first.data.map((j) => j.id)).toEqual([a.id]);
    const page2 = await h.client.listJobs({ entityType: 'Opportunity', page: 2, perPage: 1 });
    expect(page2.data.map((j) => j.id)).toEqual([b.id]);
    const query = h.sim
      .requests()
      .filter((r) => r.endpoint === 'listJobs')
      .at(-2)?.query;
    expect(Object.fromEntries(new URLSearchParams(query))).toEqual({
      entityType: 'Opportunity',
      state: 'new',
      perPage: '1',
    });
  });

  it('listSources returns the source names', async () => {
    expect(await h.client.listSources('Account')).toEqual(['CSV', 'Salesforce CRM', 'HubSpot CRM']);
  });

  it('getCustomSource returns a source by its int64 id, with its name', async () => {
    expect(await h.client.getCustomSource('1001')).toMatchObject({ id: '1001', name: 'Salesforce CRM' });
    expect(h.sim.requests().at(-1)).toMatchObject({
      endpoint: 'getCustomSource',
      path: '/integration/v1/custom-sources/1001',
    });
    expect(() => h.client.getCustomSource('Salesforce CRM')).toThrow(RangeError);
  });

  it('listActivityTypes and getActivityFields return the reference data', async () => {
    const types = await h.client.listActivityTypes();
    expect(types.length).toBeGreaterThan(0);
    const first = types[0];
    if (!first) throw new Error('no activity types');
    const fields = await h.client.getActivityFields(first.id);
    expect(fields.activityType.name).toEqual(expect.any(String));
    expect(fields.fields.length).toBeGreaterThan(0);
  });

  it('putFieldMappings replaces the set and getFieldMappings reads it back', async () => {
    const mappings = [
      { sourceFieldLabel: 'Name', serviceFieldName: 'name', dataType: 'string' },
      { sourceFieldLabel: 'Employees', serviceFieldName: 'employeeCount', dataType: 'number' },
    ];
    expect(await h.client.getFieldMappings('1001', 'account')).toEqual([]);
    await h.client.putFieldMappings('1001', 'account', mappings);
    expect(h.sim.fieldMappings('1001', 'account')).toEqual(mappings);
    expect(await h.client.getFieldMappings('1001', 'account')).toEqual(mappings);
  });

  it('authenticates with the bearer token (the simulator answers 401 without it)', async () => {
    const before = h.sim.requests().length;
    await h.client.listSources('Person');
    expect(h.sim.requests().slice(before)).toEqual([expect.objectContaining({ status: 200 })]);
  });
});

async function* chunks(data: Buffer, size: number): AsyncGenerator<Uint8Array> {
  for (let i = 0; i < data.length; i += size) yield data.subarray(i, i + size);
}
