/**
 * The records of a source stream, in order, each with its row number and the
 * byte offset where it ends: gunzip, byte order mark, byte swap and UTF-8
 * check in front of csv-parse. The parser reads the file's own bytes (UTF-8,
 * UTF-16LE, or Latin-1 for the single-byte encodings), so its offsets are the
 * (decompressed) file's and a later pass can resume at a row's first byte.
 *
 * Memory stays bounded: every stage streams with back-pressure and a record
 * may hold at most `maxRowBytes`.
 */
import { pipeline, type Readable, Transform, type TransformCallback } from 'node:stream';
import { createGunzip } from 'node:zlib';
import { CsvError, type Info, type Options, Parser } from 'csv-parse';
import { bomLength } from './detect-dialect.js';
import type { Dialect } from './dialect.js';
import { RowStageError } from './errors.js';
import { utf8Check } from './utf8.js';
import { latin1ToWindows1252 } from './windows-1252.js';

export interface SourceRow {
  /** The record's number in the file: the header row is 1. */
  row: number;
  fields: string[];
  /** The (decompressed) byte offset just past the record and its line end (an unreadable one: where it starts). */
  end: number;
  /** Set when the record could not be read as a row (an unclosed quote). */
  unreadable?: string;
}

export interface ReadFrom {
  /** The (decompressed) byte offset the stream starts at: 0, or the first byte of a row. */
  startByte: number;
  /** The number of the row that starts at `startByte` (1 at the file's start: the header row). */
  firstRow: number;
  maxRowBytes: number;
}

const PARSER_ENCODING = {
  'utf-8': 'utf8',
  'utf-16le': 'utf16le',
  'utf-16be': 'utf16le',
  'windows-1252': 'latin1',
  latin1: 'latin1',
} as const;

/** Drops the first `length` bytes of a stream: the byte order mark. */
function dropFirst(length: number): Transform {
  let left = length;
  return new Transform({
    transform(chunk: Buffer, _enc, done: TransformCallback) {
      const drop = Math.min(left, chunk.length);
      left -= drop;
      done(null, drop === 0 ? chunk : chunk.subarray(drop));
    },
  });
}

/** UTF-16BE to UTF-16LE, two bytes at a time; an odd byte waits for its pair. */
function swapBytePairs(): Transform {
  let odd: Buffer | undefined;
  return new Transform({
    transform(chunk: Buffer, _enc, done: TransformCallback) {
      const data = odd ? Buffer.concat([odd, chunk]) : chunk;
      const even = data.length - (data.length % 2);
      odd = even < data.length ? Buffer.from(data.subarray(even)) : undefined;
      done(null, Buffer.from(data.subarray(0, even)).swap16());
    },
    flush(done: TransformCallback) {
      done(odd ? new RowStageError('UnsupportedEncoding', 'the UTF-16 file ends in half a character') : undefined);
    },
  });
}

function decoding(dialect: Dialect, from: ReadFrom): Transform[] {
  const stages: Transform[] = [];
  if (dialect.compression === 'gzip') stages.push(createGunzip());
  const bom = from.startByte === 0 && dialect.hasBom ? bomLength(dialect.encoding) : 0;
  if (bom > 0) stages.push(dropFirst(bom));
  if (dialect.encoding === 'utf-16be') stages.push(swapBytePairs());
  if (dialect.encoding === 'utf-8') stages.push(utf8Check(from.startByte + bom));
  return stages;
}

type Parsed = { record: string[]; info: Info } | { error: Error };

/**
 * csv-parse fails a stream on a parse error, and failing a stream drops the
 * records it has parsed but not yet handed on: the rows before an unclosed
 * quote would vanish. This parser hands its error on in order, after them.
 */
class InOrderParser extends Parser {
  private failed = false;

  override _transform(chunk: Buffer, encoding: BufferEncoding, done: TransformCallback): void {
    if (this.failed) done();
    else super._transform(chunk, encoding, (err) => this.settle(err, done));
  }

  override _flush(done: TransformCallback): void {
    if (this.failed) done();
    else super._flush((err) => this.settle(err, done));
  }

  private settle(err: Error | null | undefined, done: TransformCallback): void {
    if (err) {
      this.failed = true;
      this.push({ error: err });
    }
    done();
  }
}

function parser(dialect: Dialect, maxRowBytes: number): InOrderParser {
  const options: Options = {
    delimiter: dialect.delimiter,
    encoding: PARSER_ENCODING[dialect.encoding],
    // Any line end ends a record, whatever the header row used: exports mix them.
    record_delimiter: ['\r\n', '\n', '\r'],
    // A stray quote inside an unquoted field is kept as a character (as Excel reads it); the writer re-quotes it.
    relax_quotes: true,
    relax_column_count: true,
    skip_empty_lines: true,
    max_record_size: maxRowBytes,
    info: true,
  };
  return new InOrderParser(options);
}

function readError(err: unknown, row: number, maxRowBytes: number): unknown {
  if (err instanceof CsvError && err.code === 'CSV_MAX_RECORD_SIZE') {
    return new RowStageError(
      'RowTooLong',
      `row ${row} is longer than ${maxRowBytes} bytes, the most a row may hold; usually a quote that never closes, which makes the rest of the file one row`,
    );
  }
  if (err instanceof Error && 'code' in err && typeof err.code === 'string' && err.code.startsWith('Z_')) {
    return new RowStageError('CorruptCompression', `the gzip stream is damaged or cut short: ${err.message}`);
  }
  return err;
}

/**
 * The rows of `raw`, a stream of the object's bytes from `from.startByte` on
 * (compressed for gzip, which must start at 0). `tap` sees the raw bytes first.
 */
export async function* sourceRows(
  raw: Readable,
  dialect: Dialect,
  from: ReadFrom,
  tap?: Transform,
): AsyncGenerator<SourceRow> {
  if (dialect.compression === 'gzip' && from.startByte !== 0)
    throw new Error('a gzip stream can only be read from its start');
  const bom = from.startByte === 0 && dialect.hasBom ? bomLength(dialect.encoding) : 0;
  const base = from.startByte + bom;
  const fix = dialect.encoding === 'windows-1252' ? latin1ToWindows1252 : undefined;
  const csv = parser(dialect, from.maxRowBytes);
  // pipeline destroys every stage with the first error, so the parser's iterator throws it.
  pipeline([raw, ...(tap ? [tap] : []), ...decoding(dialect, from), csv], () => {});
  let row = from.firstRow;
  let end = base;
  try {
    for await (const parsed of csv as AsyncIterable<Parsed>) {
      if ('error' in parsed) {
        if (!(parsed.error instanceof CsvError && parsed.error.code === 'CSV_QUOTE_NOT_CLOSED')) throw parsed.error;
        const unreadable = `a quoted field opened in this row never closes; the rest of the file (from byte ${end}) is this one row`;
        yield { row, fields: [], end, unreadable };
        return;
      }
      end = base + parsed.info.bytes;
      yield { row: row++, fields: fix ? parsed.record.map(fix) : parsed.record, end };
    }
  } catch (err) {
    throw readError(err, row, from.maxRowBytes);
  } finally {
    csv.destroy();
  }
}
