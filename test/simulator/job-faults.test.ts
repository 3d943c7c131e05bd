import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type Simulator, startSimulator } from './server.js';
import { call, createJob, upload, waitForOutcome } from './test-client.js';

let sim: Simulator;
beforeEach(async () => {
  sim = await startSimulator({ processingMs: 20 });
});
afterEach(() => sim.close());

const CREATE = { dataImportName: 'accounts', entityType: 'Account' };
const list = async (query = '') => (await call(sim, 'GET', `/import/v1/jobs${query}`)).body as Record<string, unknown>;
const idsOf = (body: Record<string, unknown>) => (body.data as { id: number }[]).map((j) => j.id);
async function landed(): Promise<void> {
  while (sim.lateCreatesPending() > 0) await new Promise((r) => setTimeout(r, 5));
}

describe('job faults', () => {
  it('commitCreateLate answers 500 and the job appears afterwards', async () => {
    sim.jobFaults.commitCreateLate({ afterMs: 50, answer: { status: 500 } });
    expect((await call(sim, 'POST', '/import/v1/job', { body: CREATE })).status).toBe(500);
    expect(sim.jobs()).toEqual([]);
    expect(sim.lateCreatesPending()).toBe(1);
    await landed();
    expect(sim.jobs()).toEqual([expect.objectContaining({ dataImportName: 'accounts', state: 'new' })]);
  });

  it('commitCreateLate can reset the connection instead of answering', async () => {
    sim.jobFaults.commitCreateLate({ afterMs: 20, answer: 'reset' });
    await expect(call(sim, 'POST', '/import/v1/job', { body: CREATE })).rejects.toThrow();
    await landed();
    expect(sim.jobs()).toHaveLength(1);
  });

  it('commitCreateLate refuses an answer that is not a failure', () => {
    expect(() => sim.jobFaults.commitCreateLate({ afterMs: 1, answer: { status: 200 } })).toThrow(/status >= 400/);
  });

  it('listCreatedLate hides the new job from lists, not from reads by id', async () => {
    sim.jobFaults.listCreatedLate(60_000);
    const { id } = await createJob(sim);
    expect(idsOf(await list())).toEqual([]);
    expect((await call(sim, 'GET', `/import/v1/job/${id}`)).status).toBe(200);
  });

  it('truncateNames keeps the first characters of the next name only', async () => {
    sim.jobFaults.truncateNames(4);
    await createJob(sim, { dataImportName: 'abcdefgh' });
    await createJob(sim, { dataImportName: 'abcdefgh' });
    expect(sim.jobs().map((j) => j.dataImportName)).toEqual(['abcd', 'abcdefgh']);
  });

  it('bigIds gives an id above 2^53, written as an exact bare JSON number', async () => {
    sim.jobFaults.bigIds();
    const answer = await call(sim, 'POST', '/import/v1/job', { body: CREATE });
    expect(answer.text).toMatch(/^\{"id":9007199254740993,/);
    expect(sim.job('9007199254740993')).toMatchObject({ dataImportName: 'accounts' });
    expect((await call(sim, 'GET', '/import/v1/job/9007199254740993')).text).toContain('"id":9007199254740993,');
  });

  it('ignoreSort lists in id order whatever sort says', async () => {
    const a = await createJob(sim);
    const b = await createJob(sim);
    expect(idsOf(await list('?sort=-createdAt'))).toEqual([b.id, a.id]);
    sim.jobFaults.ignoreSort();
    expect(idsOf(await list('?sort=-createdAt'))).toEqual([a.id, b.id]);
  });

  it('capPerPage returns fewer jobs than perPage asked for', async () => {
    for (let n = 0; n < 3; n++) await createJob(sim);
    sim.jobFaults.capPerPage(2);
    expect(idsOf(await list('?perPage=50'))).toHaveLength(2);
    expect(idsOf(await list('?perPage=50'))).toHaveLength(3);
  });

  it('omitFields leaves out optional job fields and a list totalCount', async () => {
    const { id } = await createJob(sim);
    sim.jobFaults.omitFields('jobStatus');
    expect((await call(sim, 'GET', `/import/v1/job/${id}`)).body).toEqual({ id, state: 'new' });
    sim.jobFaults.omitFields('listJobs', ['totalCount', 'updatedAt']);
    const body = await list();
    expect(body.totalCount).toBeUndefined();
    expect((body.data as Record<string, unknown>[])[0]).not.toHaveProperty('updatedAt');
    expect(() => sim.jobFaults.omitFields('listJobs', ['id'])).toThrow(/may leave out only/);
  });

  it('holdProcessing keeps the next job processing until the faults are cleared, then it ends as usual', async () => {
    const csv = 'Account Name,Account Domain\nAcme,acme.com\n';
    sim.jobFaults.holdProcessing();
    const held = await createJob(sim);
    const other = await createJob(sim);
    expect((await upload(sim, held.id, csv)).body).toMatchObject({ state: 'processing' });
    await upload(sim, other.id, csv);
    // Accepted after the held one, with the same processing time: ended, while the held one has not.
    expect(await waitForOutcome(sim, other.id)).toMatchObject({ state: 'completed' });
    expect(sim.job(held.id)).toMatchObject({ state: 'processing', uploads: 1 });
    const listed = (await list('?state=processing')).data as { id: number }[];
    expect(listed.map((j) => j.id)).toEqual([held.id]);
    sim.clearFaults();
    expect(await waitForOutcome(sim, held.id)).toMatchObject({ state: 'completed' });
  });

  it('clearFaults clears the job faults too', async () => {
    sim.jobFaults.truncateNames(1);
    sim.clearFaults();
    await createJob(sim, { dataImportName: 'whole' });
    expect(sim.jobs()[0]?.dataImportName).toBe('whole');
  });
});
