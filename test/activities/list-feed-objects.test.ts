import { PutObjectCommand } from '@aws-sdk/client-s3';
import { ApplicationFailure } from '@temporalio/common';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeListFeedObjects } from '../../activities/list-feed-objects.js';
import { S3Source } from '../../activities/s3/source.js';
import { type LocalS3, startLocalS3 } from '../../worker/demo/local-s3.js';
import type { FeedObject } from '../../workflows/contracts/activities.js';

const BUCKET = 'feeds';
let s3: LocalS3;
let listFeedObjects: ReturnType<typeof makeListFeedObjects>;

async function put(key: string, body: string): Promise<void> {
  await s3.client.send(new PutObjectCommand({ Bucket: BUCKET, Key: key, Body: body }));
}

beforeAll(async () => {
  s3 = await startLocalS3({ buckets: [BUCKET] });
  listFeedObjects = makeListFeedObjects({ s3: new S3Source(s3.client) });
  for (let i = 0; i < 7; i++) await put(`accounts/2026-11-${String(10 + i)}.csv`, `Account Name\nA${i}\n`);
  await put('accounts/README.txt', 'not a feed file');
  await put('accounts/archive/', '');
  await put('people/2026-11-10.csv', 'First Name\n');
});

afterAll(async () => {
  await s3?.close();
});

async function listAll(
  pattern: string | undefined,
  maxKeys: number,
): Promise<{ pages: number; objects: FeedObject[] }> {
  const objects: FeedObject[] = [];
  let token: string | undefined;
  let pages = 0;
  do {
    const page = await listFeedObjects({
      bucket: BUCKET,
      prefix: 'accounts/',
      pattern,
      continuationToken: token,
      maxKeys,
    });
    objects.push(...page.objects);
    token = page.nextContinuationToken;
    pages += 1;
  } while (token !== undefined);
  return { pages, objects };
}

describe('listFeedObjects against s3rver', () => {
  it('pages through the prefix with the continuation token, each object once', async () => {
    const { pages, objects } = await listAll(undefined, 3);
    expect(pages).toBe(3);
    expect(objects.map((o) => o.key)).toEqual([
      'accounts/2026-11-10.csv',
      'accounts/2026-11-11.csv',
      'accounts/2026-11-12.csv',
      'accounts/2026-11-13.csv',
      'accounts/2026-11-14.csv',
      'accounts/2026-11-15.csv',
      'accounts/2026-11-16.csv',
      'accounts/README.txt',
    ]);
  });

  it('keeps only keys whose part after the prefix matches the pattern, across pages', async () => {
    const { objects } = await listAll('^\\d{4}-\\d{2}-\\d{2}\\.csv$', 2);
    expect(objects).toHaveLength(7);
    expect(objects.every((o) => o.key.endsWith('.csv'))).toBe(true);
  });

  it('reports each object with its unquoted ETag, size and modification time', async () => {
    const { objects } = await listAll('^2026-11-10\\.csv$', 1000);
    expect(objects).toHaveLength(1);
    const [object] = objects;
    expect(object?.etag).toMatch(/^[0-9a-f]{32}$/);
    expect(object?.sizeBytes).toBe('Account Name\nA0\n'.length);
    expect(Number.isNaN(Date.parse(object?.lastModified ?? ''))).toBe(false);
  });

  it('returns no continuation token on the last page', async () => {
    const page = await listFeedObjects({ bucket: BUCKET, prefix: 'people/', maxKeys: 10 });
    expect(page).toEqual({ objects: [expect.objectContaining({ key: 'people/2026-11-10.csv' })] });
  });

  it('fails with a non-retryable SourceNotFound when the bucket does not exist', async () => {
    const err = await listFeedObjects({ bucket: 'no-such-bucket', prefix: '', maxKeys: 10 }).catch((e) => e);
    expect(err).toBeInstanceOf(ApplicationFailure);
    expect(err).toMatchObject({ type: 'SourceNotFound', nonRetryable: true });
  });

  it('fails with a non-retryable InvalidInput naming a broken pattern', async () => {
    const err = await listFeedObjects({ bucket: BUCKET, prefix: '', pattern: '([', maxKeys: 10 }).catch((e) => e);
    expect(err).toMatchObject({ type: 'InvalidInput', nonRetryable: true });
    expect(err.message).toContain('"(["');
  });
});
