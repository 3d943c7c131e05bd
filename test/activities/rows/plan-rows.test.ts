import { createWriteStream } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  detectDialect,
  partBody,
  planRows,
  planVerdict,
  type RowChecks,
  RowStageError,
} from '../../../activities/rows/index.js';
import { bytesOf, planFile, type SourceFile, SourceFiles } from './source-files.js';

const ACCOUNTS: RowChecks = { entityType: 'Account' };
const BIG = 1 << 30;
let files: SourceFiles;
beforeAll(async () => {
  files = await SourceFiles.create();
});
afterAll(() => files.remove());

async function planOf(
  bytes: Uint8Array | string,
  options: {
    checks?: RowChecks;
    maxPartBytes?: number;
    encoding?: 'windows-1252' | 'latin1';
    sourceBytes?: number;
  } = {},
) {
  const file = await files.write(bytes);
  const sample = Buffer.from(bytes).subarray(0, 64 * 1024);
  const dialect = detectDialect(sample, {
    complete: sample.length === Buffer.from(bytes).length,
    encoding: options.encoding,
  });
  const { plan, rejects, opens } = await planFile(file, {
    dialect,
    checks: options.checks ?? ACCOUNTS,
    maxPartBytes: options.maxPartBytes ?? BIG,
    sourceBytes: options.sourceBytes,
  });
  return { file, plan, rejects, opens };
}

async function bodies(plan: Awaited<ReturnType<typeof planOf>>['plan'], file: SourceFile): Promise<string[]> {
  const out: string[] = [];
  for (const part of plan.parts) out.push((await bytesOf(partBody(plan, part.number, file.open))).toString('utf8'));
  return out;
}

describe('a file already in the form the service takes', () => {
  it('is sent byte for byte, as one part the size of the object', async () => {
    const csv = 'Account Name,Account Domain\n"Acme, Inc.",acme.com\nGlobex,"globex.com"\n';
    const { file, plan } = await planOf(csv);
    expect(plan.body).toBe('original');
    expect(plan.parts).toEqual([
      expect.objectContaining({
        number: 1,
        firstRow: 2,
        lastRow: 3,
        rowsSent: 2,
        startByte: 0,
        bytes: Buffer.byteLength(csv),
      }),
    ]);
    expect((await bytesOf(partBody(plan, 1, file.open))).toString()).toBe(csv);
  });

  it('is rewritten when a row is refused, so the service never receives that row', async () => {
    const { file, plan, rejects } = await planOf('Account Name,Account Domain\nAcme,acme.com\n,nameless.com\n');
    expect(plan.body).toBe('canonical');
    expect(await bodies(plan, file)).toEqual(['Account Name,Account Domain\r\nAcme,acme.com\r\n']);
    expect(rejects).toBe(
      'Source Row,Reason,Account Name,Account Domain\r\n3,"""Account Name"" is empty",,nameless.com\r\n',
    );
  });

  it('is read once when it goes as it is, and again from its start once a row rules that out', async () => {
    const rows = Array.from({ length: 200 }, (_, i) => `Acme ${i},"acme${i}.com, Inc."\n`).join('');
    const header = 'Account Name,Account Domain\n';
    expect((await planOf(header + rows)).opens).toBe(1);
    // Rewritten: a stray quote late in the file, then a refused row late in it.
    const stray = await planOf(`${header}${rows}Initech,say "hi"\n`);
    expect({ body: stray.plan.body, opens: stray.opens }).toEqual({ body: 'canonical', opens: 2 });
    const refused = await planOf(`${header}${rows},nameless.com\n`);
    expect({ body: refused.plan.body, opens: refused.opens }).toEqual({ body: 'canonical', opens: 2 });
  });

  it('is cut from the first row, read once, when its size says it is over a part', async () => {
    const csv = `Account Name,Account Domain\n${'Acme,acme.com\n'.repeat(100)}`;
    const sized = await planOf(csv, { maxPartBytes: 500, sourceBytes: Buffer.byteLength(csv) });
    expect({ parts: sized.plan.parts.length, opens: sized.opens }).toEqual({ parts: 4, opens: 1 });
    // Without its size, the pass finds out at a part's worth of bytes and starts over.
    const unsized = await planOf(csv, { maxPartBytes: 500 });
    expect({ plan: unsized.plan, opens: unsized.opens }).toEqual({ plan: sized.plan, opens: 2 });
  });
});

