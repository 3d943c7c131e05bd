/**
 * Stores a CSV-like object of an exact size in S3, generated as a stream
 * (never whole in memory) and hashed on the way, so the benchmark can check
 * that what the service received is byte for byte what S3 holds.
 */
import { createHash } from 'node:crypto';
import { Readable } from 'node:stream';
import { PutObjectCommand, type S3Client } from '@aws-sdk/client-s3';

const BLOCK_BYTES = 1024 * 1024;
const HEADER = 'Account Name,Account Domain,Country,Employees,Founded\n';

/** Rows with running numbers, cut to exactly `sizeBytes` (the last row may be partial). */
async function* csvBlocks(sizeBytes: number, onBlock: (block: Buffer) => void): AsyncGenerator<Buffer> {
  let remaining = sizeBytes;
  let row = 0;
  let first = true;
  while (remaining > 0) {
    const parts: string[] = first ? [HEADER] : [];
    let length = first ? HEADER.length : 0;
    first = false;
    while (length < BLOCK_BYTES) {
      const line = `Company ${row},company-${row}.example.com,DE,${row % 5000},${1900 + (row % 125)}\n`;
      parts.push(line);
      length += line.length;
      row++;
    }
    let block = Buffer.from(parts.join(''));
    if (block.length > remaining) block = block.subarray(0, remaining);
    remaining -= block.length;
    onBlock(block);
    yield block;
  }
}

interface StoredObject {
  etag: string;
  sha256: string;
}

export async function storeCsvObject(
  client: S3Client,
  bucket: string,
  key: string,
  sizeBytes: number,
): Promise<StoredObject> {
  const hash = createHash('sha256');
  const body = Readable.from(
    csvBlocks(sizeBytes, (b) => hash.update(b)),
    { objectMode: false },
  );
  const out = await client.send(
    new PutObjectCommand({ Bucket: bucket, Key: key, Body: body, ContentLength: sizeBytes }),
  );
  if (!out.ETag) throw new Error(`S3 stored ${bucket}/${key} without returning an ETag`);
  return { etag: out.ETag, sha256: hash.digest('hex') };
}
