/**
 * A row of a UTF-8, comma file without quotes, CR or LF: its bytes are its
 * canonical line, and the rules read at most a few of its columns. Decoding
 * and splitting every row's text cost more than the rest of the planning
 * pass, so the row keeps its bytes and answers from them: how many fields it
 * has, whether a column is blank, one column's text. Its `fields` are
 * decoded only when asked (a refused row, the rejects report).
 */
import type { LineBytes } from './line-blocks.js';
import type { SourceRow } from './row-parser.js';

const COMMA = 0x2c;

/** Whether `byte` is ASCII whitespace as String.prototype.trim() sees it (tab to CR, space). */
function asciiSpace(byte: number): boolean {
  return byte === 0x20 || (byte >= 0x09 && byte <= 0x0d);
}

/**
 * The comma offsets of the row last scanned, shared by every row: a row's
 * checks run one after another, right after it is scanned, so one scan
 * serves them all without an array per row.
 */
let commas = new Int32Array(256);
let scanned: PlainRow | undefined;
let commaCount = 0;

/** Rows up to this long are copied byte by byte: cheaper than a native copy's call for most rows. */
const SHORT_ROW = 128;

export class PlainRow implements SourceRow, LineBytes {
  constructor(
    readonly row: number,
    readonly end: number,
    private readonly data: Buffer,
    private readonly start: number,
    private readonly contentEnd: number,
  ) {}

  /** The row's own bytes, without its line end: exactly its canonical line but the CRLF. */
  get canonical(): Uint8Array {
    return this.data.subarray(this.start, this.contentEnd);
  }

  /** The canonical line's length but its CRLF. */
  get length(): number {
    return this.contentEnd - this.start;
  }

  copyTo(target: Buffer, at: number): void {
    const { data, start, contentEnd } = this;
    if (contentEnd - start > SHORT_ROW) {
      data.copy(target, at, start, contentEnd);
      return;
    }
    for (let i = start; i < contentEnd; i++) target[at++] = data[i]!;
  }

  get fields(): string[] {
    return this.data.toString('utf8', this.start, this.contentEnd).split(',');
  }

  fieldCount(): number {
    this.scan();
    return commaCount + 1;
  }

  /** Whether column `column` (which exists) is empty once trimmed, as `fields[column].trim() === ''`. */
  isBlank(column: number): boolean {
    this.scan();
    const data = this.data;
    const from = this.columnStart(column);
    const to = this.columnEnd(column);
    let ascii = true;
    for (let i = from; i < to; i++) {
      const byte = data[i]!;
      if (byte >= 0x80) ascii = false;
      else if (!asciiSpace(byte)) return false;
    }
    // Only spaces, or characters beyond ASCII (a no-break space is blank too): the decoded text says.
    return ascii || data.toString('utf8', from, to).trim() === '';
  }

  /** Column `column`'s text (the column exists). */
  field(column: number): string {
    this.scan();
    return this.data.toString('utf8', this.columnStart(column), this.columnEnd(column));
  }

  private columnStart(column: number): number {
    return column === 0 ? this.start : commas[column - 1]! + 1;
  }

  private columnEnd(column: number): number {
    return column === commaCount ? this.contentEnd : commas[column]!;
  }

  /** Finds the row's commas, unless they are the ones found last. */
  private scan(): void {
    if (scanned === this) return;
    const { data, contentEnd } = this;
    let count = 0;
    for (let i = this.start; i < contentEnd; i++) {
      if (data[i] !== COMMA) continue;
      if (count === commas.length) {
        const wider = new Int32Array(commas.length * 2);
        wider.set(commas);
        commas = wider;
      }
      commas[count++] = i;
    }
    commaCount = count;
    scanned = this;
  }
}
