/**
 * The S3 object a job imports: its metadata, its header row and its bytes.
 * Every read after the first look is pinned to the ETag seen then, so a file
 * overwritten in between is reported as changed instead of imported half old,
 * half new. S3 enforces the pin with If-Match; the ETag of every response is
 * compared as well, for S3-compatible servers that ignore If-Match.
 */
import { createReadStream } from 'node:fs';
import type { Readable } from 'node:stream';
import {
  GetObjectCommand,
  type GetObjectCommandOutput,
  HeadBucketCommand,
  HeadObjectCommand,
  ListObjectsV2Command,
  PutObjectCommand,
  type S3Client,
} from '@aws-sdk/client-s3';
import { normaliseEtag } from '../../workflows/contracts/object-version.js';
import { firstRecordEnd } from '../csv/first-record.js';
import {
  HeaderTooLong,
  RangeNotHonoured,
  SourceAccessDenied,
  SourceObjectChanged,
  SourceObjectMissing,
} from './errors.js';

interface ObjectHead {
  sizeBytes: number;
  etag: string;
  versionId?: string;
  contentType?: string;
}

interface PinnedRead {
  etag: string;
  signal?: AbortSignal;
}

export interface RangeRead extends PinnedRead {
  /** First byte, inclusive. */
  start?: number;
  /** Last byte, inclusive (HTTP Range semantics). */
  end?: number;
}

interface HeaderSampleOptions extends PinnedRead {
  /** The first ranged read's size. */
  firstBytes?: number;
  /** Give up (HeaderTooLong) when the header row is longer than this. */
  maxBytes?: number;
}

interface ListObjectsInput {
  bucket: string;
  prefix: string;
  continuationToken?: string;
  maxKeys: number;
  signal?: AbortSignal;
}

interface ListedObject {
  key: string;
  etag: string;
  sizeBytes: number;
  lastModified: string;
}

interface ObjectListing {
  objects: ListedObject[];
  nextContinuationToken?: string;
}

const KiB = 1024;

interface S3ErrorShape {
  name?: string;
  $metadata?: { httpStatusCode?: number };
}

function statusOf(err: unknown): number | undefined {
  return (err as S3ErrorShape | undefined)?.$metadata?.httpStatusCode;
}

function nameOf(err: unknown): string | undefined {
  return (err as S3ErrorShape | undefined)?.name;
}

const bucketMissing = (bucket: string) => `the bucket "${bucket}" does not exist`;

export class S3Source {
  constructor(private readonly client: S3Client) {}

  async head(bucket: string, key: string, signal?: AbortSignal): Promise<ObjectHead> {
    try {
      const out = await this.client.send(new HeadObjectCommand({ Bucket: bucket, Key: key }), { abortSignal: signal });
      if (out.ETag === undefined || out.ContentLength === undefined) {
        throw new Error(`S3 answered HEAD ${bucket}/${key} without an ETag or Content-Length`);
      }
      return {
        sizeBytes: out.ContentLength,
        etag: out.ETag,
        versionId: out.VersionId,
        contentType: out.ContentType,
      };
    } catch (err) {
      const mapped = this.mapError(err, bucket, key);
      // A HEAD answer has no body, so a 404 cannot say whether the bucket or the key is missing: one HeadBucket tells.
      if (mapped instanceof SourceObjectMissing && !(await this.bucketExists(bucket, signal))) {
        throw new SourceObjectMissing(bucket, key, bucketMissing(bucket));
      }
      throw mapped;
    }
  }

  /** False only when S3 says the bucket is not there; anything else (access denied, an outage) claims nothing. */
  private async bucketExists(bucket: string, signal?: AbortSignal): Promise<boolean> {
    try {
      await this.client.send(new HeadBucketCommand({ Bucket: bucket }), { abortSignal: signal });
      return true;
    } catch (err) {
      const name = nameOf(err);
      return !(statusOf(err) === 404 || name === 'NotFound' || name === 'NoSuchBucket');
    }
  }

