/**
 * What can go wrong reading a source object, in terms the activities map to
 * pipeline failures. Messages name the object (bucket and key), never a
 * credential.
 */

export function s3Url(bucket: string, key: string): string {
  return `s3://${bucket}/${key}`;
}

/** The bucket or object does not exist, or the worker may not read it. */
export class SourceObjectMissing extends Error {
  override readonly name = 'SourceObjectMissing';
  constructor(
    readonly bucket: string,
    readonly key: string,
    readonly reason: string,
  ) {
    super(`${s3Url(bucket, key)}: ${reason}`);
  }
}

/** The object's ETag differs from the one the read is pinned to: it was overwritten. */
export class SourceObjectChanged extends Error {
  override readonly name = 'SourceObjectChanged';
  constructor(
    readonly bucket: string,
    readonly key: string,
    readonly expectedEtag: string,
    readonly actualEtag?: string,
  ) {
    super(
      `${s3Url(bucket, key)} changed since it was inspected: expected ETag ${expectedEtag}, ` +
        (actualEtag ? `found ${actualEtag}` : 'S3 refused the pinned read (412 Precondition Failed)'),
    );
  }
}

/** No end of the first CSV record within the bytes we are willing to read for a header. */
export class HeaderTooLong extends Error {
  override readonly name = 'HeaderTooLong';
  constructor(
    readonly bucket: string,
    readonly key: string,
    readonly limitBytes: number,
  ) {
    super(`${s3Url(bucket, key)}: the header row does not end within the first ${limitBytes} bytes`);
  }
}
