/**
 * The workflow id of an object version, read from S3 by the CLI: the same
 * `objectImportWorkflowId` the nightly gives its children, so a manual start
 * and a night (or two manual starts) import one object version once.
 */
import { createS3Client } from '../../activities/s3/client.js';
import { S3Source } from '../../activities/s3/source.js';
import { loadS3Config } from '../../temporal.config.js';
import type { S3ObjectRef } from '../../workflows/contracts/import-input.js';
import { objectImportWorkflowId } from '../../workflows/contracts/nightly.js';
import { normaliseEtag } from '../../workflows/contracts/object-version.js';
import { CliError } from './cli-error.js';

/** The import of one object version: its workflow id, and the ETag that names the version. */
export interface VersionImport {
  workflowId: string;
  /** Unquoted, as the messages show it. */
  etag: string;
}

/** Reads the object's current ETag (one HEAD); configuration problems surface before any request. */
export async function versionImportOf(
  env: Record<string, string | undefined>,
  source: S3ObjectRef,
): Promise<VersionImport> {
  const client = createS3Client(loadS3Config(env));
  try {
    const head = await new S3Source(client).head(source.bucket, source.key);
    return { workflowId: objectImportWorkflowId(source.bucket, source.key, head.etag), etag: normaliseEtag(head.etag) };
  } catch (err) {
    throw new CliError(
      `cannot read s3://${source.bucket}/${source.key} to name its import (${(err as Error).message}); ` +
        'fix the S3 settings or the key, or pass --workflow-id to start without reading it',
    );
  } finally {
    client.destroy();
  }
}
