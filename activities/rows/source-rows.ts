/**
 * The rows of a source stream, in order, in batches: gunzip, byte order mark,
 * byte swap and UTF-8 check in front of the row parser. The parser reads the
 * file's own bytes (UTF-8, UTF-16LE, or Latin-1 for the single-byte
 * encodings), so its offsets are the (decompressed) file's and a later pass
 * can resume at a row's first byte.
 *
 * Memory stays bounded: every stage streams with back-pressure and a record
 * may hold at most `maxRowBytes`.
 */
import { pipeline, Readable, Transform, type TransformCallback } from 'node:stream';
import { createGunzip } from 'node:zlib';
import { CsvError } from 'csv-parse';
import { bomLength } from './detect-dialect.js';
import type { Dialect } from './dialect.js';
import { RowStageError } from './errors.js';
import { type ParsedBatch, RowParser, type SourceRow } from './row-parser.js';
import { StrictRows } from './strict-rows.js';
import { utf8Check } from './utf8.js';

export type { SourceRow };

export interface ReadFrom {
  /** The (decompressed) byte offset the stream starts at: 0, or the first byte of a row. */
  startByte: number;
  /** The number of the row that starts at `startByte` (1 at the file's start: the header row). */
  firstRow: number;
  maxRowBytes: number;
}

/** Drops the first `length` bytes of a stream: a byte order mark, or a gzip file's rows before a part. */
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

/**
 * gzip cannot be entered mid-stream: a gzip source is read from its start
 * and its decompressed bytes before `startByte` are dropped unparsed (a row
 * boundary leaves the parser nothing to carry over).
 */
function decoding(dialect: Dialect, from: ReadFrom, bom: number): Transform[] {
  const stages: Transform[] = [];
  if (dialect.compression === 'gzip') stages.push(createGunzip());
  const skipped = dialect.compression === 'gzip' ? from.startByte : 0;
  if (skipped + bom > 0) stages.push(dropFirst(skipped + bom));
  if (dialect.encoding === 'utf-16be') stages.push(swapBytePairs());
  if (dialect.encoding === 'utf-8') stages.push(utf8Check(from.startByte + bom));
  return stages;
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

/** The row a quote that never closes leaves: everything from its start to the end of the file. */
function unclosedRow(row: number, start: number): SourceRow {
  const unreadable = `a quoted field opened in this row never closes; the rest of the file (from byte ${start}) is this one row`;
  return { row, fields: [], end: start, unreadable };
}

/** The rows csv-parse reads from `bytes` (decoded bytes starting at file offset `start`, row `firstRow`). */
async function* parsedRows(
  bytes: Readable,
  dialect: Dialect,
  maxRowBytes: number,
  start: number,
  firstRow: number,
): AsyncGenerator<SourceRow[]> {
  const parser = new RowParser(dialect, maxRowBytes, start, firstRow);
  // pipeline destroys every stage with the first error, so the parser's iterator throws it.
  pipeline(bytes, parser, () => {});
  let next = { row: firstRow, start };
  try {
    for await (const batch of parser as AsyncIterable<ParsedBatch>) {
      if (batch.rows.length > 0) {
        const last = batch.rows.at(-1)!;
        next = { row: last.row + 1, start: last.end };
        yield batch.rows;
      }
      if (!('error' in batch)) continue;
      if (!(batch.error instanceof CsvError && batch.error.code === 'CSV_QUOTE_NOT_CLOSED')) throw batch.error;
      yield [unclosedRow(next.row, next.start)];
      return;
    }
  } catch (err) {
    throw readError(err, next.row, maxRowBytes);
  } finally {
    parser.destroy();
  }
}

/**
 * The strict reader's batches: small enough that a batch's rows die young
 * (rows held across a 1 MiB read outlive the young generation and cost full
 * garbage collections), large enough that per-batch costs vanish.
 */
const BATCH_BYTES = 64 * 1024;

/** The bytes the strict reader took but did not read, then the rest of the stream. */
async function* resumed(taken: Buffer, rest: AsyncIterator<Buffer>): AsyncGenerator<Buffer> {
  if (taken.length > 0) yield taken;
  for (let next = await rest.next(); !next.done; next = await rest.next()) yield next.value;
}

/**
 * The rows from `from.startByte` on, in batches. `raw` is the object's bytes
 * from `from.startByte` on, or for gzip the whole compressed object. `tap`
 * sees the raw bytes first. The strict reader reads what it can (for most
 * files, everything); csv-parse reads from the first row it cannot, and
 * `onNotStrict` hears why. A file the strict reader does not read (UTF-16) is
 * csv-parse's from the start.
 */
export async function* sourceRows(
  raw: Readable,
  dialect: Dialect,
  from: ReadFrom,
  tap?: Transform,
  onNotStrict?: (reason: string) => void,
): AsyncGenerator<SourceRow[]> {
  const bom = from.startByte === 0 && dialect.hasBom ? bomLength(dialect.encoding) : 0;
  const start = from.startByte + bom;
  const stages = [...(tap ? [tap] : []), ...decoding(dialect, from, bom)];
  // pipeline destroys every stage with the first error, so reading the last one throws it.
  const bytes: Readable = stages.length > 0 ? (pipeline([raw, ...stages], () => {}) as Transform) : raw;
  if (!StrictRows.reads(dialect)) {
    onNotStrict?.(`the strict reader does not read ${dialect.encoding}`);
    yield* parsedRows(bytes, dialect, from.maxRowBytes, start, from.firstRow);
    return;
  }
  const reader = new StrictRows(dialect, start, from.firstRow, from.maxRowBytes);
  const chunks = bytes[Symbol.asyncIterator]() as AsyncIterator<Buffer>;
  let unread: Buffer = Buffer.alloc(0);
  try {
    while (reader.stopped === undefined) {
      let next: IteratorResult<Buffer>;
      try {
        next = await chunks.next();
      } catch (err) {
        throw readError(err, reader.resume().row, from.maxRowBytes);
      }
      if (next.done) {
        const rows = reader.finish();
        if (rows.length > 0) yield rows;
        if (reader.stopped === undefined) return;
        break;
      }
      unread = next.value;
      while (unread.length > 0 && reader.stopped === undefined) {
        const slice = unread.subarray(0, BATCH_BYTES);
        unread = unread.subarray(slice.length);
        const rows = reader.take(slice);
        if (rows.length > 0) yield rows;
      }
    }
    const at = reader.resume();
    onNotStrict?.(`${reader.stopped} (row ${at.row}, byte ${at.start})`);
    const rest = Readable.from(resumed(Buffer.concat([at.bytes, unread]), chunks), { objectMode: false });
    yield* parsedRows(rest, dialect, from.maxRowBytes, at.start, at.row);
  } finally {
    bytes.destroy();
  }
}
