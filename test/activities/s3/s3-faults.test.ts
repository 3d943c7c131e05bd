/**
 * The S3 side of an upload under faults s3rver does not show by itself: an S3 that ignores Range, a read cut off
 * mid-object, a 403. A small proxy in front of s3rver plays that S3, on a
 * real socket.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { RangeNotHonoured } from '../../../activities/s3/errors.js';
import { S3Source } from '../../../activities/s3/source.js';
import { s3ClientFor } from '../../../worker/demo/local-s3.js';
import { failureOf } from '../../support/activities.js';
import {
  BUCKET,
  csvBytes,
  dataPutsTo,
  etagOf,
  prepareUpload,
  runUpload,
  sha256,
  startWorld,
  type UploadWorld,
  uploadDeps,
  uploadWithRetries,
} from '../upload/environment.js';
import { type S3Proxy, startS3Proxy } from './s3-proxy.js';

let world: UploadWorld;
let proxy: S3Proxy;
let viaProxy: S3Source;

beforeAll(async () => {
  world = await startWorld();
  proxy = await startS3Proxy(world.s3.endpoint);
  viaProxy = new S3Source(s3ClientFor(proxy.endpoint));
});

afterAll(async () => {
  await proxy?.close();
  await world?.close();
});

beforeEach(() => {
  proxy.ignoreRange = false;
});

const MiB = 1024 * 1024;
const BIG = csvBytes(32 * MiB);

const prepare = (key: string, bytes: Buffer) => prepareUpload(world, key, bytes);

const puts = (jobId: string) => dataPutsTo(world, jobId);

describe('an S3 that ignores Range', () => {
  it('reads the header row of a big object without pulling the whole object', async () => {
    await world.put('big-header.csv', BIG);
    proxy.ignoreRange = true;
    const before = proxy.bytesDelivered();

    const header = await viaProxy.headerSample(BUCKET, 'big-header.csv', {
      etag: await etagOf(world, 'big-header.csv'),
    });

    expect(Buffer.from(header).toString()).toBe('Account Name,Account Domain');
    expect(proxy.bytesDelivered() - before).toBeLessThan(BIG.length / 4);
  });

  it('refuses a ranged read answered with the whole object, before reading it', async () => {
    await world.put('big-range.csv', BIG);
    proxy.ignoreRange = true;
    const before = proxy.bytesDelivered();

    const read = viaProxy.read(BUCKET, 'big-range.csv', {
      etag: await etagOf(world, 'big-range.csv'),
      start: 1024,
      end: 2047,
    });

    await expect(read).rejects.toBeInstanceOf(RangeNotHonoured);
    expect(proxy.bytesDelivered() - before).toBeLessThan(BIG.length / 4);
  });

  it('uploads byte for byte with one sequential GET when parallel ranged reads are configured', async () => {
    const bytes = csvBytes(4 * MiB);
    const input = await prepare('ignored-range.csv', bytes);
    proxy.ignoreRange = true;
    const deps = uploadDeps(world, { s3: viaProxy, parallelParts: 4, partSizeBytes: 256 * 1024 });

    const run = await uploadWithRetries(deps, input);

    expect(run.failure).toBeUndefined();
    expect(run.result).toMatchObject({ skipped: false, bytesSent: bytes.length });
    expect(world.sim.job(input.jobId)).toMatchObject({ uploads: 1, sha256: sha256(bytes) });
    expect(puts(input.jobId)).toBe(1);
  });
});

describe('S3 failures during an upload come back typed and named right', () => {
  it('a read cut off mid-object is a retryable SourceReadFailed; the retry uploads the file once', async () => {
    const bytes = csvBytes(4 * MiB);
    const input = await prepare('cut-read.csv', bytes);
    proxy.cutNextGetAfter(MiB);
    const deps = uploadDeps(world, { s3: viaProxy });

    const first = await failureOf(runUpload(deps, input).result);
    expect(first.type).toBe('SourceReadFailed');
    expect(first.nonRetryable).toBe(false);
    expect(first.message).toContain(`s3://${BUCKET}/cut-read.csv`);

    const run = await uploadWithRetries(deps, input);
    expect(run.result).toMatchObject({ skipped: false, bytesSent: bytes.length });
    expect(world.sim.job(input.jobId)).toMatchObject({ uploads: 1, sha256: sha256(bytes) });
  });

  it('a 403 from S3 is SourceAccessDenied, not a file "removed after it was inspected", and sends nothing', async () => {
    const input = await prepare('denied.csv', csvBytes(200_000));
    proxy.refuseNextGet();

    const err = await failureOf(runUpload(uploadDeps(world, { s3: viaProxy }), input).result);

    expect(err.type).toBe('SourceAccessDenied');
    expect(err.nonRetryable).toBe(true);
    expect(err.message).toContain('access denied');
    expect(err.message).not.toContain('removed');
    expect(puts(input.jobId)).toBe(0);
  });
});
