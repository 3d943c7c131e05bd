/**
 * Reads one object as concurrent ranged GETs and emits the bytes in order, as
 * one stream. One S3 connection often carries far less than the PUT it feeds
 * (tens of MB/s against a worker's NIC); a window of parts in flight keeps the
 * PUT busy. The part at the head of the window streams as it arrives; the
 * parts behind it are held until their turn, so memory stays within
 * `window x partSizeBytes`.
 *
 * The window is either fixed, or adaptive: it starts at one part and grows by
 * one each time the reader of this stream (the PUT) spent more than a small
 * share of a part's time waiting on S3, up to `maxParts`. When the PUT is the
 * slower side it never waits, and the window stops growing.
 *
 * Each part's answer must hold exactly its range (S3Source.read checks
 * Content-Range, and a part stops reading past its length), so a server that
 * ignores Range fails a part instead of sending the whole object per part.
 */
import { Readable } from 'node:stream';
import { RangeNotHonoured } from './errors.js';
import type { S3Source } from './source.js';

/** Ranged reads in flight per upload: a fixed number, or `auto` (adaptive, up to AUTO_MAX_PARTS). */
export type ParallelParts = number | 'auto';

/** The adaptive window's ceiling: 8 parts of the default 8 MiB keep an upload's buffers within 64 MiB. */
export const AUTO_MAX_PARTS = 8;

export interface RangedReadOptions {
  etag: string;
  sizeBytes: number;
  partSizeBytes: number;
  /** Parts fetched or held at once, the one being emitted included: the ceiling when adaptive. */
  maxParts: number;
  /** Start with one part in flight and add one while the reader waits on S3. */
  adaptive: boolean;
  signal?: AbortSignal;
  /** Told each time the window changes, for logs and the benchmark. */
  onWindow?: (parts: number) => void;
}

/**
 * Opens the object as parallel ranged reads, or returns undefined when the
 * server does not honour Range. The first part's own answer tells (no probe
 * of its own): a server that ignores Range answers it with the whole object,
 * which S3Source.read refuses before a byte of it is read.
 */
export async function openRangedRead(
  s3: S3Source,
  bucket: string,
  key: string,
  options: RangedReadOptions,
): Promise<Readable | undefined> {
  const { etag, sizeBytes, partSizeBytes, signal } = options;
  let firstPart: Readable;
  try {
    firstPart = await s3.read(bucket, key, { etag, signal, start: 0, end: Math.min(sizeBytes, partSizeBytes) - 1 });
  } catch (err) {
    if (err instanceof RangeNotHonoured) return undefined;
    throw err;
  }
  return readRanged(s3, bucket, key, firstPart, options);
}

/** The reader waited on S3 for more than this share of a part's time: add a part in flight. */
const GROW_WHEN_WAITING_SHARE = 0.05;

class ShortPart extends Error {
  override readonly name = 'ShortPart';
}

/** One ranged GET, read as it arrives; its chunks wait here until the part reaches the head of the window. */
class Part {
  private readonly chunks: Buffer[] = [];
  private finished = false;
  private failure: unknown;
  private wake: (() => void) | undefined;

  constructor(
    private readonly describe: string,
    private readonly expectedBytes: number,
    body: Promise<Readable>,
  ) {
    this.fill(body).then(
      () => this.settle(),
      (err: unknown) => this.settle(err),
    );
  }

  private async fill(body: Promise<Readable>): Promise<void> {
    let received = 0;
    for await (const chunk of await body) {
      received += (chunk as Buffer).length;
      // An S3 that ignores Range sends the whole object: stop at once rather than hold it.
      if (received > this.expectedBytes) throw new ShortPart(`S3 sent more than the ${this.describe}`);
      this.chunks.push(chunk as Buffer);
      this.wakeReader();
    }
    if (received !== this.expectedBytes) {
      throw new ShortPart(`S3 returned ${received} bytes for the ${this.describe}`);
    }
  }

  private settle(failure?: unknown): void {
    this.finished = true;
    this.failure = failure;
    this.wakeReader();
  }

  private wakeReader(): void {
    const wake = this.wake;
    this.wake = undefined;
    wake?.();
  }

  /** Yields the part's chunks in order; `waited` is told how long each wait for S3 took. */
  async *drain(waited: (ms: number) => void): AsyncGenerator<Buffer> {
    for (;;) {
      const chunk = this.chunks.shift();
      if (chunk) {
        yield chunk;
        continue;
      }
      if (this.failure !== undefined) throw this.failure;
      if (this.finished) return;
      const since = performance.now();
      await new Promise<void>((resolve) => {
        this.wake = resolve;
      });
      waited(performance.now() - since);
    }
  }
}

/** The object as ranged reads in order, `firstPart` (bytes 0 to one part) already open. */
function readRanged(
  s3: S3Source,
  bucket: string,
  key: string,
  firstPart: Readable,
  options: RangedReadOptions,
): Readable {
  const { etag, sizeBytes, partSizeBytes, maxParts, adaptive } = options;
  const parts = new AbortController();
  const stopParts = () => parts.abort(options.signal?.reason);
  options.signal?.addEventListener('abort', stopParts, { once: true });

  async function* inOrder(): AsyncGenerator<Buffer> {
    const window: Part[] = [];
    let windowSize = adaptive ? 1 : maxParts;
    let next = Math.min(sizeBytes, partSizeBytes);
    window.push(new Part(`bytes 0-${next - 1} of ${bucket}/${key}`, next, Promise.resolve(firstPart)));
    const fill = () => {
      while (window.length < windowSize && next < sizeBytes) {
        const start = next;
        const end = Math.min(sizeBytes, start + partSizeBytes) - 1;
        next = end + 1;
        const body = s3.read(bucket, key, { etag, start, end, signal: parts.signal });
        window.push(new Part(`bytes ${start}-${end} of ${bucket}/${key}`, end - start + 1, body));
      }
    };
    options.onWindow?.(windowSize);
    fill();
    // The first part's wait is the connection's start-up, not a sign the window is too small.
    let startingUp = true;
    while (window.length > 0) {
      const head = window[0]!;
      const started = performance.now();
      let waitedMs = 0;
      yield* head.drain((ms) => {
        waitedMs += ms;
      });
      window.shift();
      const partMs = performance.now() - started;
      if (adaptive && !startingUp && windowSize < maxParts && waitedMs > partMs * GROW_WHEN_WAITING_SHARE) {
        windowSize++;
        options.onWindow?.(windowSize);
      }
      startingUp = false;
      fill();
    }
  }

  const stream = Readable.from(inOrder(), { objectMode: false });
  stream.once('close', () => {
    options.signal?.removeEventListener('abort', stopParts);
    parts.abort();
    firstPart.destroy();
  });
  return stream;
}
