import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type Simulator, startSimulator } from './server.js';
import { call, createJob, upload, waitForOutcome } from './test-client.js';

let sim: Simulator;
beforeEach(async () => {
  sim = await startSimulator({ processingMs: 20 });
});
afterEach(() => sim.close());

async function simGet(path: string): Promise<{ status: number; body: unknown }> {
  const res = await fetch(`${sim.baseUrl}/__sim${path}`);
  return { status: res.status, body: res.status === 204 ? undefined : await res.json() };
}

async function simPost(path: string, body?: unknown): Promise<{ status: number; body: unknown }> {
  const res = await fetch(`${sim.baseUrl}/__sim${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : undefined };
}

describe('/__sim inspection API', () => {
  it('shows jobs, one job, requests and counters without auth, and logs no /__sim call', async () => {
    const { id } = await createJob(sim);
    await upload(sim, id, 'a\n1\n');
    // The inspection shows the int64 id as a decimal string (exact above 2^53).
    expect((await simGet('/jobs')).body).toEqual([
      expect.objectContaining({ id: String(id), uploads: 1, bytesReceived: 4 }),
    ]);
    expect((await simGet(`/jobs/${id}`)).body).toMatchObject({
      id: String(id),
      sha256: expect.stringMatching(/^[0-9a-f]{64}$/),
    });
    expect((await simGet('/jobs/1')).status).toBe(404);
    expect((await simGet('/counters')).body).toMatchObject({ createJob: 1, submitData: 1 });
    const requests = (await simGet('/requests')).body as { endpoint: string; status: number }[];
    expect(requests.map((r) => [r.endpoint, r.status])).toEqual([
      ['createJob', 200],
      ['submitData', 200],
    ]);
  });

  it('injects each fault kind over HTTP', async () => {
    expect((await simPost('/faults', { kind: 'failNext', endpoint: 'listJobs', status: 503, count: 2 })).status).toBe(
      204,
    );
    expect((await call(sim, 'GET', '/import/v1/jobs')).status).toBe(503);
    expect((await call(sim, 'GET', '/import/v1/jobs')).status).toBe(503);
    expect((await call(sim, 'GET', '/import/v1/jobs')).status).toBe(200);

    await simPost('/faults', { kind: 'applyThenDrop', endpoint: 'createJob' });
    await expect(createJob(sim)).rejects.toThrow();
    expect(sim.jobs()).toHaveLength(1);

    const { id } = await createJob(sim);
    await simPost('/faults', { kind: 'resetUploadAfter', bytes: 10 });
    await expect(upload(sim, id, Buffer.alloc(512 * 1024, 0x61))).rejects.toThrow();
    expect(sim.job(id)?.state).toBe('new');

    await simPost('/faults', { kind: 'delayNext', endpoint: 'jobStatus', ms: 10 });
    expect((await call(sim, 'GET', `/import/v1/job/${id}`)).status).toBe(200);
  });

  it('injects the upload faults and state spellings over HTTP', async () => {
    const { id } = await createJob(sim);
    await simPost('/faults', { kind: 'spellStates', spelling: { new: 'NEW' } });
    expect((await call(sim, 'GET', `/import/v1/job/${id}`)).body).toMatchObject({ state: 'NEW' });

    await simPost('/faults', { kind: 'refuseUploadOnHeaders', status: 413 });
    expect((await upload(sim, id, 'a\n1\n')).status).toBe(413);

    await simPost('/faults', { kind: 'commitUploadOnAnswer', ms: 10 });
    expect((await upload(sim, id, 'a\n1\n')).status).toBe(200);
    expect(sim.job(id)?.uploads).toBe(1);

    const other = await createJob(sim);
    await simPost('/faults', { kind: 'answerUploadEarly', bytes: 1 });
    await upload(sim, other.id, 'a\n1\n').catch(() => undefined);
    expect(sim.job(other.id)?.uploads).toBe(1);
  });

  it('injects the job faults over HTTP, and refuses a malformed one with the reason', async () => {
    expect((await simPost('/faults', { kind: 'commitCreateLate', afterMs: 10, answer: 503 })).status).toBe(204);
    expect(
      (await call(sim, 'POST', '/import/v1/job', { body: { dataImportName: 'x', entityType: 'Account' } })).status,
    ).toBe(503);
    while (sim.lateCreatesPending() > 0) await new Promise((r) => setTimeout(r, 5));
    expect(sim.jobs()).toHaveLength(1);
    await simPost('/faults', { kind: 'truncateNames', maxChars: 2 });
    await simPost('/faults', { kind: 'bigIds' });
    await createJob(sim);
    expect(sim.job('9007199254740993')?.dataImportName).toBe('ni');
    await simPost('/faults', { kind: 'omitFields', endpoint: 'jobStatus', fields: ['updatedAt'] });
    expect((await call(sim, 'GET', '/import/v1/job/9007199254740993')).text).not.toContain('updatedAt');
    for (const fault of [
      { kind: 'capPerPage', max: 1 },
      { kind: 'ignoreSort' },
      { kind: 'listCreatedLate', afterMs: 5 },
    ]) {
      expect((await simPost('/faults', fault)).status).toBe(204);
    }
    const bad = await simPost('/faults', { kind: 'commitCreateLate', afterMs: 10, answer: 'never' });
    expect(bad.status).toBe(400);
  });

  it('seeds and reads field mappings over HTTP', async () => {
    const mappings = [{ sourceFieldLabel: 'Company', serviceFieldName: 'name', dataType: 'string' }];
    const res = await fetch(`${sim.baseUrl}/__sim/field-mappings/3003/account`, {
      method: 'PUT',
      body: JSON.stringify(mappings),
    });
    expect(res.status).toBe(204);
    expect((await simGet('/field-mappings/3003/account')).body).toEqual(mappings);
    expect((await call(sim, 'GET', '/integration/v1/custom-sources/3003/field-mappings/account')).body).toEqual({
      fieldMappings: mappings,
    });
    expect((await simGet('/field-mappings/3003/person')).status).toBe(404);
  });

  it('forgets faults on POST /reset-faults', async () => {
    await simPost('/faults', { kind: 'failNext', endpoint: 'listJobs', status: 500 });
    expect((await simPost('/reset-faults')).status).toBe(204);
    expect((await call(sim, 'GET', '/import/v1/jobs')).status).toBe(200);
  });

  it('holds a job in processing over HTTP until POST /reset-faults lets it end', async () => {
    const csv = 'Account Name,Account Domain\nAcme,acme.com\n';
    expect((await simPost('/faults', { kind: 'holdProcessing' })).status).toBe(204);
    const held = await createJob(sim);
    const other = await createJob(sim);
    await upload(sim, held.id, csv);
    await upload(sim, other.id, csv);
    // The job accepted after it, not held, has ended.
    expect(await waitForOutcome(sim, other.id)).toMatchObject({ state: 'completed' });
    expect((await simGet(`/jobs/${held.id}`)).body).toMatchObject({ state: 'processing' });
    await simPost('/reset-faults');
    expect(await waitForOutcome(sim, held.id)).toMatchObject({ state: 'completed' });
  });

  it('sets the job outcome and resets counters over HTTP', async () => {
    await simPost('/job-outcome', { outcome: 'failed' });
    const { id } = await createJob(sim);
    // A file the service takes, so the outcome set here is the only reason for the job to fail.
    await upload(sim, id, 'Account Name,Account Domain\nAcme,acme.example\n');
    await simPost('/reset-counters');
    expect(sim.counters().createJob).toBe(0);
    // The upload was taken and, after processing (20 ms, so not asserted mid-way), ended as the outcome said.
    while (sim.job(id)?.state === 'processing') await new Promise((r) => setTimeout(r, 5));
    expect(sim.job(id)).toMatchObject({
      state: 'failed',
      failureReason: 'the simulator was told to fail jobs (setJobOutcome)',
    });
  });

  it.each([
    [{ kind: 'explode' }, 'kind must be one of'],
    [{ kind: 'failNext', endpoint: 'nope', status: 500 }, 'endpoint must name a service endpoint'],
    [{ kind: 'failNext', endpoint: 'listJobs' }, 'status must be a number'],
    [{ kind: 'delayNext', endpoint: 'listJobs', ms: -1 }, 'delayNext ms must be a non-negative number'],
    [{ kind: 'failNext', endpoint: 'listJobs', status: 500, count: 0 }, 'fault count must be a positive integer'],
    [{ kind: 'spellStates', spelling: { pending: 'x' } }, 'spellStates maps'],
    [{ kind: 'refuseUploadOnHeaders', status: 204 }, 'HTTP error status'],
  ])('refuses fault %j with 400 and a one-line reason', async (fault, reason) => {
    const answer = await simPost('/faults', fault);
    expect(answer.status).toBe(400);
    expect((answer.body as { message: string }).message).toContain(reason);
  });

  it('answers 404 for an unknown /__sim path, listing the known ones', async () => {
    const answer = await simGet('/nothing');
    expect(answer.status).toBe(404);
    expect((answer.body as { message: string }).message).toContain('/__sim/requests');
  });
});
