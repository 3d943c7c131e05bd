import { randomBytes } from 'node:crypto';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type Simulator, startSimulator } from './server.js';
import { abortableUpload, call, createJob, IMPORTER, until, upload } from './test-client.js';

let sim: Simulator;
beforeEach(async () => {
  sim = await startSimulator({ processingMs: 20 });
});
afterEach(() => sim.close());

const CREATE = { dataImportName: 'accounts', entityType: 'Account' };

describe('failNext', () => {
  it('answers the injected status with the import-path body, applies nothing and counts nothing', async () => {
    sim.failNext('createJob', 500);
    const answer = await call(sim, 'POST', '/import/v1/job', { body: CREATE });
    expect(answer).toMatchObject({ status: 500, body: { message: expect.any(String) } });
    expect(sim.jobs()).toEqual([]);
    expect(sim.counters().createJob).toBe(0);
    expect((await call(sim, 'POST', '/import/v1/job', { body: CREATE })).status).toBe(200);
  });

  it('uses the {status} body for 401/403, the spec object for 429 and the error envelope on mapping paths', async () => {
    sim.failNext('jobStatus', 401);
    sim.failNext('listJobs', 429);
    sim.failNext('getFieldMappings', 500);
    expect((await call(sim, 'GET', '/import/v1/job/1')).body).toEqual({ status: expect.any(String) });
    expect((await call(sim, 'GET', '/import/v1/jobs')).body).toEqual({
      errorCode: '429-101',
      errorMessage: expect.any(String),
      diagnosticCode: expect.any(String),
    });
    const mapping = await call(sim, 'GET', '/integration/v1/custom-sources/1001/field-mappings/account');
    expect(mapping).toMatchObject({ status: 500, body: { error: { code: '500-001' } } });
  });

  it('answers a given body and content type, e.g. a 429-100 concurrency refusal or an HTML 502', async () => {
    const body = { errorCode: '429-100', errorMessage: 'Concurrent-query limit', diagnosticCode: 'd1' };
    sim.failNext('jobStatus', 429, { body });
    sim.failNext('jobStatus', 502, { body: '<html>bad gateway</html>', contentType: 'text/html' });
    expect(await call(sim, 'GET', '/import/v1/job/1')).toMatchObject({ status: 429, body });
    expect(await call(sim, 'GET', '/import/v1/job/1')).toMatchObject({ status: 502, text: '<html>bad gateway</html>' });
  });

  it('applies to the next `count` requests, then stops', async () => {
    sim.failNext('listJobs', 503, { count: 2 });
    const statuses = [];
    for (let i = 0; i < 3; i++) statuses.push((await call(sim, 'GET', '/import/v1/jobs')).status);
    expect(statuses).toEqual([503, 503, 200]);
  });

  it('refuses an upload without taking the data', async () => {
    const { id } = await createJob(sim);
    sim.failNext('submitData', 500);
    expect((await upload(sim, id, 'a\n1\n')).status).toBe(500);
    expect(sim.job(id)).toMatchObject({ state: 'new', uploads: 0 });
    expect((await upload(sim, id, 'a\n1\n')).status).toBe(200);
  });

  it('is forgotten by clearFaults', async () => {
    sim.failNext('listJobs', 500);
    sim.clearFaults();
    expect((await call(sim, 'GET', '/import/v1/jobs')).status).toBe(200);
  });

  it('refuses a status that is no HTTP status', () => {
    expect(() => sim.failNext('listJobs', 42)).toThrow('failNext status must be an HTTP status code');
  });
});

describe('delayNext', () => {
  it('applies the request at once and holds the answer back', async () => {
    sim.delayNext('createJob', 600_000);
    const abort = new AbortController();
    let settled = false;
    const pending = fetch(`${sim.baseUrl}/import/v1/job`, {
      method: 'POST',
      headers: { ...IMPORTER, 'content-type': 'application/json' },
      body: JSON.stringify(CREATE),
      signal: abort.signal,
    }).finally(() => {
      settled = true;
    });
    await until(() => sim.jobs().length === 1);
    expect(settled).toBe(false);
    abort.abort();
    await expect(pending).rejects.toThrow();
  });

  it('answers normally once the delay has passed', async () => {
    sim.delayNext('jobStatus', 20);
    expect((await call(sim, 'GET', '/import/v1/job/1')).status).toBe(404);
  });
});