describe('any CSV a person or an export tool writes becomes canonical CSV', () => {
  const CANONICAL = 'Account Name,Account Domain\r\n"Café; ""Le Zinc""",zinc.fr\r\n€uro – Ltd,euro.com\r\n';

  it('drops a UTF-8 byte order mark', async () => {
    const { file, plan } = await planOf(`\uFEFFAccount Name,Account Domain\nAcme,acme.com\n`);
    expect(plan.body).toBe('canonical');
    expect(await bodies(plan, file)).toEqual(['Account Name,Account Domain\r\nAcme,acme.com\r\n']);
  });

  it('decodes Windows-1252 with ; and CRLF, curly quotes and euro sign included', async () => {
    const source = Buffer.from(
      [0x41, 0x63, 0x63, 0x6f, 0x75, 0x6e, 0x74, 0x20, 0x4e, 0x61, 0x6d, 0x65, 0x3b].concat(
        [...Buffer.from('Account Domain\r\n"Caf', 'latin1')],
        [0xe9, 0x3b, 0x20, 0x22, 0x22, 0x4c, 0x65, 0x20, 0x5a, 0x69, 0x6e, 0x63, 0x22, 0x22, 0x22, 0x3b],
        [
          ...Buffer.from('zinc.fr\r\n', 'latin1'),
          0x80,
          ...Buffer.from('uro ', 'latin1'),
          0x96,
          ...Buffer.from(' Ltd;euro.com\r\n', 'latin1'),
        ],
      ),
    );
    const { file, plan } = await planOf(source, { encoding: 'windows-1252' });
    expect(plan.dialect).toMatchObject({ encoding: 'windows-1252', delimiter: ';' });
    expect(await bodies(plan, file)).toEqual([CANONICAL]);
  });

  it('decodes Latin-1 as Latin-1', async () => {
    const { file, plan } = await planOf(Buffer.from('Account Name|Account Domain\nSociété|soc.fr\n', 'latin1'), {
      encoding: 'latin1',
    });
    expect(await bodies(plan, file)).toEqual(['Account Name,Account Domain\r\nSociété,soc.fr\r\n']);
  });

  it('decodes UTF-16 LE and BE with their byte order marks, tab-delimited', async () => {
    const text = '\uFEFFAccount Name\tAccount Domain\r\n"Café; ""Le Zinc"""\tzinc.fr\r\n€uro – Ltd\teuro.com\r\n';
    const le = Buffer.from(text, 'utf16le');
    const be = Buffer.from(text, 'utf16le').swap16();
    for (const bytes of [le, be]) {
      const { file, plan } = await planOf(bytes);
      expect(await bodies(plan, file)).toEqual([CANONICAL]);
    }
  });

  it('splits records on CR alone, and keeps quoted delimiters, quotes and line breaks', async () => {
    const source = 'Account Name|Account Domain\r"Multi\nline | ""quoted"""|a.com\rPlain|b.com\r';
    const { file, plan } = await planOf(source);
    expect(plan.dialect.lineEnd).toBe('CR');
    expect(await bodies(plan, file)).toEqual([
      'Account Name,Account Domain\r\n"Multi\nline | ""quoted""",a.com\r\nPlain,b.com\r\n',
    ]);
  });

  it('reads gzip whatever the key, and sends what it holds', async () => {
    const source = 'Account Name;Account Domain\nAcme;acme.com\n';
    const { file, plan } = await planOf(gzipSync(source));
    expect(plan.dialect.compression).toBe('gzip');
    expect(await bodies(plan, file)).toEqual(['Account Name,Account Domain\r\nAcme,acme.com\r\n']);
  });

  it('quotes a stray quote that an unquoted field holds, even in a file otherwise sent as it is', async () => {
    const { file, plan } = await planOf('Account Name,Account Domain\n5" Screens,screens.com\n');
    expect(plan.body).toBe('canonical');
    expect(await bodies(plan, file)).toEqual(['Account Name,Account Domain\r\n"5"" Screens",screens.com\r\n']);
  });
});

