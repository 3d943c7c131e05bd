/**
 * Reads RFC 4180 rows straight from bytes, in front of csv-parse: most files
 * are strict CSV, and for them a byte scanner costs a fraction of a general
 * parser. A row with no quote (the common case) is found with one search for
 * its line end and split in one go; a row with quotes is walked field by
 * field. The reader stops at the first row it cannot read strictly (a quote
 * inside an unquoted field, text after a closing quote, a CR alone, a quote
 * that never closes, a row over the row bound): csv-parse reads the file from
 * that row on, so every lenient rule and every error stays csv-parse's own.
 *
 * The reader also writes each row's canonical line, knowing from the bytes
 * which fields need quotes; a UTF-8, comma row whose quoted fields all need
 * their quotes already is its canonical line, and its bytes go on as they are.
 *
 * It reads UTF-8 and the single-byte encodings, where the delimiter, quote,
 * CR and LF are single bytes that no other character contains. Rows, fields
 * and byte offsets are what csv-parse gives for the same bytes (tested
 * against it).
 */

import { ByteRow } from './byte-row.js';
import type { Dialect } from './dialect.js';
import { FieldBounds } from './field-bounds.js';
import type { SourceRow } from './row-parser.js';
import { latin1ToWindows1252 } from './windows-1252.js';

const QUOTE = 0x22;
const CR = 0x0d;
const LF = 0x0a;
const COMMA = 0x2c;
/** `row()` results that are not a row's end: wait for more bytes, or hand the rest to csv-parse. */
const INCOMPLETE = -1;
const STOP = -2;
const EMPTY = Buffer.alloc(0);

export interface ResumePoint {
  /** The number of the row csv-parse reads first. */
  row: number;
  /** Its (decompressed) byte offset in the file. */
  start: number;
  /** The bytes from `start` on that the reader took but did not read. */
  bytes: Buffer;
}

export class StrictRows {
  /** Why the reader stopped; from then on the rows are csv-parse's. */
  stopped: string | undefined;
  private carry: Buffer = EMPTY;
  /** The file offset of `carry[0]` (and of the data being read). */
  private carryStart: number;
  private nextRow: number;
  private readonly delimiter: number;
  private readonly delimiterText: string;
  private readonly encoding: 'utf8' | 'latin1';
  private readonly fix: ((text: string) => string) | undefined;
  /** A row without quotes is its own canonical line (UTF-8, comma): its bytes go on unchanged. */
  private readonly plainIsCanonical: boolean;
  // What `row()` read: the fields (undefined for an empty line, which csv-parse skips) and the canonical line.
  private fields: string[] | undefined;
  private line: string | Uint8Array | undefined;
  /** Set instead of `fields` for a row that already is its canonical line: its content's end, and whether it has quotes. */
  private plainEnd = -1;
  private plainQuoted = false;
  private readonly walked = new FieldBounds();
  // A walked single-byte line's text, from its first byte up to its LF (decodeLine); none for UTF-8.
  private lineText = '';
  private lineStart = 0;
  private lineEnd = -1;
  // The next LF, quote and CR at or after a position of the data being read (its length when there is none).
  private lfAt = -1;
  private quoteAt = -1;
  private crAt = -1;

  static reads(dialect: Dialect): boolean {
    return dialect.encoding === 'utf-8' || dialect.encoding === 'windows-1252' || dialect.encoding === 'latin1';
  }

  /** `start`: the file offset of the first byte it is given; `firstRow`: that row's number. */
  constructor(
    dialect: Dialect,
    start: number,
    firstRow: number,
    private readonly maxRowBytes: number,
  ) {
    if (!StrictRows.reads(dialect)) throw new RangeError(`the strict reader does not read ${dialect.encoding}`);
    this.carryStart = start;
    this.nextRow = firstRow;
    this.delimiter = dialect.delimiter.charCodeAt(0);
    this.delimiterText = dialect.delimiter;
    this.encoding = dialect.encoding === 'utf-8' ? 'utf8' : 'latin1';
    this.fix = dialect.encoding === 'windows-1252' ? latin1ToWindows1252 : undefined;
    this.plainIsCanonical = dialect.encoding === 'utf-8' && this.delimiter === COMMA;
  }

