/**
 * Checks that a stream read as UTF-8 is UTF-8. csv-parse would turn a stray
 * Windows-1252 byte into U+FFFD without a word, and the service would import
 * the mangled text: a file that is not UTF-8 must be refused with the hint to
 * declare its encoding. Node's isUtf8 checks in native code, so valid files
 * pay little; a character split across two chunks is carried to the next.
 */
import { isUtf8 } from 'node:buffer';
import { Transform, type TransformCallback } from 'node:stream';
import { RowStageError } from './errors.js';

/** The length of `b` without a multi-byte character its end cuts short. */
export function completeUtf8Length(b: Uint8Array): number {
  for (let i = b.length - 1; i >= 0 && i >= b.length - 4; i--) {
    const byte = b[i]!;
    if ((byte & 0xc0) === 0x80) continue; // a continuation byte: look further back for its lead
    if (byte < 0x80) return b.length;
    const needed = byte >= 0xf0 ? 4 : byte >= 0xe0 ? 3 : 2;
    return b.length - i < needed ? i : b.length;
  }
  return b.length;
}

/** Where the first byte that is not UTF-8 lies in `b` (approximate if `b` holds a real U+FFFD before it). */
function firstInvalidOffset(b: Uint8Array): number {
  const text = new TextDecoder('utf-8').decode(b);
  return Buffer.byteLength(text.slice(0, Math.max(0, text.indexOf('\uFFFD'))));
}

export function notUtf8Error(offset: number, b: Uint8Array): RowStageError {
  const at = firstInvalidOffset(b);
  const hex = Array.from(b.subarray(at, at + 4), (x) => x.toString(16).padStart(2, '0')).join(' ');
  return new RowStageError(
    'NotUtf8',
    `byte ${offset + at} (0x${hex}) is not UTF-8; if the file is Windows-1252 or Latin-1, declare that encoding for this import`,
  );
}

/** A pass-through that fails on the first byte that is not UTF-8; `startOffset` numbers the bytes in errors. */
export function utf8Check(startOffset = 0): Transform {
  let offset = startOffset;
  let carry: Buffer = Buffer.alloc(0);
  return new Transform({
    transform(chunk: Buffer, _enc, done: TransformCallback) {
      const data = carry.length > 0 ? Buffer.concat([carry, chunk]) : chunk;
      const complete = completeUtf8Length(data);
      if (!isUtf8(data.subarray(0, complete))) return done(notUtf8Error(offset, data.subarray(0, complete)));
      carry = data.subarray(complete);
      offset += complete;
      done(null, chunk);
    },
    flush(done: TransformCallback) {
      if (carry.length > 0) return done(notUtf8Error(offset, Buffer.concat([carry, Buffer.from([0x0a])])));
      done();
    },
  });
}
