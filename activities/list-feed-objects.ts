/**
 * The listFeedObjects activity: one page of a feed's prefix, filtered by the
 * feed's key pattern. The workflow pages through with the continuation token,
 * so no run ever holds a whole bucket listing.
 */

import type { ListFeedObjectsInput, ListFeedObjectsResult } from '../workflows/contracts/activities.js';
import { normaliseEtag } from '../workflows/contracts/object-version.js';
import { isRejectsReportKey } from './check-rows/rejects-location.js';
import { failure } from './failures.js';
import { SourceObjectMissing } from './s3/errors.js';
import type { S3Source } from './s3/source.js';

/** What this activity needs from the S3 source. */
type ObjectLister = Pick<S3Source, 'listObjects'>;

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
    let page: Awaited<ReturnType<ObjectLister['listObjects']>>;
    try {
      page = await deps.s3.listObjects({
        bucket: input.bucket,
        prefix: input.prefix,
        continuationToken: input.continuationToken,
        maxKeys: input.maxKeys,
      });
    } catch (err) {
      if (err instanceof SourceObjectMissing) {
        throw failure('SourceNotFound', `${err.message}; a feed's bucket must exist and be listable by the worker`);
      }
      throw err;
    }
    const objects = page.objects
      // "Folder" placeholder objects are not files.
      .filter((o) => !o.key.endsWith('/'))
      // The worker's own rejects reports, written beside the files, are not files to import.
      .filter((o) => !isRejectsReportKey(o.key))
      .filter((o) => pattern === undefined || pattern.test(o.key.slice(input.prefix.length)))
      .map((o) => ({ ...o, etag: normaliseEtag(o.etag) }));
    return page.nextContinuationToken === undefined
      ? { objects }
      : { objects, nextContinuationToken: page.nextContinuationToken };
  };
}
