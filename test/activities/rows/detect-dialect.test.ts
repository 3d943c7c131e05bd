import { gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { describeDialect, detectDialect, isCanonicalDialect, RowStageError } from '../../../activities/rows/index.js';

const utf8 = (s: string) => Buffer.from(s, 'utf8');
const HEADER = 'Account Name,Account Domain\r\nAcme,acme.com\r\n';

function refusal(sample: Uint8Array, options = {}): RowStageError {
  try {
    detectDialect(sample, options);
  } catch (err) {
    if (err instanceof RowStageError) return err;
    throw err;
  }
  throw new Error('expected a RowStageError');
}

describe('detecting a dialect from the first bytes', () => {
  it('takes a UTF-8, comma, CRLF or LF file without BOM as canonical', () => {
    const d = detectDialect(utf8(HEADER));
    expect(d).toEqual({ compression: 'none', encoding: 'utf-8', hasBom: false, delimiter: ',', lineEnd: 'CRLF' });
    expect(isCanonicalDialect(d)).toBe(true);
    expect(isCanonicalDialect(detectDialect(utf8('a,b\nc,d\n')))).toBe(true);
  });

  it('finds gzip by its magic bytes, and reads the dialect of what it holds', () => {
    const d = detectDialect(gzipSync(utf8('a;b\nc;d\n')));
    expect(d).toMatchObject({ compression: 'gzip', delimiter: ';', lineEnd: 'LF' });
    expect(isCanonicalDialect(d)).toBe(false);
    expect(describeDialect(d)).toBe('gzip, utf-8, ";", LF');
  });

  it('reads the start of a gzip sample cut short', () => {
    const whole = gzipSync(utf8(`a|b\n${'x|y\n'.repeat(50_000)}`));
    expect(detectDialect(whole.subarray(0, 200))).toMatchObject({ compression: 'gzip', delimiter: '|' });
  });

  it('reads the byte order marks of UTF-8 and UTF-16 LE and BE', () => {
    const bom8 = detectDialect(Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), utf8(HEADER)]));
    expect(bom8).toMatchObject({ encoding: 'utf-8', hasBom: true });
    expect(isCanonicalDialect(bom8)).toBe(false);
    const le = Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from('a\tb\r\nc\td\r\n', 'utf16le')]);
    expect(detectDialect(le)).toMatchObject({ encoding: 'utf-16le', hasBom: true, delimiter: '\t', lineEnd: 'CRLF' });
    const be = Buffer.from(Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from('a;b\rc;d\r', 'utf16le')])).swap16();
    expect(detectDialect(be)).toMatchObject({ encoding: 'utf-16be', hasBom: true, delimiter: ';', lineEnd: 'CR' });
  });

  it('uses a declared single-byte encoding', () => {
    const latin = Buffer.from('Société;Domaine\r\nCafé;cafe.fr\r\n', 'latin1');
    expect(detectDialect(latin, { encoding: 'windows-1252' })).toMatchObject({
      encoding: 'windows-1252',
      delimiter: ';',
    });
    expect(detectDialect(latin, { encoding: 'latin1' })).toMatchObject({ encoding: 'latin1' });
  });

  it('refuses bytes that are not UTF-8 when none is declared, naming the byte and the fix', () => {
    const err = refusal(Buffer.from('Name,Domain\r\nCafé,cafe.fr\r\n', 'latin1'));
    expect(err.code).toBe('NotUtf8');
    expect(err.message).toMatch(/byte 16 \(0xe9.*declare that encoding/);
  });

  it('refuses UTF-16 without a byte order mark, and a BOM that contradicts the declared encoding', () => {
    expect(refusal(Buffer.from('a,b\r\n', 'utf16le')).code).toBe('UnsupportedEncoding');
    const bom8 = Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), utf8(HEADER)]);
    expect(refusal(bom8, { encoding: 'windows-1252' }).message).toMatch(
      /utf-8 byte order mark but the import declares windows-1252/,
    );
  });

  it('picks the delimiter the header uses most outside quotes, unless one is set', () => {
    expect(detectDialect(utf8('"a;b",c\n')).delimiter).toBe(',');
    expect(detectDialect(utf8('a|b|c\n')).delimiter).toBe('|');
    expect(detectDialect(utf8('a|b|c\n'), { delimiter: ';' }).delimiter).toBe(';');
  });

  it("finds the header row's end past a quoted line break", () => {
    expect(detectDialect(utf8('"multi\r\nline";b\nc;d\n'))).toMatchObject({ delimiter: ';', lineEnd: 'LF' });
  });

  it('takes a whole file of one line as a header row without a line end', () => {
    expect(detectDialect(utf8('a,b'), { complete: true }).lineEnd).toBe('none');
    expect(refusal(utf8('a,b')).code).toBe('NoHeader');
    expect(refusal(utf8(''), { complete: true }).message).toMatch(/empty/);
  });
});
