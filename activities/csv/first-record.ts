/**
 * Where the first CSV record (the header row) ends in a byte sample. A line
 * break inside a quoted field does not end it. Scanning bytes is safe for
 * UTF-8: quote, CR and LF never occur inside a multi-byte character.
 */
const QUOTE = 0x22;
const LF = 0x0a;
const CR = 0x0d;

/** The index of the CR or LF that ends the first record, or -1 when the sample holds no record end. */
export function firstRecordEnd(sample: Uint8Array): number {
  let quoted = false;
  for (let i = 0; i < sample.length; i++) {
    const byte = sample[i];
    if (byte === QUOTE) quoted = !quoted;
    else if (!quoted && (byte === LF || byte === CR)) return i;
  }
  return -1;
}
