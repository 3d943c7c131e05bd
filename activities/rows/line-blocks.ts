/**
 * Canonical lines gathered into blocks of about 64 KiB, for the hash and the
 * upload: per-line hash updates and chunks would cost more than reading the
 * rows. A line is its text (with its CRLF), or the bytes of a row that
 * already is its canonical line, without the CRLF the block adds.
 */
export type CanonicalLine = string | Uint8Array | LineBytes;

/** Bytes that are a canonical line but its CRLF, kept where they were read: copied once, into the block. */
export interface LineBytes {
  readonly length: number;
  copyTo(target: Buffer, at: number): void;
}

const BLOCK_BYTES = 64 * 1024;
const CR = 0x0d;
const LF = 0x0a;

/** The size of a canonical line in bytes. */
export function lineBytes(line: CanonicalLine): number {
  return typeof line === 'string' ? Buffer.byteLength(line) : line.length + 2;
}

export class LineBlocks {
  private block = Buffer.allocUnsafe(BLOCK_BYTES);
  private used = 0;

  /** Adds a line of `bytes` bytes; returns the block it closed, if it did. Closed blocks are never written again. */
  add(line: CanonicalLine, bytes: number): Buffer | undefined {
    let closed: Buffer | undefined;
    if (this.used + bytes > this.block.length) {
      closed = this.used > 0 ? this.block.subarray(0, this.used) : undefined;
      this.block = Buffer.allocUnsafe(Math.max(BLOCK_BYTES, bytes));
      this.used = 0;
    }
    if (typeof line === 'string') {
      this.used += this.block.write(line, this.used, 'utf8');
    } else {
      const block = this.block;
      const end = this.used + line.length;
      if (line instanceof Uint8Array) block.set(line, this.used);
      else line.copyTo(block, this.used);
      block[end] = CR;
      block[end + 1] = LF;
      this.used = end + 2;
    }
    return closed;
  }

  /** The lines added since the last closed block; the blocks start over. */
  rest(): Buffer {
    const rest = this.block.subarray(0, this.used);
    this.block = Buffer.allocUnsafe(BLOCK_BYTES);
    this.used = 0;
    return rest;
  }
}
