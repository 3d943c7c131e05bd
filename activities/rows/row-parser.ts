/**
 * csv-parse as the row stage needs it: records numbered and tagged with the
 * byte offset where they end, handed on in batches (one per chunk read, so
 * the stream machinery costs per chunk, not per row), and a parse error
 * handed on in order after the rows before it. (csv-parse fails its stream
 * on an error, and a failed stream drops what it has not handed on yet: the
 * rows before an unclosed quote would vanish.)
 */
import type { TransformCallback } from 'node:stream';
import { type Options, Parser } from 'csv-parse';
import type { Dialect } from './dialect.js';
import { latin1ToWindows1252 } from './windows-1252.js';

export interface SourceRow {
  /** The record's number in the file: the header row is 1. */
  row: number;
  fields: string[];
  /** The (decompressed) byte offset just past the record and its line end (an unreadable one: where it starts). */
  end: number;
  /** Set when the record could not be read as a row (an unclosed quote). */
  unreadable?: string;
  /** The row's canonical line when the reader already wrote it (canonicalLine's text, or bytes without the CRLF). */
  canonical?: string | Uint8Array;
}

export type ParsedBatch = { rows: SourceRow[] } | { rows: SourceRow[]; error: Error };

/** The parser reads the file's own bytes: single-byte files as Latin-1, UTF-16BE swapped to LE before it. */
const PARSER_ENCODING = {
  'utf-8': 'utf8',
  'utf-16le': 'utf16le',
  'utf-16be': 'utf16le',
  'windows-1252': 'latin1',
  latin1: 'latin1',
} as const;

/** Batches waiting downstream; each holds the rows of one chunk read. */
const BATCHES_BUFFERED = 2;

export class RowParser extends Parser {
  private failed = false;
  private batch: SourceRow[] = [];
  private nextRow: number;
  private readonly fix: ((field: string) => string) | undefined;

  /** `base`: the byte offset of the parser's first byte in the file; `firstRow`: the number of its first record. */
  constructor(
    dialect: Dialect,
    maxRowBytes: number,
    private readonly base: number,
    firstRow: number,
  ) {
    const options: Options & { readableHighWaterMark: number } = {
      delimiter: dialect.delimiter,
      encoding: PARSER_ENCODING[dialect.encoding],
      // Any line end ends a record, whatever the header row used: exports mix them.
      record_delimiter: ['\r\n', '\n', '\r'],
      // A stray quote inside an unquoted field is kept as a character (as Excel reads it); the writer re-quotes it.
      relax_quotes: true,
      relax_column_count: true,
      skip_empty_lines: true,
      max_record_size: maxRowBytes,
      readableHighWaterMark: BATCHES_BUFFERED,
    };
    super(options);
    this.nextRow = firstRow;
    this.fix = dialect.encoding === 'windows-1252' ? latin1ToWindows1252 : undefined;
  }

  /** csv-parse pushes each record as it ends; `info.bytes` then is the offset just past it. */
  override push(chunk: unknown): boolean {
    if (!Array.isArray(chunk)) return super.push(chunk);
    const fields = this.fix ? chunk.map(this.fix) : (chunk as string[]);
    this.batch.push({ row: this.nextRow++, fields, end: this.base + this.info.bytes });
    return true;
  }

  override _transform(chunk: Buffer, encoding: BufferEncoding, done: TransformCallback): void {
    if (this.failed) done();
    else super._transform(chunk, encoding, (err) => this.handOn(err, done));
  }

  override _flush(done: TransformCallback): void {
    if (this.failed) done();
    else super._flush((err) => this.handOn(err, done));
  }

  private handOn(err: Error | null | undefined, done: TransformCallback): void {
    const rows = this.batch;
    this.batch = [];
    if (err) this.failed = true;
    if (rows.length > 0 || err) super.push(err ? { rows, error: err } : { rows });
    done();
  }
}
