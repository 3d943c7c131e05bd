/**
 * One version of a source object, and the one spelling of its ETag that
 * workflow ids, job records and S3 reads compare. Shared by workflows and
 * activities, so it imports nothing.
 */

/** One version of a source object: what S3 holds under `bucket`/`key` while its ETag is `etag`. */
export interface ObjectVersion {
  bucket: string;
  key: string;
  etag: string;
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
