/**
 * A row of a UTF-8, comma file that already is its canonical line: no
 * quotes, or only quotes its fields need (a comma, a line break or a quote
 * inside). Its bytes go on as they are, and the rules read at most a few of
 * its columns. Decoding every field of every row cost more than the rest of
 * the planning pass, so the row keeps its bytes and answers from them: how
 * many fields it has, whether a column is blank, one column's text. Its
 * `fields` are decoded only when asked (a refused row, the rejects report).
 */
import { FieldBounds } from './field-bounds.js';
import type { LineBytes } from './line-blocks.js';
import type { SourceRow } from './row-parser.js';

const COMMA = 0x2c;
const QUOTE = 0x22;

/** Whether `byte` is ASCII whitespace as String.prototype.trim() sees it (tab to CR, space). */
function asciiSpace(byte: number): boolean {
  return byte === 0x20 || (byte >= 0x09 && byte <= 0x0d);
}

/**
 * The fields of the row scanned last, shared by every row: a row's checks
 * run one after another, right after it is read, so one scan serves them
 * all.
 */
const bounds = new FieldBounds();
let scanned: ByteRow | undefined;

/** Rows up to this long are copied byte by byte: cheaper than a native copy's call for most rows. */
const SHORT_ROW = 128;

export class ByteRow implements SourceRow, LineBytes {
  /** `quoted`: whether any field is quoted; a row without quotes is split at every comma. */
  constructor(
    readonly row: number,
    readonly end: number,
    private readonly data: Buffer,
    private readonly start: number,
    private readonly contentEnd: number,
    private readonly quoted: boolean,
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
    if (!this.quoted) return this.data.toString('utf8', this.start, this.contentEnd).split(',');
    this.scan();
    return Array.from({ length: bounds.count }, (_, column) => this.field(column));
  }

  fieldCount(): number {
    this.scan();
    return bounds.count;
  }

  /** Whether column `column` (which exists) is empty once trimmed, as `fields[column].trim() === ''`. */
  isBlank(column: number): boolean {
    this.scan();
    const data = this.data;
    const from = bounds.starts[column]!;
    const to = bounds.ends[column]!;
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
    const text = this.data.toString('utf8', bounds.starts[column], bounds.ends[column]);
    return bounds.escaped[column] === 1 ? text.replaceAll('""', '"') : text;
  }

  /** Finds the row's fields, unless they are the ones found last. The reader checked the quoting. */
  private scan(): void {
    if (scanned === this) return;
    const { data, contentEnd } = this;
    bounds.count = 0;
    let p = this.start;
    for (;;) {
      if (this.quoted && data[p] === QUOTE && p < contentEnd) {
        let close = p + 1;
        let escaped = false;
        for (;;) {
          close = data.indexOf(QUOTE, close);
          if (data[close + 1] !== QUOTE || close + 1 >= contentEnd) break;
          escaped = true;
          close += 2;
        }
        bounds.add(p + 1, close, escaped, true);
        p = close + 1;
      } else {
        const from = p;
        while (p < contentEnd && data[p] !== COMMA) p++;
        bounds.add(from, p, false, false);
      }
      if (p >= contentEnd) break;
      p++; // past the comma
    }
    scanned = this;
  }
}
