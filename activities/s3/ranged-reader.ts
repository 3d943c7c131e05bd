/**
 * Reads one object as concurrent ranged GETs and emits the bytes in order, as
 * one stream. One S3 connection often carries far less than the PUT it feeds
 * (tens of MB/s against a worker's NIC); a window of parts in flight keeps the
 * PUT busy. The part at the head of the window streams as it arrives; the
 * parts behind it are held until their turn (in reused blocks, held-bytes.ts),
 * and stop reading once the bytes held reach a budget (HeldBytes), so memory
 * stays within that budget whatever the window and the part size.
 *
 * The window is either fixed, or adaptive: it starts at one part and grows
 * whenever the reader of this stream (the PUT) spent more than a small share
 * of its time waiting on S3 (looked at every 2 MiB and at each part's end),
 * in proportion to that wait (nextWindow), up to `maxParts`. When the PUT is
 * the slower side it never waits, and the window stops growing.
 *
 * Each part's answer must hold exactly its range (S3Source.read checks
 * Content-Range, and a part stops reading past its length), so a server that
 * ignores Range fails a part instead of sending the whole object per part.
 */
import { Readable } from 'node:stream';
import { RangeNotHonoured } from './errors.js';
import { BlockPool, HeldBytes, PartBytes } from './held-bytes.js';
import type { S3Source } from './source.js';

/** Ranged reads in flight per upload: a fixed number, or `auto` (adaptive, up to AUTO_MAX_PARTS). */
export type ParallelParts = number | 'auto';

/** The adaptive window's ceiling: 8 connections of tens of MB/s each fill a NIC-sized PUT. */
export const AUTO_MAX_PARTS = 8;

/** Bytes read from S3 ahead of the PUT, across all parts: what an upload's parts hold at most (HeldBytes). */
const HELD_BYTES_BUDGET = 16 * 1024 * 1024;

interface RangedReadOptions {
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
  /** Bytes read ahead of the reader, across parts (default HELD_BYTES_BUDGET). */
  heldBytesBudget?: number;
  /** Told the bytes held each time a chunk arrives, for tests and the benchmark. */
  onHeld?: (bytes: number) => void;
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

/** The reader waited on S3 for more than this share of its time: add parts in flight. */
const GROW_WHEN_WAITING_SHARE = 0.05;

/**
 * The window the PUT's waits ask for. Of `elapsedMs` since the last decision
 * it spent `waitedMs` waiting on S3: it could take bytes
 * elapsedMs / (elapsedMs - waitedMs) times faster than `window` reads
 * delivered them, so that many times the reads are needed (one more at
 * least), up to the ceiling.
 */
export function nextWindow(window: number, elapsedMs: number, waitedMs: number, maxParts: number): number {
  if (window >= maxParts || waitedMs <= elapsedMs * GROW_WHEN_WAITING_SHARE) return window;
  const busyMs = Math.max(elapsedMs - waitedMs, elapsedMs * GROW_WHEN_WAITING_SHARE);
  return Math.min(maxParts, Math.max(window + 1, Math.ceil((window * elapsedMs) / busyMs)));
}

/** The adaptive window is sized again after this many bytes emitted, and at the end of each part. */
const DECIDE_EVERY_BYTES = 2 * 1024 * 1024;

/**
 * How long the reader (the PUT) waited on S3 since the window was last sized.
 * Sampling starts once the reader comes back after the first chunk: waits
 * before it are the connections' start-up, and the PUT holds that chunk while
 * it sends its request head and waits for a refusal, neither a sign of how
 * many reads it needs.
 */
class GrowthSample {
  /** Unset until the reader took its first chunk. */
  private startedAt: number | undefined;
  private waitedMs = 0;
  private bytes = 0;

  waited(ms: number): void {
    if (this.startedAt !== undefined) this.waitedMs += ms;
  }

  /** Counts bytes the reader took; returns the count since the last decision. */
  emitted(bytes: number): number {
    if (this.startedAt === undefined) {
      this.startedAt = performance.now();
      return 0;
    }
    this.bytes += bytes;
    return this.bytes;
  }

  nextWindow(window: number, maxParts: number): number {
    if (this.startedAt === undefined) return window;
    const now = performance.now();
    const asked = nextWindow(window, now - this.startedAt, this.waitedMs, maxParts);
    this.startedAt = now;
    this.waitedMs = 0;
    this.bytes = 0;
    return asked;
  }
}

class ShortPart extends Error {
  override readonly name = 'ShortPart';
}

/** One ranged GET, read as it arrives; its chunks wait here until the part reaches the head of the window. */
class Part {
  private readonly bytes: PartBytes;
  private finished = false;
  private failure: unknown;
  private wake: (() => void) | undefined;
  private atHead = false;

  constructor(
    private readonly describe: string,
    private readonly expectedBytes: number,
    body: Promise<Readable>,
    private readonly held: HeldBytes,
    pool: BlockPool,
    private readonly signal: AbortSignal,
  ) {
    this.bytes = new PartBytes(pool);
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
      this.bytes.push(chunk as Buffer, this.atHead);
      this.held.add((chunk as Buffer).length);
      this.wakeReader();
      if (this.held.full) await this.held.room(() => this.atHead && this.bytes.empty, this.signal);
    }
    if (received !== this.expectedBytes) {
      throw new ShortPart(`S3 returned ${received} bytes for the ${this.describe}`);
    }
  }

  private settle(failure?: unknown): void {
    this.bytes.seal();
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
    this.atHead = true;
    this.held.changed();
    for (;;) {
      const chunk = this.bytes.shift();
      if (chunk) {
        this.held.release(chunk.length, this.bytes.empty);
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
  const held = new HeldBytes(options.heldBytesBudget ?? HELD_BYTES_BUDGET, options.onHeld);
  const pool = new BlockPool();
  parts.signal.addEventListener('abort', () => held.changed(), { once: true });

  async function* inOrder(): AsyncGenerator<Buffer> {
    const window: Part[] = [];
    let windowSize = adaptive ? 1 : maxParts;
    let next = Math.min(sizeBytes, partSizeBytes);
    window.push(
      new Part(`bytes 0-${next - 1} of ${bucket}/${key}`, next, Promise.resolve(firstPart), held, pool, parts.signal),
    );
    const fill = () => {
      while (window.length < windowSize && next < sizeBytes) {
        const start = next;
        const end = Math.min(sizeBytes, start + partSizeBytes) - 1;
        next = end + 1;
        const body = s3.read(bucket, key, { etag, start, end, signal: parts.signal });
        window.push(
          new Part(`bytes ${start}-${end} of ${bucket}/${key}`, end - start + 1, body, held, pool, parts.signal),
        );
      }
    };
    options.onWindow?.(windowSize);
    fill();
    const growth = new GrowthSample();
    while (window.length > 0) {
      const head = window[0]!;
      for await (const chunk of head.drain((ms) => growth.waited(ms))) {
        yield chunk;
        if (growth.emitted(chunk.length) >= DECIDE_EVERY_BYTES) decide();
      }
      window.shift();
      decide();
      fill();
    }

    /** Sizes the window from the PUT's waits since the last decision (adaptive only), and fills it. */
    function decide(): void {
      const asked = adaptive ? growth.nextWindow(windowSize, maxParts) : windowSize;
      if (asked !== windowSize) {
        windowSize = asked;
        options.onWindow?.(windowSize);
        fill();
      }
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
