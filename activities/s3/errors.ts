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
  override readonly name: string = 'SourceObjectMissing';
  constructor(
    readonly bucket: string,
    readonly key: string,
    readonly reason: string,
  ) {
    super(`${s3Url(bucket, key)}: ${reason}`);
  }
}

/** S3 refused the worker access to the object (403): a permission to fix, not a missing file. */
export class SourceAccessDenied extends SourceObjectMissing {
  override readonly name = 'SourceAccessDenied';
  constructor(bucket: string, key: string) {
    super(bucket, key, "access denied (check the worker's S3 permissions)");
  }
}

/**
 * A ranged GET came back holding something other than the range asked for:
 * an S3-compatible server that ignores Range answers 200 with the whole object.
 */
export class RangeNotHonoured extends Error {
  override readonly name = 'RangeNotHonoured';
  constructor(
    readonly bucket: string,
    readonly key: string,
    readonly asked: string,
    readonly got: string,
  ) {
    super(`${s3Url(bucket, key)}: asked S3 for ${asked}, it answered with ${got}`);
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
