/**
 * One version of a source object, and the one spelling of its ETag that
 * workflow ids, job records and S3 reads compare. Shared by workflows and
 * activities, so it imports nothing.
 */

/**
 * One version of a source object: what S3 holds under `bucket`/`key` while
 * its ETag is `etag`. A version too large for one job is split: each part is
 * then a version of its own here (`part` set), with its own job record and job.
 */
export interface ObjectVersion {
  bucket: string;
  key: string;
  etag: string;
  /** Set for one part of a version split into several jobs; absent for a version sent whole. */
  part?: PartOfVersion;
}

/**
 * One part of a split version, named by durable facts of its plan: its number
 * and the digest of its exact body. A plan cut otherwise (another part size)
 * names other parts, so a job never receives a body its record did not plan.
 */
export interface PartOfVersion {
  /** 1 for the first part. */
  number: number;
  sha256: string;
}

/** How a version is named in record ids and job keys: the part, when there is one, after the ETag. */
export function versionName(version: ObjectVersion): string {
  const whole = `${version.bucket}/${version.key}@${normaliseEtag(version.etag)}`;
  return version.part ? `${whole}#part${version.part.number}:${version.part.sha256}` : whole;
}

/**
 * An ETag as S3 may send it (`"abc"`, or weak-prefixed `W/"abc"` by some
 * clients and proxies, with stray whitespace) spelled one way: the opaque
 * tag without its quotes. Only a matching pair of quotes is removed, the
 * shape RFC 9110 gives an entity tag, so a malformed value with one quote
 * stays distinct instead of being mistaken for a well-formed one.
 */
export function normaliseEtag(etag: string): string {
  return etag
    .trim()
    .replace(/^W\//u, '')
    .replace(/^"(.*)"$/u, '$1');
}