  /** The rows that end in `chunk` (with the bytes carried from before it). */
  take(chunk: Buffer): SourceRow[] {
    if (this.stopped !== undefined) throw new Error('the strict reader has stopped; csv-parse reads the rest');
    const data = this.carry.length > 0 ? Buffer.concat([this.carry, chunk]) : chunk;
    return this.read(data, false);
  }

  /** The rows the end of the file ends. */
  finish(): SourceRow[] {
    if (this.stopped !== undefined || this.carry.length === 0) return [];
    return this.read(this.carry, true);
  }

  /** Where csv-parse takes over, once the reader stopped. */
  resume(): ResumePoint {
    return { row: this.nextRow, start: this.carryStart, bytes: this.carry };
  }

  private read(data: Buffer, final: boolean): SourceRow[] {
    const rows: SourceRow[] = [];
    this.lfAt = this.quoteAt = this.crAt = -1;
    let pos = 0;
    // Carried on from the end of the last row, empty lines after it included, as csv-parse would count them.
    let lastEnd = 0;
    while (pos < data.length) {
      const end = this.row(data, pos, final);
      if (end === INCOMPLETE) break;
      if (end === STOP) break;
      if (end - pos > this.maxRowBytes) {
        this.stopped = `a row longer than ${this.maxRowBytes} bytes`;
        break;
      }
      if (this.plainEnd >= 0) {
        rows.push(new ByteRow(this.nextRow++, this.carryStart + end, data, pos, this.plainEnd, this.plainQuoted));
        this.plainEnd = -1;
        lastEnd = end;
      } else if (this.fields !== undefined) {
        const row: SourceRow = { row: this.nextRow++, fields: this.fields, end: this.carryStart + end };
        if (this.line !== undefined) row.canonical = this.line;
        rows.push(row);
        lastEnd = end;
      }
      pos = end;
    }
    if (this.stopped === undefined && data.length - pos > this.maxRowBytes) {
      this.stopped = `a row longer than ${this.maxRowBytes} bytes`;
    }
    this.carryStart += lastEnd;
    this.carry = data.subarray(lastEnd);
    return rows;
  }

  private next(data: Buffer, byte: number, cached: number, from: number): number {
    if (cached >= from) return cached;
    const at = data.indexOf(byte, from);
    return at === -1 ? data.length : at;
  }

  /** Reads the row at `start`: returns the offset past its line end, INCOMPLETE or STOP. */
  private row(data: Buffer, start: number, final: boolean): number {
    this.plainEnd = -1;
    this.lfAt = this.next(data, LF, this.lfAt, start);
    this.quoteAt = this.next(data, QUOTE, this.quoteAt, start);
    this.crAt = this.next(data, CR, this.crAt, start);
    const { lfAt: lf, quoteAt: quote, crAt: cr } = this;
    // No quote, and no CR but the one of a CRLF: the row is plain text up to its line end (or the file's).
    const found = lf < data.length;
    if (quote > lf && (cr > lf || (cr === lf - 1 && found)) && (found || final)) {
      const contentEnd = cr === lf - 1 ? cr : lf;
      if (contentEnd === start) {
        this.fields = undefined;
        return Math.min(lf + 1, data.length);
      }
      if (this.plainIsCanonical) {
        this.plainEnd = contentEnd;
        this.plainQuoted = false;
      } else this.plainRow(data, start, contentEnd);
      return Math.min(lf + 1, data.length);
    }
    return this.walk(data, start, final);
  }

  /** A row without quotes, CR or LF: only a comma inside a field (of a file with another delimiter) needs quotes. */
  private plainRow(data: Buffer, start: number, end: number): void {
    const text = this.text(data, start, end);
    const fields = text.split(this.delimiterText);
    this.fields = fields;
    if (this.delimiter === COMMA) this.line = `${text}\r\n`;
    else if (!text.includes(',')) this.line = `${fields.join(',')}\r\n`;
    else this.line = `${fields.map((f) => (f.includes(',') ? `"${f}"` : f)).join(',')}\r\n`;
  }

  private text(data: Buffer, start: number, end: number): string {
    const text = data.toString(this.encoding, start, end);
    return this.fix ? this.fix(text) : text;
  }

  /**
   * A walked single-byte line is decoded once, up to its LF, and each field
   * is a slice of it (one character per byte, so byte offsets are character
   * offsets): one decode and one Windows-1252 fix per line instead of per
   * field. A field past that LF (a quoted line break) and every UTF-8 field
   * is decoded on its own.
   */
  private decodeLine(data: Buffer, start: number): void {
    if (this.encoding === 'utf8') return;
    this.lineStart = start;
    this.lineEnd = this.lfAt;
    this.lineText = this.text(data, start, this.lfAt);
  }