  /**
   * The bytes of the object's first CSV record (its header row, without the
   * line break): reads a first range and more until the record ends or the
   * object does, and gives up past `maxBytes`. A server that ignores Range
   * sends the whole object: that body is read only as far as the record.
   */
  async headerSample(bucket: string, key: string, options: HeaderSampleOptions): Promise<Uint8Array> {
    const maxBytes = options.maxBytes ?? 1024 * KiB;
    let sample: Uint8Array = new Uint8Array(0);
    let want = Math.min(options.firstBytes ?? 64 * KiB, maxBytes);
    for (;;) {
      const from = sample.length;
      const asked = { start: from, end: from + want - 1 };
      const out = await this.get(bucket, key, { ...options, ...asked });
      const body = out.Body as Readable;
      if (rangeProblem(out, asked) !== undefined) return firstRecordOf(body, bucket, key, maxBytes);
      const chunk = await readAtMost(body, want);
      sample = concat(sample, chunk);
      const end = firstRecordEnd(sample);
      if (end >= 0) return sample.subarray(0, end);
      const total = Number(out.ContentRange?.split('/')[1] ?? Number.NaN);
      const atEnd = chunk.length < want || (Number.isFinite(total) && sample.length >= total);
      if (atEnd) return sample;
      if (sample.length >= maxBytes) throw new HeaderTooLong(bucket, key, maxBytes);
      want = Math.min(sample.length * 2, maxBytes - sample.length);
    }
  }

  /**
   * The object's first `bytes` bytes (fewer when it is shorter), pinned to
   * `etag`: what the row stage detects a file's dialect from. A server that
   * ignores Range sends the whole object: only the start of it is read.
   */
  async firstBytes(bucket: string, key: string, options: PinnedRead & { bytes: number }): Promise<Uint8Array> {
    const out = await this.get(bucket, key, { ...options, start: 0, end: options.bytes - 1 });
    return readAtMost(out.Body as Readable, options.bytes);
  }

  /**
   * The object's bytes (all, or one range), pinned to `etag`; aborting
   * `signal` destroys the stream. A ranged read whose answer is not that
   * range (an S3 that ignores Range answers 200 with the whole object) fails
   * with RangeNotHonoured before a byte of it is read.
   */
  async read(bucket: string, key: string, options: RangeRead): Promise<Readable> {
    return (await this.readSized(bucket, key, options)).body;
  }

  /** `read`, with the size of what it reads as S3 gave it (Content-Length), when it did. */
  async readSized(bucket: string, key: string, options: RangeRead): Promise<{ body: Readable; sizeBytes?: number }> {
    const out = await this.get(bucket, key, options);
    const body = out.Body as Readable;
    if (options.start !== undefined || options.end !== undefined) {
      const asked = { start: options.start ?? 0, end: options.end };
      const problem = rangeProblem(out, asked);
      if (problem !== undefined) {
        body.destroy();
        throw new RangeNotHonoured(bucket, key, `bytes ${asked.start}-${asked.end ?? ''}`, problem);
      }
    }
    const signal = options.signal;
    if (signal) {
      const destroy = () => body.destroy(signal.reason instanceof Error ? signal.reason : undefined);
      if (signal.aborted) destroy();
      else {
        signal.addEventListener('abort', destroy, { once: true });
        body.once('close', () => signal.removeEventListener('abort', destroy));
      }
    }
    return { body, sizeBytes: out.ContentLength };
  }

  /** Whether an object is at `key` (a report written by an earlier attempt). */
  async exists(bucket: string, key: string, signal?: AbortSignal): Promise<boolean> {
    try {
      await this.client.send(new HeadObjectCommand({ Bucket: bucket, Key: key }), { abortSignal: signal });
      return true;
    } catch (err) {
      if (this.mapError(err, bucket, key) instanceof SourceObjectMissing) return false;
      throw this.mapError(err, bucket, key);
    }
  }

  /** Writes a local file of `sizeBytes` to `key` in one PUT (S3 makes it visible whole or not at all). */
  async putFile(bucket: string, key: string, path: string, sizeBytes: number, contentType: string): Promise<void> {
    try {
      await this.client.send(
        new PutObjectCommand({
          Bucket: bucket,
          Key: key,
          Body: createReadStream(path),
          ContentLength: sizeBytes,
          ContentType: contentType,
        }),
      );
    } catch (err) {
      throw this.mapError(err, bucket, key);
    }
  }

  /** One page of the keys under `prefix` (the shape `ObjectLister` of list-feed-objects expects). */
  async listObjects(input: ListObjectsInput): Promise<ObjectListing> {
    const { bucket, prefix } = input;
    try {
      const out = await this.client.send(
        new ListObjectsV2Command({
          Bucket: bucket,
          Prefix: prefix || undefined,
          ContinuationToken: input.continuationToken,
          MaxKeys: input.maxKeys,
        }),
        { abortSignal: input.signal },
      );
      return {
        objects: (out.Contents ?? []).map((o) => ({
          key: o.Key ?? '',
          // Unquoted, like every feed listing: the nightly workflow ids are built from it.
          etag: normaliseEtag(o.ETag ?? ''),
          sizeBytes: o.Size ?? 0,
          lastModified: (o.LastModified ?? new Date(0)).toISOString(),
        })),
        nextContinuationToken: out.IsTruncated ? out.NextContinuationToken : undefined,
      };
    } catch (err) {
      throw this.mapError(err, bucket, prefix);
    }
  }