describe('applyThenDrop', () => {
  it('creates the job but the client sees a socket error instead of an answer', async () => {
    sim.applyThenDrop('createJob');
    await expect(call(sim, 'POST', '/import/v1/job', { body: CREATE })).rejects.toThrow();
    expect(sim.jobs()).toHaveLength(1);
    expect(sim.jobs()[0]).toMatchObject({ state: 'new', dataImportName: 'accounts' });
  });

  it('accepts the upload but the client sees a socket error; a retry then gets 400', async () => {
    const { id } = await createJob(sim);
    sim.applyThenDrop('submitData');
    await expect(upload(sim, id, 'a\n1\n')).rejects.toThrow();
    expect(sim.job(id)).toMatchObject({ uploads: 1 });
    expect(sim.job(id)?.state).not.toBe('new');
    expect((await upload(sim, id, 'a\n1\n')).status).toBe(400);
  });
});

describe('resetUploadAfter', () => {
  it('destroys the socket mid-body; the job stays new and a retry succeeds', async () => {
    const { id } = await createJob(sim);
    sim.resetUploadAfter(1000);
    const data = Buffer.concat([Buffer.from('a\n'), randomBytes(256 * 1024)]);
    await expect(upload(sim, id, data)).rejects.toThrow();
    expect(sim.job(id)).toMatchObject({ state: 'new', uploads: 0, bytesReceived: 0 });
    expect((await upload(sim, id, data)).status).toBe(200);
    expect(sim.job(id)?.bytesReceived).toBe(data.length);
  });
});

describe('stallUploadAfter', () => {
  it('stops reading the body: the upload never gets an answer and the job stays new', async () => {
    const { id } = await createJob(sim);
    sim.stallUploadAfter(1000);
    let settled = false;
    const pending = upload(sim, id, randomBytes(16 * 1024 * 1024)).finally(() => {
      settled = true;
    });
    await until(() => sim.requests().some((r) => r.endpoint === 'submitData'));
    expect(settled).toBe(false);
    expect(sim.job(id)?.state).toBe('new');
    await sim.close();
    await expect(pending).rejects.toThrow();
  });
});

describe('holdUploadAfter', () => {
  it('stops reading the body until released, then reads on: the whole body is taken and noted', async () => {
    const { id } = await createJob(sim);
    const data = randomBytes(16 * 1024 * 1024);
    sim.holdUploadAfter(1000);
    let settled = false;
    const pending = upload(sim, id, data).finally(() => {
      settled = true;
    });
    await until(() => sim.requests().some((r) => r.endpoint === 'submitData'));
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(settled).toBe(false);
    expect(sim.job(id)?.state).toBe('new');
    sim.releaseHeldUploads();
    expect((await pending).status).toBe(200);
    expect(sim.job(id)?.bytesReceived).toBe(data.length);
    const put = sim.requests().find((r) => r.endpoint === 'submitData');
    expect(put).toMatchObject({ status: 200, body: { bytes: data.length, declared: data.length } });
    await until(() => sim.requests().find((r) => r.endpoint === 'submitData')?.bodyComplete !== undefined);
    expect(sim.requests().find((r) => r.endpoint === 'submitData')?.bodyComplete).toBe(true);
  });

  it('notes a body that ended short: the bytes read, of those declared, and not complete', async () => {
    const { id } = await createJob(sim);
    sim.holdUploadAfter(1000);
    const { pending, abort } = abortableUpload(sim, id, randomBytes(16 * 1024 * 1024));
    await until(() => sim.requests().some((r) => r.endpoint === 'submitData'));
    abort();
    await expect(pending).rejects.toThrow();
    sim.releaseHeldUploads();
    await until(() => sim.requests().find((r) => r.endpoint === 'submitData')?.body !== undefined);
    const put = sim.requests().find((r) => r.endpoint === 'submitData');
    expect(put?.bodyComplete).toBe(false);
    expect(put?.body?.declared).toBe(16 * 1024 * 1024);
    expect(put?.body?.bytes).toBeLessThan(16 * 1024 * 1024);
    expect(sim.job(id)).toMatchObject({ state: 'new', uploads: 0 });
  });
});