  private fieldText(data: Buffer, from: number, to: number): string {
    if (to > this.lineEnd) return this.text(data, from, to);
    return this.lineText.slice(from - this.lineStart, to - this.lineStart);
  }

  private stop(reason: string): number {
    this.stopped = reason;
    return STOP;
  }

  /** A row with quotes (or a CR, or at the file's end), field by field. */
  private walk(data: Buffer, start: number, final: boolean): number {
    const fields = this.walked;
    const length = data.length;
    // With every quoted field needing its quotes, a UTF-8 comma row's own bytes are its canonical line.
    let ownBytes = this.plainIsCanonical;
    let quoted = false;
    fields.count = 0;
    let p = start;
    for (;;) {
      let end: number;
      if (p < length && data[p] === QUOTE) {
        let close = p + 1;
        let escaped = false;
        for (;;) {
          close = data.indexOf(QUOTE, close);
          if (close === -1) return final ? this.stop('a quoted field never closes') : INCOMPLETE;
          if (close + 1 < length && data[close + 1] === QUOTE) {
            escaped = true;
            close += 2;
            continue;
          }
          break;
        }
        if (close + 1 >= length && !final) return INCOMPLETE;
        const needs = escaped || needsQuotes(data, p + 1, close);
        if (!needs) ownBytes = false;
        quoted = true;
        fields.add(p + 1, close, escaped, needs);
        end = close + 1;
        if (end < length && data[end] !== this.delimiter && data[end] !== LF && data[end] !== CR) {
          return this.stop('text after a closing quote');
        }
      } else {
        end = p;
        const delimiter = this.delimiter;
        let comma = false;
        while (end < length) {
          const b = data[end];
          if (b === delimiter || b === LF || b === CR || b === QUOTE) break;
          if (b === COMMA) comma = true;
          end++;
        }
        if (end >= length && !final) return INCOMPLETE;
        if (end < length && data[end] === QUOTE) return this.stop('a quote inside an unquoted field');
        fields.add(p, end, false, comma);
      }
      let rowEnd: number;
      if (end >= length) rowEnd = end;
      else if (data[end] === LF) rowEnd = end + 1;
      else if (data[end] === CR) {
        if (end + 1 >= length) return final ? this.stop('a line ends in CR alone') : INCOMPLETE;
        if (data[end + 1] !== LF) return this.stop('a line ends in CR alone');
        rowEnd = end + 2;
      } else {
        p = end + 1; // past the delimiter
        continue;
      }
      if (ownBytes) {
        this.plainEnd = end;
        this.plainQuoted = quoted;
      } else {
        this.decode(data, start);
      }
      return rowEnd;
    }
  }

  /** The walked row's fields as text, and its canonical line. */
  private decode(data: Buffer, start: number): void {
    const walked = this.walked;
    this.decodeLine(data, start);
    const fields: string[] = [];
    for (let i = 0; i < walked.count; i++) {
      const value = this.fieldText(data, walked.starts[i]!, walked.ends[i]!);
      fields.push(walked.escaped[i] === 1 ? value.replaceAll('""', '"') : value);
    }
    this.fields = fields;
    this.line = canonicalText(fields, walked);
  }
}

/** The canonical line of a walked row, quoting the fields that need it. */
function canonicalText(fields: string[], walked: FieldBounds): string {
  // A lone empty field would be an empty line, which readers skip: quoted, the row survives.
  if (fields.length === 1 && fields[0] === '') return '""\r\n';
  // A loop, not a map with a closure: this runs for every walked row.
  let line = '';
  for (let i = 0; i < fields.length; i++) {
    const field = fields[i]!;
    if (i > 0) line += ',';
    line += walked.needs[i] === 1 ? `"${field.replaceAll('"', '""')}"` : field;
  }
  return `${line}\r\n`;
}

/** Whether a quoted field's bytes (no doubled quotes in them) hold a comma, CR or LF, so its quotes must stay. */
function needsQuotes(data: Buffer, start: number, end: number): boolean {
  for (let i = start; i < end; i++) {
    const b = data[i];
    if (b === COMMA || b === CR || b === LF) return true;
  }
  return false;
}
