import { writeFile } from 'node:fs/promises';
import { gzipSync } from 'node:zlib';
import { parse } from 'csv-parse/sync';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Delimiter, detectDialect, partBody, type RowPlan } from '../../../activities/rows/index.js';
import { bytesOf, planFile, type SourceFile, SourceFiles } from './source-files.js';

const ACCOUNTS = { entityType: 'Account' } as const;
let files: SourceFiles;
beforeAll(async () => {
  files = await SourceFiles.create();
});
afterAll(() => files.remove());

async function bodiesOf(plan: RowPlan, file: SourceFile): Promise<Buffer[]> {
  return Promise.all(plan.parts.map((part) => bytesOf(partBody(plan, part.number, file.open))));
}

describe('parts cut at row boundaries', () => {
  const rows = Array.from({ length: 10 }, (_, i) => `Company ${i};c${i}.com`);
  const source = `Account Name;Account Domain\n${rows.join('\n')}\n`;
  const header = 'Account Name,Account Domain\r\n';
  // The header (29 bytes) and three rows of 18 bytes fit in 83 bytes; a fourth does not.
  const maxPartBytes = 83;

  it('each start with the header and hold whole rows, at most maxPartBytes', async () => {
    for (const bytes of [Buffer.from(source), gzipSync(source)]) {
      const file = await files.write(bytes);
      const dialect = detectDialect(bytes.subarray(0, 64), {});
      const { plan } = await planFile(file, { dialect, checks: ACCOUNTS, maxPartBytes });
      expect(plan.parts.map((p) => [p.firstRow, p.lastRow, p.bytes])).toEqual([
        [2, 4, 83],
        [5, 7, 83],
        [8, 10, 83],
        [11, 11, 47],
      ]);
      const bodies = (await bodiesOf(plan, file)).map((b) => b.toString());
      expect(bodies[1]).toBe(`${header}Company 3,c3.com\r\nCompany 4,c4.com\r\nCompany 5,c5.com\r\n`);
      expect(bodies[3]).toBe(`${header}Company 9,c9.com\r\n`);
    }
  });

  it('report their progress as the planning pass reads them', async () => {
    const bytes = Buffer.from(source);
    const file = await files.write(bytes, 40);
    const seen: { rowsRead: number; bytesRead: number }[] = [];
    await planFile(file, {
      dialect: detectDialect(bytes),
      checks: ACCOUNTS,
      maxPartBytes,
      onProgress: (p) => seen.push(p),
    });
    expect(seen.length).toBeGreaterThan(1);
    expect(seen.at(-1)).toEqual({ rowsRead: 10, bytesRead: bytes.length });
    expect(seen.map((p) => p.bytesRead)).toEqual([...seen.map((p) => p.bytesRead)].sort((a, b) => a - b));
  });

  it('refuse a row too large for any part, and go on', async () => {
    const big = `Big ${'x'.repeat(80)};big.com`;
    const bytes = Buffer.from(`Account Name;Account Domain\n${rows[0]}\n${big}\n${rows[1]}\n`);
    const file = await files.write(bytes);
    const { plan, rejects } = await planFile(file, { dialect: detectDialect(bytes), checks: ACCOUNTS, maxPartBytes });
    expect(plan).toMatchObject({ rowsRead: 3, rowsSent: 2, rowsRejected: 1 });
    expect(rejects).toMatch(
      /^3,94 bytes as canonical CSV; with the header a part may hold at most 83 bytes,Big x+,big\.com\r$/m,
    );
  });

  it('regenerate a part from its recorded first byte without reading the parts before', async () => {
    const bytes = Buffer.from(source);
    const file = await files.write(bytes);
    const { plan } = await planFile(file, { dialect: detectDialect(bytes), checks: ACCOUNTS, maxPartBytes });
    const starts: number[] = [];
    const opened = async (start: number) => {
      starts.push(start);
      return file.open(start);
    };
    const body = await bytesOf(partBody(plan, 3, opened));
    expect(starts).toEqual([plan.parts[2]!.startByte]);
    expect(bytes.subarray(plan.parts[2]!.startByte).toString().startsWith('Company 6;')).toBe(true);
    expect(body.toString()).toBe(`${header}Company 6,c6.com\r\nCompany 7,c7.com\r\nCompany 8,c8.com\r\n`);
  });

  it('refuse to complete a part whose source changed since the plan', async () => {
    const bytes = Buffer.from(source);
    const file = await files.write(bytes, 64 * 1024);
    const { plan } = await planFile(file, { dialect: detectDialect(bytes), checks: ACCOUNTS, maxPartBytes });
    await writeFile(file.path, source.replace('Company 4', 'Company X'));
    const sent: Buffer[] = [];
    const body = partBody(plan, 2, file.open);
    body.on('data', (chunk: Buffer) => sent.push(chunk));
    await expect(new Promise((resolve, reject) => body.on('end', resolve).on('error', reject))).rejects.toMatchObject({
      code: 'PartChanged',
    });
    expect(Buffer.concat(sent).length).toBeLessThan(plan.parts[1]!.bytes);
  });
});

