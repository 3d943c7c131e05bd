/**
 * A row of a UTF-8, comma file that already is its canonical line: no
 * quotes, or only quotes its fields need (a comma, a line break or a quote
 * inside). Its bytes go on as they are, and the rules read at most a few of
 * its columns. Decoding every field of every row cost more than the rest of
 * the planning pass, so the row keeps its bytes and answers from them: how
 * many fields it has, whether a column is blank, one column's text. Its
 * `fields` are decoded only when asked (a refused row, the rejects report).
 */
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
 * all without arrays per row. A field is its content's range (a quoted one's
 * without its quotes) and whether it holds doubled quotes.
 */
let starts = new Int32Array(64);
let ends = new Int32Array(64);
let doubled = new Uint8Array(64);
let scanned: ByteRow | undefined;
let fieldsScanned = 0;

function widen(): void {
  const size = starts.length * 2;
  const [s, e, d] = [new Int32Array(size), new Int32Array(size), new Uint8Array(size)];
  s.set(starts);
  e.set(ends);
  d.set(doubled);
  [starts, ends, doubled] = [s, e, d];
}

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
    return Array.from({ length: fieldsScanned }, (_, column) => this.field(column));
  }

  fieldCount(): number {
    this.scan();
    return fieldsScanned;
  }

  /** Whether column `column` (which exists) is empty once trimmed, as `fields[column].trim() === ''`. */
  isBlank(column: number): boolean {
    this.scan();
    const data = this.data;
    const from = starts[column]!;
    const to = ends[column]!;
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
    const text = this.data.toString('utf8', starts[column], ends[column]);
    return doubled[column] === 1 ? text.replaceAll('""', '"') : text;
  }

  /** Finds the row's fields, unless they are the ones found last. The reader checked the quoting. */
  private scan(): void {
    if (scanned === this) return;
    const { data, contentEnd } = this;
    let count = 0;
    let p = this.start;
    for (;;) {
      if (count === starts.length) widen();
      if (this.quoted && data[p] === QUOTE && p < contentEnd) {
        let close = p + 1;
        let escaped = 0;
        for (;;) {
          close = data.indexOf(QUOTE, close);
          if (data[close + 1] !== QUOTE || close + 1 >= contentEnd) break;
          escaped = 1;
          close += 2;
        }
        starts[count] = p + 1;
        ends[count] = close;
        doubled[count] = escaped;
        p = close + 1;
      } else {
        starts[count] = p;
        while (p < contentEnd && data[p] !== COMMA) p++;
        ends[count] = p;
        doubled[count] = 0;
      }
      count++;
      if (p >= contentEnd) break;
      p++; // past the comma
    }
    fieldsScanned = count;
    scanned = this;
  }
}
