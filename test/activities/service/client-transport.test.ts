import { Readable } from 'node:stream';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ServiceClient } from '../../../activities/service/client.js';
import { Network, Timeout, Unauthorized } from '../../../activities/service/errors.js';
import { answerGraceMs } from '../../../activities/service/upload-body.js';
import { DEMO_TOKENS } from '../../simulator/server.js';
import { closedPort } from '../../support/closed-port.js';
import { fixedToken, type Harness, rejectionOf, startHarness } from './helpers.js';

const CSV_HEAD = Buffer.from('Account Name,Account Domain\n');

/** Yields `first` bytes, then never yields again (a source that stalls) until `release` is called. */
function stallingSource(first: Buffer): { body: AsyncIterable<Uint8Array>; release: () => void } {
  let release = () => {};
  const stalled = new Promise<void>((resolve) => {
    release = resolve;
  });
  async function* body(): AsyncGenerator<Uint8Array> {
    yield first;
    await stalled;
  }
  return { body: body(), release };
}

describe('ServiceClient: timeouts, network failures and aborts', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness();
  });
  afterAll(() => h.close());
  beforeEach(() => h.sim.clearFaults());

  it('a short call that gets no answer within requestTimeoutMs is a Timeout', async () => {
    const client = h.clientWith({ requestTimeoutMs: 100 });
    h.sim.delayNext('listSources', 1_000);
    const e = await rejectionOf(client.listSources('Account'));
    expect(e).toBeInstanceOf(Timeout);
    expect((e as Timeout).serviceMessage).toBe('no complete answer within 100 ms');
  });

  it('a connection dropped after the service applied the request is a Network error', async () => {
    h.sim.applyThenDrop('createJob');
    const before = h.sim.jobs().length;
    const e = await rejectionOf(h.client.createJob({ dataImportName: 'dropped', entityType: 'Account' }));
    expect(e).toBeInstanceOf(Network);
    expect((e as Network).serviceMessage).toMatch(/UND_ERR_SOCKET|ECONNRESET|other side closed/);
    expect(h.sim.jobs().length).toBe(before + 1);
  });

  it('an upload whose connection is reset midway is a Network error and the job stays new', async () => {
    const job = await h.client.createJob({ dataImportName: 'reset', entityType: 'Account' });
    h.sim.resetUploadAfter(64 * 1024);
    const data = Buffer.concat([CSV_HEAD, Buffer.alloc(2 * 1024 * 1024, 0x61)]);
    const e = await rejectionOf(h.client.submitData(job.id, Readable.from([data]), { contentLength: data.length }));
    expect(e).toBeInstanceOf(Network);
    expect(h.sim.job(job.id)?.state).toBe('new');
  });

  it('a 401 answered mid-upload and followed by a reset is the 401, every time (20 runs)', async () => {
    const job = await h.client.createJob({ dataImportName: 'refused mid-body', entityType: 'Account' });
    const data = Buffer.concat([CSV_HEAD, Buffer.alloc(4 * 1024 * 1024, 0x61)]);
    const seen: string[] = [];
    for (let run = 0; run < 20; run++) {
      h.sim.refuseUploadMidBody(256 * 1024);
      // In 16 KiB chunks, as an S3 stream gives them: the client writes on while the answer and the reset arrive.
      const chunks = Array.from({ length: Math.ceil(data.length / 16_384) }, (_, i) =>
        data.subarray(i * 16_384, (i + 1) * 16_384),
      );
      const e = await rejectionOf(h.client.submitData(job.id, Readable.from(chunks), { contentLength: data.length }));
      seen.push(e instanceof Unauthorized ? 'Unauthorized' : `${(e as Error).name}: ${(e as Error).message}`);
    }
    expect(seen).toEqual(Array(20).fill('Unauthorized'));
    expect(h.sim.job(job.id)?.state).toBe('new');
  });

  it('a refused connection is a Network error', async () => {
    const port = await closedPort();
    const client = new ServiceClient({ baseUrl: `http://127.0.0.1:${port}`, tokens: fixedToken(DEMO_TOKENS.importer) });
    try {
      const e = await rejectionOf(client.listSources('Account'));
      expect(e).toBeInstanceOf(Network);
      expect((e as Network).serviceMessage).toMatch(/ECONNREFUSED/);
    } finally {
      await client.close();
    }
  });

  it('an upload whose source stalls fails as a Timeout after the idle time, naming the bytes sent', async () => {
    const client = h.clientWith({ uploadIdleTimeoutMs: 200 });
    const job = await client.createJob({ dataImportName: 'stall', entityType: 'Account' });
    const source = stallingSource(CSV_HEAD);
    try {
      const e = await rejectionOf(client.submitData(job.id, source.body, { contentLength: 1_000_000 }));
      expect(e).toBeInstanceOf(Timeout);
      expect((e as Timeout).serviceMessage).toBe(`no byte moved for 200 ms (${CSV_HEAD.length} of 1000000 bytes sent)`);
      expect(h.sim.job(job.id)?.state).toBe('new');
    } finally {
      source.release();
    }
  });

  it('an upload the service stops reading fails as a Timeout (backpressure counts as idle)', async () => {
    const client = h.clientWith({ uploadIdleTimeoutMs: 300 });
    const job = await client.createJob({ dataImportName: 'peer stall', entityType: 'Account' });
    h.sim.stallUploadAfter(1024);
    const size = 64 * 1024 * 1024;
    async function* endless(): AsyncGenerator<Uint8Array> {
      const chunk = Buffer.alloc(64 * 1024, 0x62);
      yield CSV_HEAD;
      for (let sent = CSV_HEAD.length; sent < size; sent += chunk.length)
        yield chunk.subarray(0, Math.min(chunk.length, size - sent));
    }
    const e = await rejectionOf(client.submitData(job.id, endless(), { contentLength: size }));
    expect(e).toBeInstanceOf(Timeout);
    expect((e as Timeout).serviceMessage).toMatch(/^no byte moved for 300 ms \(\d+ of 67108864 bytes sent\)$/);
  });

  it('an upload that keeps moving slowly is not cut by the idle timeout', async () => {
    // Ten gaps of 100 ms: the whole upload outlasts the idle limit, no single gap does.
    const client = h.clientWith({ uploadIdleTimeoutMs: 600 });
    const job = await client.createJob({ dataImportName: 'slow', entityType: 'Account' });
    const parts = [CSV_HEAD, ...Array.from({ length: 9 }, (_, i) => Buffer.from(`row ${i},example.com\n`))];
    async function* slow(): AsyncGenerator<Uint8Array> {
      for (const part of parts) {
        await new Promise((r) => setTimeout(r, 100));
        yield part;
      }
    }
    const length = parts.reduce((n, p) => n + p.length, 0);
    const answered = await client.submitData(job.id, slow(), { contentLength: length });
    expect(answered.state).toBe('processing');
    expect(h.sim.job(job.id)?.bytesReceived).toBe(length);
  });

  it("a caller's watchdog abort on a stalled upload surfaces as its own reason", async () => {
    const job = await h.client.createJob({ dataImportName: 'watchdog', entityType: 'Account' });
    const source = stallingSource(CSV_HEAD);
    const watchdog = new AbortController();
    const reason = new Error('heartbeat watchdog: upload stalled');
    setTimeout(() => watchdog.abort(reason), 100);
    try {
      const e = await rejectionOf(
        h.client.submitData(job.id, source.body, { contentLength: 1_000, signal: watchdog.signal }),
      );
      expect(e).toBe(reason);
    } finally {
      source.release();
    }
  });

  it('a caller abort of a short call surfaces as the AbortError, not as Network', async () => {
    h.sim.delayNext('jobStatus', 1_000);
    const job = await h.client.createJob({ dataImportName: 'abort', entityType: 'Account' });
    const e = await rejectionOf(h.client.getJob(job.id, { signal: AbortSignal.timeout(50) }));
    expect(e).toBeInstanceOf(DOMException);
    expect((e as DOMException).name).toBe('TimeoutError');
  });

  it('an already aborted signal rejects without sending anything', async () => {
    const before = h.sim.requests().length;
    const ac = new AbortController();
    ac.abort();
    const e = await rejectionOf(h.client.listSources('Account', { signal: ac.signal }));
    expect((e as Error).name).toBe('AbortError');
    expect(h.sim.requests().length).toBe(before);
  });

  it("an error of the upload's source stream surfaces as that error", async () => {
    const job = await h.client.createJob({ dataImportName: 'source fails', entityType: 'Account' });
    const broken = new Error('S3 read failed');
    async function* failing(): AsyncGenerator<Uint8Array> {
      yield CSV_HEAD;
      throw broken;
    }
    expect(await rejectionOf(h.client.submitData(job.id, failing(), { contentLength: 10_000 }))).toBe(broken);
  });

  it('reports every call to onResponse with endpoint, status and error type', async () => {
    const events: { endpoint: string; status?: number; errorType?: string }[] = [];
    const client = h.clientWith({ onResponse: (e) => events.push(e) });
    await client.listSources('Account');
    await rejectionOf(client.getJob('424242'));
    expect(events).toEqual([
      expect.objectContaining({ endpoint: 'listSources', method: 'GET', status: 200, errorType: undefined }),
      expect.objectContaining({ endpoint: 'jobStatus', status: 404, errorType: 'NotFound' }),
    ]);
  });
});

describe('answerGraceMs: how long an upload waits after its first byte for a refusal', () => {
  it('is the configured ceiling until the service has answered a call', () => {
    expect(answerGraceMs(1_000, undefined)).toBe(1_000);
  });

  it('is four times the last answer time, at least 100 ms and at most the ceiling', () => {
    expect(answerGraceMs(1_000, 40)).toBe(160);
    expect(answerGraceMs(1_000, 2)).toBe(100);
    expect(answerGraceMs(1_000, 600)).toBe(1_000);
    expect(answerGraceMs(50, 2)).toBe(50);
  });
});
