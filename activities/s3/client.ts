/**
 * The S3 client the worker reads source files with. Credentials come from the
 * AWS default chain (environment, profile, instance role), never from config.
 */
import { S3Client } from '@aws-sdk/client-s3';
import type { Config } from '../../temporal.config.js';
import { silenceAwsNodeVersionWarning } from '../../worker/shared/aws-node-warning.js';

export function createS3Client(config: Config['s3']): S3Client {
  silenceAwsNodeVersionWarning();
  return new S3Client({
    region: config.region,
    endpoint: config.endpoint,
    forcePathStyle: config.forcePathStyle,
    // The SDK's default checksums frame streaming bodies as aws-chunked, which
    // S3-compatible servers such as s3rver store verbatim; we only read, and
    // verify by ETag, so checksums are used only where S3 requires them.
    requestChecksumCalculation: 'WHEN_REQUIRED',
    responseChecksumValidation: 'WHEN_REQUIRED',
  });
}
