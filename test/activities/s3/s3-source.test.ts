import { text } from 'node:stream/consumers';
import { setTimeout } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createS3Client } from '../../../activities/s3/client.js';
import { SourceObjectChanged, SourceObjectMissing } from '../../../activities/s3/errors.js';
import { nextWindow, openRangedRead } from '../../../activities/s3/ranged-reader.js';
import { S3Source } from '../../../activities/s3/source.js';
import { S3RVER_CREDENTIALS } from '../../../worker/demo/local-s3.js';
import { BUCKET, csvBytes, etagOf, startWorld, type UploadWorld } from '../upload/environment.js';

let world: UploadWorld;

beforeAll(async () => {
  world = await startWorld();
});

afterAll(async () => {
  await world?.close();
});

describe('S3Source against s3rver', () => {
  it('finds credentials by the default chain (environment variables here)', async () => {
    process.env.AWS_ACCESS_KEY_ID = S3RVER_CREDENTIALS.accessKeyId;
    process.env.AWS_SECRET_ACCESS_KEY = S3RVER_CREDENTIALS.secretAccessKey;
    const source = new S3Source(
      createS3Client({ endpoint: world.s3.endpoint, region: 'us-east-1', forcePathStyle: true }),
    );
    await world.put('chain.csv', 'Email\n');
    expect((await source.head(BUCKET, 'chain.csv')).sizeBytes).toBe(6);
  });

  it('reads one byte range of the pinned version', async () => {
    await world.put('range.csv', 'Email\na@b.c\nd@e.f\n');
    const body = await world.source.read(BUCKET, 'range.csv', {
      etag: await etagOf(world, 'range.csv'),
      start: 6,
      end: 11,
    });
    expect(await text(body)).toBe('a@b.c\n');
  });

  it('refuses a read pinned to an ETag the object no longer has', async () => {
    await world.put('moving.csv', 'Email\n');
    const etag = await etagOf(world, 'moving.csv');
    await world.put('moving.csv', 'Email,Name\n');
    await expect(world.source.read(BUCKET, 'moving.csv', { etag })).rejects.toBeInstanceOf(SourceObjectChanged);
  });

  it('reports a missing object as SourceObjectMissing', async () => {
    await expect(world.source.head(BUCKET, 'nothing-here.csv')).rejects.toBeInstanceOf(SourceObjectMissing);
  });

  it('pages through a prefix with the continuation token', async () => {
    for (let i = 0; i < 5; i++) await world.put(`listing/day-${i}.csv`, `Email\n${i}\n`);
    const keys: string[] = [];
    let continuationToken: string | undefined;
    let pages = 0;
    do {
      const page = await world.source.listObjects({
        bucket: BUCKET,
        prefix: 'listing/',
        continuationToken,
        maxKeys: 2,
      });
      keys.push(...page.objects.map((o) => o.key));
      expect(page.objects.every((o) => /^[0-9a-f]{32}$/.test(o.etag) && o.sizeBytes === 8)).toBe(true);
      continuationToken = page.nextContinuationToken;
      pages++;
    } while (continuationToken !== undefined);
    expect(pages).toBe(3);
    expect(keys).toEqual([0, 1, 2, 3, 4].map((i) => `listing/day-${i}.csv`));
  });

  it('reassembles parallel ranged reads in order', async () => {
    const bytes = csvBytes(1_000_000);
    await world.put('ranged.csv', bytes);
    const stream = await openRangedRead(world.source, BUCKET, 'ranged.csv', {
      etag: await etagOf(world, 'ranged.csv'),
      sizeBytes: bytes.length,
      partSizeBytes: 100_000,
      maxParts: 3,
      adaptive: false,
    });
    const chunks: Buffer[] = [];
    for await (const chunk of stream!) chunks.push(chunk as Buffer);
    expect(Buffer.concat(chunks).equals(bytes)).toBe(true);
  });

  it('holds at most its byte budget (and a chunk per part) ahead of a slow reader, not the parts in flight', async () => {
    const bytes = csvBytes(9_000_000);
    await world.put('held.csv', bytes);
    const budget = 512 * 1024;
    let maxHeld = 0;
    let largestChunk = 0;
    const stream = await openRangedRead(world.source, BUCKET, 'held.csv', {
      etag: await etagOf(world, 'held.csv'),
      sizeBytes: bytes.length,
      partSizeBytes: 1_000_000,
      maxParts: 8,
      adaptive: false,
      heldBytesBudget: budget,
      onHeld: (held) => {
        maxHeld = Math.max(maxHeld, held);
      },
    });
    const chunks: Buffer[] = [];
    for await (const chunk of stream!) {
      chunks.push(chunk as Buffer);
      largestChunk = Math.max(largestChunk, (chunk as Buffer).length);
      // A reader slower than S3: without the budget, the seven parts behind the head would arrive whole (7 MB).
      if (chunks.length % 16 === 1) await setTimeout(10);
    }
    expect(Buffer.concat(chunks).equals(bytes)).toBe(true);
    expect(maxHeld).toBeGreaterThan(0);
    expect(maxHeld).toBeLessThanOrEqual(budget + 8 * largestChunk);
  });

  describe('adaptive window', () => {
    it('asks for as many more reads as the PUT waited, one more at least, up to the ceiling', () => {
      // Waiting 75 of 100 ms: the PUT could take bytes four times as fast as one read gave them.
      expect(nextWindow(1, 100, 75, 8)).toBe(4);
      expect(nextWindow(3, 100, 10, 8)).toBe(4);
      expect(nextWindow(7, 100, 90, 8)).toBe(8);
      // Waits within 5% of the time are noise: the window stays.
      expect(nextWindow(2, 100, 4, 8)).toBe(2);
      expect(nextWindow(8, 100, 90, 8)).toBe(8);
    });

    async function readAdaptively(key: string, bytes: Buffer, consume: (chunk: Buffer) => Promise<void>) {
      await world.put(key, bytes);
      const windows: number[] = [];
      const stream = await openRangedRead(world.source, BUCKET, key, {
        etag: await etagOf(world, key),
        sizeBytes: bytes.length,
        partSizeBytes: 100_000,
        maxParts: 8,
        adaptive: true,
        onWindow: (parts) => windows.push(parts),
      });
      const chunks: Buffer[] = [];
      for await (const chunk of stream!) {
        chunks.push(chunk as Buffer);
        await consume(chunk as Buffer);
      }
      expect(Buffer.concat(chunks).equals(bytes)).toBe(true);
      return windows;
    }

    it('adds a ranged read each time its reader waited on S3, up to the ceiling', async () => {
      const windows = await readAdaptively('adaptive-fast.csv', csvBytes(2_000_000), async () => {});
      expect(windows[0]).toBe(1);
      expect(windows.at(-1)).toBe(8);
      expect(windows).toEqual([...windows].sort((a, b) => a - b));
    });
  });
});
