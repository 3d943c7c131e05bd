/**
 * uploadData for one part of a file split into several jobs, on real sockets
 * (s3rver, the service simulator): each part's job receives exactly that
 * part's planned bytes, and a file replaced at its key after the plan never
 * reaches a job, even through an S3 that ignores If-Match and sends no ETag
 * (the regenerated part is checked against its planned size and sha256 before
 * its last bytes leave).
 */

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { planObject } from '../../../activities/check-rows/plan-object.js';
import { detectDialect, type RowPlan } from '../../../activities/rows/index.js';
import { SourceObjectChanged } from '../../../activities/s3/errors.js';
import { S3Source } from '../../../activities/s3/source.js';
import { s3ClientFor } from '../../../worker/demo/local-s3.js';
import type { UploadDataInput } from '../../../workflows/contracts/activities.js';
import { failureOf } from '../../support/activities.js';
import { type S3Proxy, startS3Proxy } from '../s3/s3-proxy.js';
import {
  BUCKET,
  csvBytes,
  etagOf,
  prepareUpload,
  runUpload,
  startWorld,
  type UploadWorld,
  uploadDeps,
} from './environment.js';

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

const MAX_PART_BYTES = 10_000;

/** The plan planRows records for the object as it is now. */
async function planOf(key: string, bytes: Buffer): Promise<RowPlan> {
  const etag = await etagOf(world, key);
  const options = { dialect: detectDialect(bytes), checks: { entityType: 'Account' as const } };
  return planObject(world.source, { bucket: BUCKET, key, etag }, { ...options, maxPartBytes: MAX_PART_BYTES });
}

/** The input of part `n`'s upload to a fresh job. */
async function partInput(base: UploadDataInput, plan: RowPlan, n: number): Promise<UploadDataInput> {
  const part = plan.parts[n - 1]!;
  return {
    ...base,
    jobId: await world.newJobId(),
    sizeBytes: part.bytes,
    rowPlan: plan,
    part: { number: part.number, sha256: part.sha256 },
  };
}

describe('uploadData of one part of a split file', () => {
  it('sends each part its own planned bytes, to its own job', async () => {
    const bytes = csvBytes(30_000);
    const base = await prepareUpload(world, 'split-exact.csv', bytes);
    const plan = await planOf('split-exact.csv', bytes);
    expect(plan.parts.length).toBeGreaterThanOrEqual(3);
    for (const n of [1, 2, 3]) {
      const input = await partInput(base, plan, n);
      await runUpload(uploadDeps(world), input).result;
      const job = world.sim.job(input.jobId)!;
      expect(job.acceptedBodies).toEqual([
        expect.objectContaining({ bytes: plan.parts[n - 1]!.bytes, sha256: plan.parts[n - 1]!.sha256 }),
      ]);
      expect(job.header).toEqual(['Account Name', 'Account Domain']);
    }
  });

  it('a file replaced after the plan, read through an S3 that ignores If-Match: SourceChanged, no body', async () => {
    const bytes = csvBytes(30_000);
    const base = await prepareUpload(world, 'split-replaced.csv', bytes);
    const plan = await planOf('split-replaced.csv', bytes);
    const first = await partInput(base, plan, 1);
    await runUpload(uploadDeps(world), first).result;

    // The same rows, one letter changed in each: the same sizes, other bytes.
    await world.put(
      'split-replaced.csv',
      Buffer.from(csvBytes(30_000).toString('latin1').replaceAll('Company', 'Cumpany')),
    );
    proxy.ignoreIfMatch = true;
    try {
      const second = await partInput(base, plan, 2);
      const err = await failureOf(runUpload(uploadDeps(world, { s3: viaProxy }), second).result);
      expect(err.type).toBe('SourceChanged');
      expect(err.nonRetryable).toBe(true);
      expect(err.message).toContain('part 2 came out as');
      expect(err.message).toContain('no complete body was sent');
      expect(world.sim.job(second.jobId)!.acceptedBodies).toEqual([]);
      expect(world.sim.job(second.jobId)!.uploads).toBe(0);
    } finally {
      proxy.ignoreIfMatch = false;
    }
  });

  it('a file replaced before the pass reads it again (a late refused row) is SourceChanged, never planned', async () => {
    const key = 'replaced-between-reads.csv';
    const bytes = Buffer.concat([csvBytes(3_000), Buffer.from(',nameless.example\n')]);
    await world.put(key, bytes);
    const etag = await etagOf(world, key);
    // The first read sees the old file to its refused last row; the file is replaced before the second.
    let reads = 0;
    const replacing = new (class extends S3Source {
      override async read(...args: Parameters<S3Source['read']>) {
        if (++reads === 1) await world.put(key, Buffer.from(bytes.toString('latin1').replaceAll('Company', 'Cumpany')));
        return super.read(...args);
      }
    })(world.s3.client);
    const options = { dialect: detectDialect(bytes), checks: { entityType: 'Account' as const }, maxPartBytes: 1e9 };
    await expect(planObject(replacing, { bucket: BUCKET, key, etag }, options)).rejects.toBeInstanceOf(
      SourceObjectChanged,
    );
    expect(reads).toBe(1);
  });

  it('refuses an input whose part the plan does not hold, sending nothing', async () => {
    const bytes = csvBytes(30_000);
    const base = await prepareUpload(world, 'split-wrong.csv', bytes);
    const plan = await planOf('split-wrong.csv', bytes);
    const input = { ...(await partInput(base, plan, 2)), part: { number: 2, sha256: plan.parts[0]!.sha256 } };
    const err = await failureOf(runUpload(uploadDeps(world), input).result);
    expect(err.type).toBe('InvalidInput');
    expect(err.message).toContain('which the plan of');
    expect(world.sim.job(input.jobId)!.uploads).toBe(0);
  });
});
