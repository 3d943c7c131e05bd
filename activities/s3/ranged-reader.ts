/**
 * Reads one object as a few concurrent ranged GETs and emits the parts in
 * order, as one stream. A single S3 connection is often slower than the PUT
 * it feeds; a bounded window of parallel parts keeps the PUT busy while
 * holding at most `parallelParts x partSizeBytes` in memory.
 *
 * Each part's answer must hold exactly its range (S3Source.read checks
 * Content-Range), so a server that ignores Range fails a part instead of
 * sending the whole object per part; the caller probes for that first.
 *
 * Opt-in (UPLOAD_PARALLEL_PARTS > 1): on loopback against s3rver, where CPU
 * and not one connection is the limit, the single GET measured faster in
 * `npm run bench:upload`, so the default is one sequential GET.
 */
import { Readable } from 'node:stream';
import type { S3Source } from './source.js';

export interface RangedReadOptions {
  etag: string;
  sizeBytes: number;
  partSizeBytes: number;
  /** Parts fetched or held at once, the one being emitted included. */
  parallelParts: number;
  signal?: AbortSignal;
}

class ShortPart extends Error {
  override readonly name = 'ShortPart';
}

async function fetchPart(
  s3: S3Source,
  bucket: string,
  key: string,
  etag: string,
  start: number,
  end: number,
  signal: AbortSignal,
): Promise<Buffer[]> {
  const body = await s3.read(bucket, key, { etag, start, end, signal });
  const chunks: Buffer[] = [];
  let length = 0;
  const expected = end - start + 1;
  for await (const chunk of body) {
    chunks.push(chunk as Buffer);
    length += (chunk as Buffer).length;
    // Never hold more than the part: a body longer than its range is not read on.
    if (length > expected) break;
  }
  if (length !== expected) {
    body.destroy();
    throw new ShortPart(`S3 returned ${length} bytes for bytes ${start}-${end} of ${bucket}/${key}`);
  }
  return chunks;
}

export function readRanged(s3: S3Source, bucket: string, key: string, options: RangedReadOptions): Readable {
  const { etag, sizeBytes, partSizeBytes, parallelParts } = options;
  const parts = new AbortController();
  const stopParts = () => parts.abort(options.signal?.reason);
  options.signal?.addEventListener('abort', stopParts, { once: true });

  async function* inOrder(): AsyncGenerator<Buffer> {
    const window: Promise<Buffer[]>[] = [];
    let next = 0;
    const launch = () => {
      if (next >= sizeBytes) return;
      const start = next;
      const end = Math.min(sizeBytes, start + partSizeBytes) - 1;
      next = end + 1;
      const part = fetchPart(s3, bucket, key, etag, start, end, parts.signal);
      // A part behind a failed one is abandoned; its rejection must not go unhandled.
      part.catch(() => {});
      window.push(part);
    };
    while (window.length < parallelParts && next < sizeBytes) launch();
    while (window.length > 0) {
      const chunks = await window.shift()!;
      while (chunks.length > 0) yield chunks.shift()!;
      // Only now: the part just emitted counted against the window until it left.
      launch();
    }
  }

  const stream = Readable.from(inOrder(), { objectMode: false });
  stream.once('close', () => {
    options.signal?.removeEventListener('abort', stopParts);
    parts.abort();
  });
  return stream;
}