describe('rows the service would refuse', () => {
  const checks: RowChecks = {
    entityType: 'Account',
    fieldMappings: {
      objectType: 'account',
      mappings: [
        { sourceFieldLabel: 'Company', serviceFieldName: 'name', dataType: 'string' },
        { sourceFieldLabel: 'Website', serviceFieldName: 'domain', dataType: 'string' },
        { sourceFieldLabel: 'Employees', serviceFieldName: 'employees', dataType: 'Number' },
        { sourceFieldLabel: 'Public', serviceFieldName: 'isPublic', dataType: 'boolean' },
        { sourceFieldLabel: 'Founded', serviceFieldName: 'founded', dataType: 'date' },
      ],
    },
  };
  const source = [
    'Company,Website,Employees,Public,Founded',
    'Acme,acme.com,1200,true,1999-04-01',
    'Short,short.com,12',
    ',noname.com,5,no,2001-01-01',
    'Typed,typed.com,many,perhaps,2001-02-30',
    'Empty optionals,empty.com,,,',
    'Last,"last.com,5,yes,2020-01-01',
    '',
  ].join('\n');

  it('are reported with their row number, reason and fields; the rest are sent', async () => {
    const { file, plan, rejects } = await planOf(source, { checks });
    expect(plan).toMatchObject({ rowsRead: 6, rowsSent: 2, rowsRejected: 4 });
    expect(await bodies(plan, file)).toEqual([
      'Company,Website,Employees,Public,Founded\r\nAcme,acme.com,1200,true,1999-04-01\r\nEmpty optionals,empty.com,,,\r\n',
    ]);
    expect(rejects.split('\r\n')).toEqual([
      'Source Row,Reason,Company,Website,Employees,Public,Founded',
      '3,3 field(s); the header has 5,Short,short.com,12',
      '4,"""Company"" is empty",,noname.com,5,no,2001-01-01',
      '5,"""Employees"" is ""many"", not a number; ""Public"" is ""perhaps"", not a boolean; ""Founded"" is ""2001-02-30"", not a date",Typed,typed.com,many,perhaps,2001-02-30',
      '7,a quoted field opened in this row never closes; the rest of the file (from byte 192) is this one row',
      '',
    ]);
  });

  it('stop the import before any job when the operator chose to fail', async () => {
    const { plan } = await planOf(source, { checks });
    expect(planVerdict(plan, 'skip')).toEqual({ outcome: 'send' });
    expect(planVerdict(plan, 'fail')).toMatchObject({
      outcome: 'refused',
      message: expect.stringMatching(/^4 of 6 row\(s\) would be refused/),
    });
  });

  it('include bytes that are not UTF-8: the file is refused, naming the byte', async () => {
    const bytes = Buffer.concat([
      Buffer.from('Account Name,Account Domain\nAcme,acme.com\n'),
      Buffer.from('Café,cafe.fr\n', 'latin1'),
    ]);
    const file = await files.write(bytes);
    const dialect = detectDialect(bytes.subarray(0, 40));
    await expect(planFile(file, { dialect, checks: ACCOUNTS, maxPartBytes: BIG })).rejects.toThrow(
      /byte 45 \(0xe9.*declare/,
    );
  });
});

describe('files with nothing to send', () => {
  it('a header-only file has no parts, and the import finishes without a job', async () => {
    for (const source of [
      'Account Name,Account Domain\r\n',
      'Account Name,Account Domain',
      'Account Name,Account Domain\n\n\n',
    ]) {
      const { plan, rejects } = await planOf(source);
      expect(plan).toMatchObject({ rowsRead: 0, rowsSent: 0, parts: [] });
      expect(rejects).toBe('');
      expect(planVerdict(plan, 'fail')).toEqual({
        outcome: 'nothing-to-send',
        message: 'nothing to import: the file holds a header row and no data rows',
      });
    }
  });

  it('a file whose every row is refused has no parts either', async () => {
    const { plan } = await planOf('Account Name,Account Domain\n,a.com\n,b.com\n');
    expect(plan.parts).toEqual([]);
    expect(planVerdict(plan, 'skip')).toMatchObject({
      outcome: 'nothing-to-send',
      message: expect.stringMatching(/all 2 row\(s\) were refused/),
    });
  });
});

describe('rows longer than any buffer', () => {
  it('pass whole, read through 4 KiB chunks', async () => {
    const long = 'x'.repeat(300_000);
    const file = await files.write(`Account Name;Account Domain\n"${long}\n${long}";long.com\n`, 4096);
    const dialect = detectDialect(Buffer.from('Account Name;Account Domain\n'));
    const { plan } = await planFile(file, { dialect, checks: ACCOUNTS, maxPartBytes: BIG });
    const [body] = await bodies(plan, file);
    expect(body).toBe(`Account Name,Account Domain\r\n"${long}\n${long}",long.com\r\n`);
  });

  it('stop the file when one is beyond the row bound, saying why', async () => {
    const file = await files.write(
      `Account Name;Account Domain\n"never closed;a.com\n${'y;b.com\n'.repeat(10_000)}`,
      64 * 1024,
    );
    const dialect = detectDialect(Buffer.from('Account Name;Account Domain\n'));
    const planned = planFile(file, { dialect, checks: ACCOUNTS, maxPartBytes: BIG, maxRowBytes: 50_000 });
    await expect(planned).rejects.toThrow(RowStageError);
    await expect(planned).rejects.toThrow(/row 2 is longer than 50000 bytes.*a quote that never closes/);
  });
});

describe('a gzip object cut short', () => {
  it('is an error, never a silently short body', async () => {
    const whole = gzipSync(`Account Name,Account Domain\n${'Acme,acme.com\n'.repeat(20_000)}`);
    const cut = whole.subarray(0, whole.length - 100);
    const file = await files.write(cut, 1024);
    const dialect = detectDialect(cut.subarray(0, 1024));
    await expect(planFile(file, { dialect, checks: ACCOUNTS, maxPartBytes: BIG })).rejects.toMatchObject({
      name: 'RowStageError',
      code: 'CorruptCompression',
    });
  });

  it('fails a part regenerated from it, before the part is complete', async () => {
    const source = `Account Name,Account Domain\n${'Acme,acme.com\n'.repeat(20_000)}`;
    const { plan } = await planOf(gzipSync(source));
    const whole = gzipSync(source);
    const cut = await files.write(whole.subarray(0, whole.length - 100), 1024);
    const received = bytesOf(partBody(plan, 1, cut.open));
    await expect(received).rejects.toMatchObject({ code: 'CorruptCompression' });
  });
});

describe('a pass that fails', () => {
  it('lets its rejects file go without an error event nobody hears, which would end the worker process', async () => {
    const whole = gzipSync(`Account Name,Account Domain\n${'Acme,acme.com\n'.repeat(20_000)}`);
    const file = await files.write(whole.subarray(0, whole.length - 100), 1024);
    const dir = await mkdtemp(join(tmpdir(), 'rejects-'));
    // The sink the planRows activity passes: a file, which nothing reads.
    const sink = createWriteStream(join(dir, 'rejects.csv'));
    const unheard: unknown[] = [];
    const hear = (err: unknown) => unheard.push(err);
    process.on('uncaughtException', hear);
    try {
      const pass = planRows(await file.open(0), {
        dialect: detectDialect(whole.subarray(0, 1024)),
        checks: ACCOUNTS,
        maxPartBytes: BIG,
        rejects: sink,
      });
      await expect(pass).rejects.toMatchObject({ code: 'CorruptCompression' });
      await new Promise((resolve) => setTimeout(resolve, 50));
      expect(sink.destroyed).toBe(true);
    } finally {
      process.off('uncaughtException', hear);
      await rm(dir, { recursive: true, force: true });
    }
    expect(unheard).toEqual([]);
  });
});

describe("a file in the service's dialect that a strict reader would read otherwise", () => {
  it('is rewritten when text follows a closing quote', async () => {
    const { plan } = await planOf('Account Name,Account Domain\n"Acme" Inc,acme.com\n');
    expect(plan.body).toBe('canonical');
  });

  it("is sent as it is when its quotes are all RFC 4180's, line breaks in fields included", async () => {
    const { plan } = await planOf('Account Name,Account Domain\r\n"A ""b"",\r\nc\rd",a.com\r\n"B","b.com"\r\n');
    expect(plan.body).toBe('original');
  });

  it('is rewritten when a later line ends in a lone CR', async () => {
    const { file, plan } = await planOf('Account Name,Account Domain\nAcme,acme.com\rGlobex,globex.com\n');
    expect(plan.body).toBe('canonical');
    expect(await bodies(plan, file)).toEqual(['Account Name,Account Domain\r\nAcme,acme.com\r\nGlobex,globex.com\r\n']);
  });

  it('is rewritten when its last line ends in a lone CR, and when a quote sits in an unquoted field', async () => {
    expect((await planOf('Account Name,Account Domain\nAcme,acme.com\r')).plan.body).toBe('canonical');
    expect((await planOf('Account Name,Account Domain\nAcme 5" TV,acme.com\n')).plan.body).toBe('canonical');
  });
});