/** A small seeded generator (mulberry32): the same seed gives the same files on every run. */
function random(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

interface Generated {
  bytes: Buffer;
  encoding?: 'windows-1252';
  /** Per data row: its fields, and whether the service would take it. */
  rows: { fields: string[]; good: boolean }[];
}

const PIECES = ['a', 'Zürich', 'São', '€5', ' ', '"', "'", '\n', '\r\n', 'x'.repeat(40), '–', 'Ω'];

function generate(seed: number): Generated {
  const next = random(seed);
  const pick = <T>(items: readonly T[]): T => items[Math.floor(next() * items.length)]!;
  // The dialect follows the seed, so that seeds 1 to 8 cover every delimiter, line end, encoding and gzip.
  const delimiter = ([',', ';', '\t', '|'] as Delimiter[])[seed % 4]!;
  const lineEnd = ['\r\n', '\n', '\r'][seed % 3]!;
  const encoding = (['utf-8', 'utf-8-bom', 'utf-16le', 'windows-1252'] as const)[Math.floor(seed / 2) % 4]!;
  const value = () =>
    Array.from({ length: Math.floor(next() * 4) }, () => pick(PIECES)).join('') + pick(PIECES.slice(0, 4));
  const quote = (v: string) => (/[",;\t|\r\n]/.test(v) || v.startsWith(' ') ? `"${v.replaceAll('"', '""')}"` : v);
  const rows: Generated['rows'] = [];
  const lines = [['Account Name', 'Account Domain', 'Note'].join(delimiter)];
  for (let i = 0; i < 300; i++) {
    const kind = next();
    const fields = [value(), value(), value()];
    if (kind < 0.05)
      fields.pop(); // one field short
    else if (kind < 0.1) fields[0] = ''; // a required field empty
    rows.push({ fields, good: kind >= 0.1 });
    lines.push(fields.map(quote).join(delimiter));
  }
  const text = lines.join(lineEnd) + lineEnd;
  const bytes =
    encoding === 'utf-16le'
      ? Buffer.from(`\uFEFF${text}`, 'utf16le')
      : encoding === 'utf-8-bom'
        ? Buffer.from(`\uFEFF${text}`)
        : encoding === 'windows-1252'
          ? Buffer.from(text.replaceAll('€', '\u0080').replaceAll('–', '\u0096').replaceAll('Ω', 'O'), 'latin1')
          : Buffer.from(text);
  if (encoding === 'windows-1252') for (const r of rows) r.fields = r.fields.map((f) => f.replaceAll('Ω', 'O'));
  return {
    bytes: seed % 2 === 0 ? gzipSync(bytes) : bytes,
    rows,
    ...(encoding === 'windows-1252' ? { encoding } : {}),
  };
}

describe('every source row reaches exactly one part or the rejects, in order', () => {
  for (const seed of [1, 2, 3, 4, 5, 6, 7, 8]) {
    it(`for generated file ${seed}, the same on two runs`, async () => {
      const generated = generate(seed);
      const file = await files.write(generated.bytes, 1000);
      const dialect = detectDialect(generated.bytes.subarray(0, 4096), { encoding: generated.encoding });
      const maxPartBytes = 2_000 + seed * 500;
      const first = await planFile(file, { dialect, checks: ACCOUNTS, maxPartBytes });
      const second = await planFile(file, { dialect, checks: ACCOUNTS, maxPartBytes });
      expect(second).toEqual(first);
      const { plan, rejects } = first;

      // Parts cover the data rows end to end, in order.
      expect(plan.parts[0]!.firstRow).toBe(2);
      expect(plan.parts.at(-1)!.lastRow).toBe(generated.rows.length + 1);
      expect(plan.parts.slice(1).map((part) => part.firstRow)).toEqual(
        plan.parts.slice(0, -1).map((p) => p.lastRow + 1),
      );

      const bodies = await bodiesOf(plan, file);
      expect(await bodiesOf(plan, file)).toEqual(bodies);
      const sent: string[][] = [];
      bodies.forEach((body, i) => {
        expect(body.length).toBe(plan.parts[i]!.bytes);
        expect(body.length).toBeLessThanOrEqual(maxPartBytes);
        const [header, ...records] = parse(body, { relax_column_count: true }) as string[][];
        expect(header).toEqual(['Account Name', 'Account Domain', 'Note']);
        sent.push(...records);
      });
      const rejected = (parse(rejects, { relax_column_count: true }) as string[][]).slice(1);
      expect(sent).toEqual(generated.rows.filter((r) => r.good).map((r) => r.fields));
      expect(rejected.map((r) => Number(r[0]))).toEqual(generated.rows.flatMap((r, i) => (r.good ? [] : [i + 2])));
      expect(rejected.map((r) => r.slice(2))).toEqual(generated.rows.filter((r) => !r.good).map((r) => r.fields));
      expect(plan.rowsSent + plan.rowsRejected).toBe(generated.rows.length);
    });
  }
});

describe('part and row limits', () => {
  it('must be positive whole numbers of bytes', async () => {
    const bytes = Buffer.from('Account Name,Account Domain\nAcme,acme.com\n');
    const file = await files.write(bytes);
    const dialect = detectDialect(bytes);
    await expect(planFile(file, { dialect, checks: ACCOUNTS, maxPartBytes: 0 })).rejects.toThrow(
      'maxPartBytes must be a positive whole number of bytes, got 0',
    );
    await expect(planFile(file, { dialect, checks: ACCOUNTS, maxPartBytes: 100, maxRowBytes: 1.5 })).rejects.toThrow(
      /maxRowBytes must be/,
    );
  });
});
