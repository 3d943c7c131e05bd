/**
 * The row stage's benchmark inputs, written to a file and stored in S3, each
 * of whole rows (a cut-off last row would be refused and change the path):
 * - `canonical`: UTF-8, comma, LF, no quotes, as csv-object.ts writes it;
 * - `gzip`: the same rows gzipped (level 1: the writer's CPU is not measured);
 * - `dialect`: `;`, Windows-1252, CRLF, with a quoted note holding `;`, `,`
 *   and doubled quotes in every row, as a spreadsheet export writes it.
 */
import { createHash } from 'node:crypto';
import { once } from 'node:events';
import { createReadStream, createWriteStream } from 'node:fs';
import { mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Writable } from 'node:stream';
import { finished } from 'node:stream/promises';
import { createGzip } from 'node:zlib';
import { PutObjectCommand, type S3Client } from '@aws-sdk/client-s3';

export type RowInputKind = 'canonical' | 'gzip' | 'dialect';

export interface StoredRowInput {
  etag: string;
  /** The stored object's size (compressed, for gzip). */
  objectBytes: number;
  /** The CSV's size before compression. */
  csvBytes: number;
  sha256: string;
}

const BLOCK_ROWS = 2000;

function rowsOf(kind: RowInputKind, first: number): string {
  const lines: string[] = [];
  for (let i = first; i < first + BLOCK_ROWS; i++) {
    if (kind === 'dialect') {
      const note = `"Société n°${i}; a ""key"" account, since ${1990 + (i % 30)}"`;
      lines.push(`Café ${i} – Ltd;c${i}.example.com;FR;${i % 5000};${note}\r\n`);
    } else {
      lines.push(`Company ${i},company-${i}.example.com,DE,${i % 5000},${1900 + (i % 125)}\n`);
    }
  }
  return lines.join('');
}

async function writeCsv(out: Writable, kind: RowInputKind, csvBytes: number): Promise<number> {
  const encoding = kind === 'dialect' ? 'latin1' : 'utf8';
  const header =
    kind === 'dialect'
      ? 'Account Name;Account Domain;Country;Employees;Notes\r\n'
      : 'Account Name,Account Domain,Country,Employees,Founded\n';
  let written = 0;
  for (let row = -1; written < csvBytes; row += BLOCK_ROWS) {
    const block = Buffer.from(row < 0 ? header : rowsOf(kind, row), encoding);
    written += block.length;
    if (!out.write(block)) await once(out, 'drain');
  }
  out.end();
  return written;
}

/** Writes about `csvBytes` of `kind` rows and stores them at `key`. */
export async function storeRowInput(
  client: S3Client,
  bucket: string,
  key: string,
  kind: RowInputKind,
  csvBytes: number,
): Promise<StoredRowInput> {
  const dir = await mkdtemp(join(tmpdir(), 'bench-rows-'));
  try {
    const path = join(dir, 'object');
    const file = createWriteStream(path);
    let written: number;
    if (kind === 'gzip') {
      const gzip = createGzip({ level: 1 });
      gzip.pipe(file);
      written = await writeCsv(gzip, kind, csvBytes);
    } else {
      written = await writeCsv(file, kind, csvBytes);
    }
    await finished(file);
    const { size } = await stat(path);
    const hash = createHash('sha256');
    for await (const chunk of createReadStream(path)) hash.update(chunk as Buffer);
    const out = await client.send(
      new PutObjectCommand({ Bucket: bucket, Key: key, Body: createReadStream(path), ContentLength: size }),
    );
    if (!out.ETag) throw new Error(`S3 stored ${bucket}/${key} without returning an ETag`);
    return { etag: out.ETag, objectBytes: size, csvBytes: written, sha256: hash.digest('hex') };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
