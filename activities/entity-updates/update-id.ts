/**
 * Update ids for entity workflows. The same logical request always carries
 * the same id, so the server answers a resend once (within one run of the
 * workflow). Temporal refuses an id over 1,000 bytes ("UpdateId length
 * exceeds limit"), and ids built from workflow ids (which may be 1,000 bytes
 * themselves) reach that: a long id keeps a readable start and ends with a
 * hash of the whole, so it stays stable and distinct.
 */
import { createHash } from 'node:crypto';

/** Temporal's limit on an update id, in UTF-8 bytes (the server counts bytes). */
export const MAX_UPDATE_ID_BYTES = 1_000;
/** `#` and a base64url SHA-256. */
const HASH_SUFFIX_BYTES = 44;

export function updateId(...parts: readonly string[]): string {
  const natural = parts.join('/');
  if (Buffer.byteLength(natural) <= MAX_UPDATE_ID_BYTES) return natural;
  const hash = createHash('sha256').update(natural).digest('base64url');
  return `${prefixWithin(natural, MAX_UPDATE_ID_BYTES - HASH_SUFFIX_BYTES)}#${hash}`;
}

/** The longest start of `text` within `maxBytes`, never cutting a character in two. */
function prefixWithin(text: string, maxBytes: number): string {
  let bytes = 0;
  let end = 0;
  for (const char of text) {
    bytes += Buffer.byteLength(char);
    if (bytes > maxBytes) break;
    end += char.length;
  }
  return text.slice(0, end);
}
