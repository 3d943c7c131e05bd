/**
 * The listFeedObjects activity: one page of a feed's prefix, filtered by the
 * feed's key pattern. The workflow pages through with the continuation token,
 * so no run ever holds a whole bucket listing.
 */
import { ListObjectsV2Command, type S3Client, S3ServiceException } from '@aws-sdk/client-s3';
import type {
  FeedObject,
  ListFeedObjectsInput,
  ListFeedObjectsResult,
} from '../workflows/policy/activity-contracts.js';
import { normaliseEtag } from '../workflows/policy/nightly.js';
import { failure } from './failures.js';

export interface ListObjectsPageInput {
  bucket: string;
  prefix: string;
  continuationToken?: string;
  maxKeys: number;
}

export interface ListObjectsPage {
  objects: FeedObject[];
  nextContinuationToken?: string;
}

/** What this activity needs from the S3 source. */
export interface ObjectLister {
  listObjects(input: ListObjectsPageInput): Promise<ListObjectsPage>;
}

/** S3 allows at most 1,000 keys a page. */
const MAX_KEYS_LIMIT = 1000;

export function makeListFeedObjects(deps: { s3: ObjectLister }) {
  return async function listFeedObjects(input: ListFeedObjectsInput): Promise<ListFeedObjectsResult> {
    if (!Number.isInteger(input.maxKeys) || input.maxKeys < 1 || input.maxKeys > MAX_KEYS_LIMIT) {
      throw failure('InvalidInput', `maxKeys must be a whole number from 1 to ${MAX_KEYS_LIMIT}, got ${input.maxKeys}`);
    }
    let pattern: RegExp | undefined;
    if (input.pattern !== undefined) {
      try {
        pattern = new RegExp(input.pattern);
      } catch (e) {
        throw failure(
          'InvalidInput',
          `feed pattern ${JSON.stringify(input.pattern)} is not a valid regular expression: ${(e as Error).message}`,
        );
      }
    }
    const page = await deps.s3.listObjects({
      bucket: input.bucket,
      prefix: input.prefix,
      continuationToken: input.continuationToken,
      maxKeys: input.maxKeys,
    });
    const objects = page.objects.filter((o) => {
      // "Folder" placeholder objects are not files.
      if (o.key.endsWith('/')) return false;
      return pattern === undefined || pattern.test(o.key.slice(input.prefix.length));
    });
    return page.nextContinuationToken === undefined
      ? { objects }
      : { objects, nextContinuationToken: page.nextContinuationToken };
  };
}

/** An ObjectLister over the AWS SDK: one ListObjectsV2 call a page. */
export function s3ObjectLister(client: S3Client): ObjectLister {
  return {
    async listObjects(input) {
      try {
        const out = await client.send(
          new ListObjectsV2Command({
            Bucket: input.bucket,
            Prefix: input.prefix || undefined,
            ContinuationToken: input.continuationToken,
            MaxKeys: input.maxKeys,
          }),
        );
        const objects = (out.Contents ?? []).map((o) => ({
          key: o.Key ?? '',
          etag: normaliseEtag(o.ETag ?? ''),
          sizeBytes: o.Size ?? 0,
          lastModified: (o.LastModified ?? new Date(0)).toISOString(),
        }));
        return out.IsTruncated && out.NextContinuationToken
          ? { objects, nextContinuationToken: out.NextContinuationToken }
          : { objects };
      } catch (err) {
        throw listingFailure(err, input.bucket);
      }
    },
  };
}

function listingFailure(err: unknown, bucket: string): unknown {
  if (!(err instanceof S3ServiceException)) return err;
  if (err.name === 'NoSuchBucket') return failure('SourceNotFound', `S3 bucket ${bucket} does not exist`);
  if (err.name === 'AccessDenied' || err.$metadata.httpStatusCode === 403) {
    return failure('Forbidden', `S3 denied listing bucket ${bucket} (${err.name})`);
  }
  return err;
}
