/**
 * What the client accepts from the job endpoints: only what it uses is
 * required (the reference marks no job field required), int64 ids stay exact
 * above 2^53, and an answer it cannot use is an UnusableResponse, not a
 * ServerError retried forever.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { UnusableResponse } from '../../../activities/service/errors.js';
import { parseJsonExact } from '../../../activities/service/exact-json.js';
import { type Harness, rejectionOf, startHarness } from './helpers.js';

describe('ServiceClient: job answers as the service may send them', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness();
  });
  afterAll(() => h.close());
  beforeEach(() => h.sim.clearFaults());

  it('reads a job answer that leaves out every optional field (updatedAt, dataImportName, ...)', async () => {
    const created = await h.client.createJob({ dataImportName: 'sparse', entityType: 'Account' });
    h.sim.jobFaults.omitFields('jobStatus');
    const job = await h.client.getJob(created.id);
    expect(job).toMatchObject({ id: created.id, state: 'new' });
    expect(job.updatedAt).toBeUndefined();
    expect(job.dataImportName).toBeUndefined();
  });

  it('keeps a created job without a state without one (the caller reads it again, never assumes)', async () => {
    h.sim.failNext('createJob', 200, { body: { id: 77 } });
    const created = await h.client.createJob({ dataImportName: 'bare', entityType: 'Account' });
    expect(created).toMatchObject({ id: '77' });
    expect(created.state).toBeUndefined();
  });

  it('reads a list without totalCount and with jobs missing their optional fields', async () => {
    const created = await h.client.createJob({ dataImportName: 'listed', entityType: 'Person' });
    h.sim.jobFaults.omitFields('listJobs', ['totalCount', 'updatedAt', 'createdAt', 'source']);
    const list = await h.client.listJobs({ entityType: 'Person' });
    expect(list.data).toContainEqual(expect.objectContaining({ id: created.id, dataImportName: 'listed' }));
  });

  it('keeps a job id above 2^53 exact, and reads and uploads to that very job', async () => {
    h.sim.jobFaults.bigIds();
    const created = await h.client.createJob({ dataImportName: 'big id', entityType: 'Account' });
    expect(created.id).toBe('9007199254740993');
    expect(h.sim.job(created.id)?.dataImportName).toBe('big id');
    expect((await h.client.getJob(created.id)).id).toBe('9007199254740993');
    const csv = Buffer.from('Account Name,Account Domain\nA,a.example\n');
    await h.client.submitData(created.id, [csv], { contentLength: csv.length });
    expect(h.sim.job(created.id)).toMatchObject({ uploads: 1, bytesReceived: csv.length });
    const listed = await h.client.listJobs({ entityType: 'Account', state: 'processing' });
    expect(listed.data.map((j) => j.id)).toContain('9007199254740993');
  });

  it('an answer without a usable id or state is an UnusableResponse naming the field', async () => {
    h.sim.failNext('jobStatus', 200, { body: { id: 5, status: 'done' } });
    const e = await rejectionOf(h.client.getJob('5'));
    expect(e).toBeInstanceOf(UnusableResponse);
    expect((e as UnusableResponse).message).toContain('state');
    h.sim.failNext('jobStatus', 200, { body: 'not json', contentType: 'text/plain' });
    expect(await rejectionOf(h.client.getJob('5'))).toBeInstanceOf(UnusableResponse);
  });
});

describe('parseJsonExact', () => {
  it('reads integers beyond 2^53 as their exact digits and everything else as JSON.parse does', () => {
    const text =
      '{"id":9007199254740993,"n":12,"f":1.5e300,"neg":-9223372036854775807,"s":"9007199254740993 \\" 123456789012345678","a":[1,18446744073709551615]}';
    expect(parseJsonExact(text)).toEqual({
      id: '9007199254740993',
      n: 12,
      f: 1.5e300,
      neg: '-9223372036854775807',
      s: '9007199254740993 " 123456789012345678',
      a: [1, '18446744073709551615'],
    });
    expect(parseJsonExact('{"id":9007199254740991}')).toEqual({ id: 9007199254740991 });
  });
});
