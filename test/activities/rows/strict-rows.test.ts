/**
 * The strict reader against csv-parse: the same bytes, cut into chunks of
 * every size, must give the same rows, fields and byte offsets (and the same
 * errors) whether the strict reader reads them or csv-parse does.
 */
import { pipeline, Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { ByteRow } from '../../../activities/rows/byte-row.js';
import { canonicalLine } from '../../../activities/rows/canonical-csv.js';
import type { Delimiter, Dialect } from '../../../activities/rows/dialect.js';
import { RowStageError } from '../../../activities/rows/errors.js';
import { type ParsedBatch, RowParser, type SourceRow } from '../../../activities/rows/row-parser.js';
import { sourceRows } from '../../../activities/rows/source-rows.js';

const MAX_ROW = 1 << 20;
/** The random files are short: a chunk of one byte, a few, and the whole file cover every boundary. */
const FUZZ_CHUNKS = [1, 3, 4096];

function dialectOf(delimiter: Delimiter, encoding: Dialect['encoding'] = 'utf-8', hasBom = false): Dialect {
  return { compression: 'none', encoding, hasBom, delimiter, lineEnd: 'LF' };
}

function chunked(bytes: Buffer, size: number): Readable {
  const chunks: Buffer[] = [];
  for (let i = 0; i < bytes.length; i += size) chunks.push(bytes.subarray(i, i + size));
  return Readable.from(chunks, { objectMode: false });
}

type Outcome = { rows: Omit<SourceRow, 'canonical'>[] } | { error: string };

/** The rows as the row stage reads them: the strict reader first, csv-parse from where it stops. */
async function staged(bytes: Buffer, dialect: Dialect, chunk: number, maxRowBytes = MAX_ROW): Promise<Outcome> {
  const rows: Omit<SourceRow, 'canonical'>[] = [];
  try {
    for await (const batch of sourceRows(chunked(bytes, chunk), dialect, { startByte: 0, firstRow: 1, maxRowBytes })) {
      for (const read of batch) {
        // Read through the row's accessors: a plain row decodes its fields only when asked.
        const row = { row: read.row, fields: read.fields, end: read.end };
        if (read.unreadable !== undefined) Object.assign(row, { unreadable: read.unreadable });
        // A line the reader wrote (as text, or as the row's own bytes) must be exactly the writer's.
        if (read.canonical !== undefined) expect(lineText(read.canonical)).toBe(canonicalLine(row.fields));
        if (read instanceof ByteRow) expectSameAnswers(read, row.fields);
        rows.push(row);
      }
    }
  } catch (err) {
    return { error: err instanceof RowStageError ? `${err.code}` : String(err) };
  }
  return { rows };
}

/** A plain row's answers from its bytes are those its decoded fields give. */
function expectSameAnswers(row: ByteRow, fields: string[]): void {
  expect(row.fieldCount()).toBe(fields.length);
  fields.forEach((field, column) => {
    expect(row.field(column)).toBe(field);
    expect(row.isBlank(column)).toBe(field.trim() === '');
  });
}

/** The rows as csv-parse alone reads them (the row stage's behaviour before the strict reader). */
async function parsedOnly(bytes: Buffer, dialect: Dialect, maxRowBytes = MAX_ROW): Promise<Outcome> {
  const bom = dialect.hasBom ? 3 : 0;
  const parser = new RowParser(dialect, maxRowBytes, bom, 1);
  pipeline(Readable.from([bytes.subarray(bom)]), parser, () => {});
  const rows: Omit<SourceRow, 'canonical'>[] = [];
  try {
    for await (const batch of parser as AsyncIterable<ParsedBatch>) {
      rows.push(...batch.rows);
      if ('error' in batch) {
        if ((batch.error as { code?: string }).code !== 'CSV_QUOTE_NOT_CLOSED') throw batch.error;
        const last = rows.at(-1);
        const start = last?.end ?? bom;
        rows.push({
          row: (last?.row ?? 0) + 1,
          fields: [],
          end: start,
          unreadable: `a quoted field opened in this row never closes; the rest of the file (from byte ${start}) is this one row`,
        });
        break;
      }
    }
  } catch (err) {
    const code = (err as { code?: string }).code;
    return { error: code === 'CSV_MAX_RECORD_SIZE' ? 'RowTooLong' : String(err) };
  }
  return { rows };
}

async function expectSameRows(
  bytes: Buffer,
  dialect: Dialect,
  maxRowBytes = MAX_ROW,
  chunks = [1, 2, 3, 7, 64, 4096],
): Promise<Outcome> {
  const expected = await parsedOnly(bytes, dialect, maxRowBytes);
  for (const chunk of chunks) {
    expect({ chunk, ...(await staged(bytes, dialect, chunk, maxRowBytes)) }).toEqual({ chunk, ...expected });
  }
  return expected;
}

const utf8 = (text: string) => Buffer.from(text, 'utf8');
const lineText = (line: string | Uint8Array) =>
  typeof line === 'string' ? line : `${Buffer.from(line).toString('utf8')}\r\n`;

describe('the strict reader reads what csv-parse reads', () => {
  it('quoted fields holding delimiters, doubled quotes and line breaks of every kind', async () => {
    const out = await expectSameRows(
      utf8('a,b,c\n"x, y","say ""hi""","line\nbreak"\r\n"cr\ronly","crlf\r\nin",""\n,,\n"",plain,end'),
      dialectOf(','),
    );
    expect(out).toMatchObject({ rows: expect.arrayContaining([expect.objectContaining({ fields: ['', '', ''] })]) });
  });

  it('LF, CRLF and a last row without a line end; empty lines skipped as csv-parse skips them', async () => {
    await expectSameRows(utf8('h1,h2\n\na,b\r\n\r\nc,d\n\n\ne,f'), dialectOf(','));
    await expectSameRows(utf8('h1,h2\r\na,b\r\n'), dialectOf(','));
    await expectSameRows(utf8('h1,h2\na,b\n\r'), dialectOf(','));
  });

  it('lines ending in CR alone, from the header on or later (csv-parse reads from there)', async () => {
    await expectSameRows(utf8('h1,h2\ra,b\rc,d\r'), dialectOf(','));
    await expectSameRows(utf8('h1,h2\na,b\nc,d\re,f\n'), dialectOf(','));
    await expectSameRows(utf8('h1,h2\n"a"\rb,c\n'), dialectOf(','));
  });

  it('a stray quote in an unquoted field, and text after a closing quote', async () => {
    await expectSameRows(utf8('name,size\nTV,55" screen\nok,1\n'), dialectOf(','));
    await expectSameRows(utf8('name,size\n"TV" big,55\nok,1\n'), dialectOf(','));
  });

  it('a UTF-8 byte order mark, and characters of several bytes split across chunks', async () => {
    await expectSameRows(utf8('\uFEFFNom,Ville\nCafé,Zürich\n"Straße, 1",東京\n😀,€\n'), dialectOf(',', 'utf-8', true));
  });

  it('other delimiters, and Windows-1252 bytes with the curly quotes and euro sign', async () => {
    const latin = Buffer.from('Name;Note\n"A; B";caf\xe9\n\x80 10;\x93quoted\x94\n', 'latin1');
    const out = await expectSameRows(latin, dialectOf(';', 'windows-1252'));
    expect(out).toMatchObject({
      rows: expect.arrayContaining([expect.objectContaining({ fields: ['€ 10', '“quoted”'] })]),
    });
    await expectSameRows(utf8('a\tb\n"x\ty"\tz\n'), dialectOf('\t'));
    await expectSameRows(utf8('a|b\nx|"y|z"\n'), dialectOf('|'));
  });

  it('rows longer than any chunk, and a row over the row bound', async () => {
    const long = 'x'.repeat(10_000);
    await expectSameRows(utf8(`h1,h2\n${long},"${long}\n${long}"\nend,1\n`), dialectOf(','));
    const tooLong = await expectSameRows(utf8(`h1,h2\n${long},y\nend,1\n`), dialectOf(','), 5_000);
    expect(tooLong).toEqual({ error: 'RowTooLong' });
  });

  it('a quote that never closes: the rest of the file is one unreadable row', async () => {
    const out = await expectSameRows(utf8('h1,h2\na,b\n"open,c\nd,e\n'), dialectOf(','));
    expect(out).toMatchObject({
      rows: expect.arrayContaining([expect.objectContaining({ unreadable: expect.any(String) })]),
    });
  });

  it('passes a row that already is its canonical line on as its own bytes, and one with needless quotes as text', async () => {
    const bytes = utf8('h1,h2\nplain,row\n"needs, quotes","say ""hi"""\n"needless",quotes\n');
    const rows: SourceRow[] = [];
    const from = { startByte: 0, firstRow: 1, maxRowBytes: MAX_ROW };
    for await (const batch of sourceRows(chunked(bytes, 5), dialectOf(','), from)) rows.push(...batch);
    expect(rows.map((r) => (typeof r.canonical === 'string' ? r.canonical : r.canonical?.length))).toEqual([
      5,
      9,
      28,
      'needless,quotes\r\n',
    ]);
    // Kept as bytes, quoted or not: its fields are decoded only when asked, and answer as csv-parse's.
    expect(rows.map((r) => r instanceof ByteRow)).toEqual([true, true, true, false]);
    expect(rows[2]!.fields).toEqual(['needs, quotes', 'say "hi"']);
  });

  it('reads chunks larger than its batches, and hands csv-parse the rest of one it stops in', async () => {
    const rows = Array.from({ length: 5000 }, (_, i) => `row ${i},"note, ${i}"`).join('\n');
    await expectSameRows(utf8(`h1,h2\n${rows}\nstray "quote,here\n${rows}\n`), dialectOf(','), MAX_ROW, [1 << 20]);
  });

  it('random files from the characters CSV is made of', async () => {
    let seed = 7;
    const random = () => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed / 2 ** 31;
    };
    const alphabet = ['a', 'b', ' ', '\t', '\u00a0', 'é', '€', ',', ',', ';', '"', '"', '""', '\n', '\n', '\r\n', '\r'];
    for (let file = 0; file < 200; file++) {
      const length = 1 + Math.floor(random() * 80);
      const text = Array.from({ length }, () => alphabet[Math.floor(random() * alphabet.length)]).join('');
      await expectSameRows(utf8(`h1,h2\n${text}`), dialectOf(','), MAX_ROW, FUZZ_CHUNKS);
      const latin = text.replaceAll('é', '\xe9').replaceAll('€', '\x80');
      await expectSameRows(
        Buffer.from(`h1;h2\n${latin}`, 'latin1'),
        dialectOf(';', 'windows-1252'),
        MAX_ROW,
        FUZZ_CHUNKS,
      );
    }
  });
});
