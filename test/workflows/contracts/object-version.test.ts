import { describe, expect, it } from 'vitest';
import { normaliseEtag } from '../../../workflows/contracts/object-version.js';

describe('normaliseEtag', () => {
  it('spells a quoted, a weak and a bare ETag of one version alike', () => {
    for (const etag of ['"9b2cf535f27731c974343645a3985328"', 'W/"9b2cf535f27731c974343645a3985328"']) {
      expect(normaliseEtag(etag)).toBe('9b2cf535f27731c974343645a3985328');
    }
    expect(normaliseEtag('9b2cf535f27731c974343645a3985328')).toBe('9b2cf535f27731c974343645a3985328');
  });

  it('keeps a multipart upload ETag whole, part count included', () => {
    expect(normaliseEtag('"d41d8cd98f00b204e9800998ecf8427e-12"')).toBe('d41d8cd98f00b204e9800998ecf8427e-12');
  });

  it('ignores whitespace around the header value', () => {
    expect(normaliseEtag('  "abc"\t')).toBe('abc');
  });

  it('removes quotes only as a pair, so a value with one stray quote is not taken for a well-formed one', () => {
    expect(normaliseEtag('"abc')).toBe('"abc');
    expect(normaliseEtag('abc"')).toBe('abc"');
    expect(normaliseEtag('"abc')).not.toBe(normaliseEtag('"abc"'));
  });
});