describe('commitUploadLate', () => {
  it('keeps the job new for a while, then takes the body even when the client went away', async () => {
    const { id } = await createJob(sim);
    sim.commitUploadLate(300);
    const { pending, abort } = abortableUpload(sim, id, 'a\n1\n');
    await until(() => sim.requests().some((r) => r.endpoint === 'submitData' && r.body !== undefined));
    expect(sim.job(id)?.state).toBe('new');
    abort();
    await expect(pending).rejects.toThrow();
    await until(() => sim.job(id)?.state !== 'new');
    expect(sim.job(id)).toMatchObject({ uploads: 1, bytesReceived: 4 });
  });
});

describe('onRequest', () => {
  it('tells of each request as it arrives, before its body is read', async () => {
    const seen: string[] = [];
    const stop = sim.onRequest((r) => seen.push(`${r.method} ${r.endpoint} ${r.status}`));
    await createJob(sim);
    stop();
    await createJob(sim);
    expect(seen).toEqual(['POST createJob 0']);
  });
});

describe('commitUploadOnAnswer', () => {
  it('answers late and takes the data when the client is still there', async () => {
    const { id } = await createJob(sim);
    sim.commitUploadOnAnswer(50);
    expect((await upload(sim, id, 'a\n1\n')).status).toBe(200);
    expect(sim.job(id)).toMatchObject({ state: 'processing', uploads: 1 });
  });

  it('takes nothing when the client went away before the answer', async () => {
    const { id } = await createJob(sim);
    sim.commitUploadOnAnswer(200);
    const { pending, abort } = abortableUpload(sim, id, 'a\n1\n');
    await until(() => sim.requests().some((r) => r.endpoint === 'submitData'));
    abort();
    await expect(pending).rejects.toThrow();
    await until(() => sim.requests().find((r) => r.endpoint === 'submitData')?.status === 0);
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(sim.job(id)).toMatchObject({ state: 'new', uploads: 0 });
  });
});

describe('answerUploadEarly', () => {
  it('takes the first bytes as the file, answers 200 and stops reading', async () => {
    const { id } = await createJob(sim);
    sim.answerUploadEarly(1000);
    const data = Buffer.concat([Buffer.from('a\n'), randomBytes(4 * 1024 * 1024)]);
    await upload(sim, id, data).catch(() => undefined);
    await until(() => sim.requests().some((r) => r.endpoint === 'submitData' && r.status === 200));
    const job = sim.job(id)!;
    // Taken as the file: the job left `new`. Where it went after that is the job's own business: it processes
    // for 20 ms, and its few random bytes lack the required labels, so a slow check sees it failed.
    expect(job.uploads).toBe(1);
    expect(job.state).not.toBe('new');
    expect(job.bytesReceived).toBeGreaterThanOrEqual(1000);
    expect(job.bytesReceived).toBeLessThan(data.length);
  });
});

describe('refuseUploadOnHeaders', () => {
  it('answers from the headers alone, reads no body and takes nothing', async () => {
    const { id } = await createJob(sim);
    sim.refuseUploadOnHeaders(403);
    const answer = await upload(sim, id, 'a\n1\n');
    expect(answer).toMatchObject({ status: 403, body: { status: expect.any(String) } });
    expect(sim.job(id)).toMatchObject({ state: 'new', uploads: 0 });
    expect(sim.counters().submitData).toBe(0);
  });

  it('refuses only error statuses', () => {
    expect(() => sim.refuseUploadOnHeaders(200)).toThrow('HTTP error status');
  });
});

describe('spellStates', () => {
  it('shows the next job answers in the given spelling, then the spec spelling again', async () => {
    const { id } = await createJob(sim);
    sim.spellStates({ new: 'New' });
    sim.spellStates({ new: 'queued' });
    const states = [];
    for (let i = 0; i < 3; i++)
      states.push(((await call(sim, 'GET', `/import/v1/job/${id}`)).body as { state: string }).state);
    expect(states).toEqual(['New', 'queued', 'new']);
  });

  it('refuses a spelling of a state that does not exist', () => {
    expect(() => sim.spellStates({ bogus: 'x' } as never)).toThrow('spellStates maps');
  });
});
