import { Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { utf8Check } from '../../../activities/rows/utf8.js';
import { bytesOf } from './source-files.js';

function chunked(bytes: Buffer, size: number): Readable {
  const chunks: Buffer[] = [];
  for (let i = 0; i < bytes.length; i += size) chunks.push(bytes.subarray(i, i + size));
  return Readable.from(chunks);
}

describe('the UTF-8 check', () => {
  const text = Buffer.from('Zürich – 5 € 😀 naïve '.repeat(20));

  it('passes characters split across chunks of any size, unchanged', async () => {
    for (const size of [1, 2, 3, 5, 7]) expect(await bytesOf(chunked(text, size).pipe(utf8Check()))).toEqual(text);
  });

  it('fails on the first byte that is not UTF-8, at its offset in the file', async () => {
    const bad = Buffer.concat([text, Buffer.from([0xe9, 0x2c]), text]);
    for (const size of [1, 4, 64]) {
      const checked = chunked(bad, size).pipe(utf8Check(100));
      await expect(bytesOf(checked)).rejects.toThrow(`byte ${100 + text.length} (0xe9`);
    }
  });

  it('fails on a file that ends in the middle of a character', async () => {
    const cut = text.subarray(0, text.indexOf(Buffer.from('€')) + 1);
    await expect(bytesOf(chunked(cut, 3).pipe(utf8Check()))).rejects.toMatchObject({ code: 'NotUtf8' });
  });
});