  private async get(bucket: string, key: string, options: RangeRead): Promise<GetObjectCommandOutput> {
    const { etag, start, end, signal } = options;
    const range = start === undefined && end === undefined ? undefined : `bytes=${start ?? 0}-${end ?? ''}`;
    let out: GetObjectCommandOutput;
    try {
      out = await this.client.send(
        new GetObjectCommand({ Bucket: bucket, Key: key, IfMatch: `"${normaliseEtag(etag)}"`, Range: range }),
        {
          abortSignal: signal,
        },
      );
    } catch (err) {
      throw this.mapError(err, bucket, key, etag);
    }
    if (out.ETag !== undefined && normaliseEtag(out.ETag) !== normaliseEtag(etag)) {
      (out.Body as Readable | undefined)?.destroy();
      throw new SourceObjectChanged(bucket, key, etag, out.ETag);
    }
    return out;
  }

  private mapError(err: unknown, bucket: string, key: string, etag?: string): unknown {
    const status = statusOf(err);
    const name = nameOf(err);
    if (name === 'NoSuchBucket') return new SourceObjectMissing(bucket, key, bucketMissing(bucket));
    if (status === 404 || name === 'NotFound' || name === 'NoSuchKey') {
      return new SourceObjectMissing(bucket, key, 'no such object');
    }
    if (status === 403 || name === 'AccessDenied' || name === 'Forbidden') {
      return new SourceAccessDenied(bucket, key);
    }
    if (etag !== undefined && (status === 412 || name === 'PreconditionFailed')) {
      return new SourceObjectChanged(bucket, key, etag);
    }
    return err;
  }
}

/**
 * Why a ranged answer does not hold the asked range, or undefined when it
 * does: its Content-Range must start at the first byte asked and end at the
 * last one (or at the object's end, for a range past it), and its length must
 * match.
 */
function rangeProblem(out: GetObjectCommandOutput, asked: { start: number; end?: number }): string | undefined {
  const m = /^bytes (\d+)-(\d+)\/(\d+|\*)$/.exec(out.ContentRange ?? '');
  if (!m) {
    return `no Content-Range (HTTP ${out.$metadata.httpStatusCode ?? '?'}, ${out.ContentLength ?? '?'} bytes)`;
  }
  const start = Number(m[1]);
  const end = Number(m[2]);
  const total = m[3] === '*' ? undefined : Number(m[3]);
  const expectedEnd = Math.min(asked.end ?? Number.POSITIVE_INFINITY, (total ?? Number.POSITIVE_INFINITY) - 1);
  if (start !== asked.start || (Number.isFinite(expectedEnd) && end !== expectedEnd)) {
    return `Content-Range ${out.ContentRange}`;
  }
  if (out.ContentLength !== undefined && out.ContentLength !== end - start + 1) {
    return `Content-Range ${out.ContentRange} with ${out.ContentLength} bytes`;
  }
  return undefined;
}

/** At most `limit` bytes of `body`; the rest is not read (the stream is destroyed). */
async function readAtMost(body: Readable, limit: number): Promise<Uint8Array> {
  const chunks: Buffer[] = [];
  let length = 0;
  for await (const chunk of body) {
    const piece = (chunk as Buffer).subarray(0, limit - length);
    chunks.push(piece);
    length += piece.length;
    if (length >= limit) break;
  }
  body.destroy();
  return Buffer.concat(chunks, length);
}

/** The first record of a whole-object body, read only as far as it ends (or `maxBytes`). */
async function firstRecordOf(body: Readable, bucket: string, key: string, maxBytes: number): Promise<Uint8Array> {
  let sample: Uint8Array = new Uint8Array(0);
  try {
    for await (const chunk of body) {
      sample = concat(sample, (chunk as Buffer).subarray(0, maxBytes - sample.length));
      const end = firstRecordEnd(sample);
      if (end >= 0) return sample.subarray(0, end);
      if (sample.length >= maxBytes) throw new HeaderTooLong(bucket, key, maxBytes);
    }
    return sample;
  } finally {
    body.destroy();
  }
}

function concat(a: Uint8Array, b: Uint8Array): Uint8Array {
  const joined = new Uint8Array(a.length + b.length);
  joined.set(a);
  joined.set(b, a.length);
  return joined;
}
