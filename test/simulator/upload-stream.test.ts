import { createHash, randomBytes } from 'node:crypto';
import { connect } from 'node:net';
import { Readable } from 'node:stream';
import { afterEach, describe, expect, it } from 'vitest';
import { type Simulator, startSimulator } from './server.js';
import { call, createJob, IMPORTER, until, upload } from './test-client.js';

let sim: Simulator;
afterEach(() => sim?.close());

/** A chunked (no Content-Length) body of `chunks` random 64 KiB pieces, and the sha256 of what it yields. */
function randomStream(chunks: number): { stream: ReadableStream; sha256: () => string; bytes: number } {
  const hash = createHash('sha256');
  let sent = 0;
  const source = Readable.from(
    (function* () {
      yield Buffer.from('Account Name,Account Domain\n');
      hash.update('Account Name,Account Domain\n');
      for (; sent < chunks; sent++) {
        const chunk = randomBytes(64 * 1024);
        hash.update(chunk);
        yield chunk;
      }
    })(),
  );
  return {
    stream: Readable.toWeb(source) as ReadableStream,
    sha256: () => hash.digest('hex'),
    bytes: 28 + chunks * 64 * 1024,
  };
}

function putStream(id: number, body: ReadableStream): Promise<Response> {
  return fetch(`${sim.baseUrl}/import/v1/job/${id}/data?listAction=insert`, {
    method: 'PUT',
    headers: { ...IMPORTER, 'content-type': 'application/octet-stream' },
    body,
    duplex: 'half',
  } as RequestInit);
}

describe('streaming upload', () => {
  it('records the sha256 and byte count of exactly the bytes sent, chunked', async () => {
    sim = await startSimulator();
    const { id } = await createJob(sim);
    const body = randomStream(256);
    const res = await putStream(id, body.stream);
    expect(res.status).toBe(200);
    expect(sim.job(id)).toMatchObject({
      bytesReceived: body.bytes,
      sha256: body.sha256(),
      header: ['Account Name', 'Account Domain'],
      listAction: 'insert',
    });
  });

  it('parses a header whose quoted label holds a comma, a quote and a newline', async () => {
    sim = await startSimulator();
    const { id } = await createJob(sim);
    await upload(sim, id, '"Name, legal","Say ""hi""","Two\nLines"\nA,B,C\n');
    expect(sim.job(id)?.header).toEqual(['Name, legal', 'Say "hi"', 'Two\nLines']);
  });

  it('takes an empty file as a header-less upload', async () => {
    sim = await startSimulator();
    const { id } = await createJob(sim);
    expect((await upload(sim, id, '')).status).toBe(200);
    expect(sim.job(id)).toMatchObject({ bytesReceived: 0, state: 'processing' });
    expect(sim.job(id)?.header).toBeUndefined();
  });
});

describe('upload size limit', () => {
  it('refuses with 400 a Content-Length over maxUploadBytes and leaves the job new', async () => {
    sim = await startSimulator({ maxUploadBytes: 1000 });
    const { id } = await createJob(sim);
    const answer = await upload(sim, id, Buffer.alloc(1001, 0x61));
    expect(answer).toMatchObject({ status: 400, body: { message: expect.stringContaining('1000 bytes') } });
    expect(sim.job(id)).toMatchObject({ state: 'new', uploads: 0 });
  });

  it('accepts exactly maxUploadBytes', async () => {
    sim = await startSimulator({ maxUploadBytes: 1000 });
    const { id } = await createJob(sim);
    expect((await upload(sim, id, Buffer.alloc(1000, 0x61))).status).toBe(200);
  });

  it('refuses with 400 a chunked body that streams past maxUploadBytes', async () => {
    sim = await startSimulator({ maxUploadBytes: 100_000 });
    const { id } = await createJob(sim);
    const res = await putStream(id, randomStream(4).stream);
    expect(res.status).toBe(400);
    expect(sim.job(id)?.state).toBe('new');
  });
});

describe('short body', () => {
  it('records 400 and leaves the job new when the client sends fewer bytes than Content-Length', async () => {
    sim = await startSimulator();
    const { id } = await createJob(sim);
    const { hostname, port } = new URL(sim.baseUrl);
    const socket = connect(Number(port), hostname);
    socket.on('error', () => undefined);
    socket.write(
      `PUT /import/v1/job/${id}/data?listAction=noop HTTP/1.1\r\nHost: sim\r\n` +
        `Authorization: ${IMPORTER.authorization}\r\nContent-Length: 1000\r\n\r\nAccount Name\nAcme\n`,
    );
    await until(() => sim.requests().some((r) => r.endpoint === 'submitData'));
    socket.destroy();
    await until(() => sim.requests().find((r) => r.endpoint === 'submitData')?.status === 400);
    expect(sim.job(id)).toMatchObject({ state: 'new', uploads: 0 });
    // The simulator keeps serving after the aborted upload.
    expect((await call(sim, 'GET', `/import/v1/job/${id}`)).status).toBe(200);
  });
});
