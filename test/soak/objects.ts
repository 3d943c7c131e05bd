/**
 * The soak's CSV files: small to medium with a few larger ones, each with
 * rows no other file has, so that the content hash names the object version
 * (the simulator records accepted bodies by sha256).
 */
import { createHash } from 'node:crypto';
import { PutObjectCommand, type S3Client } from '@aws-sdk/client-s3';

export interface SoakObject {
  bucket: string;
  key: string;
  etag: string;
  bytes: number;
  sha256: string;
  /** The dataImportName a manual start gives it. */
  name: string;
}

const HEADER = 'Account Name,Account Domain\n';

/** A size in bytes: mostly KB, a third up to a few MB, one in twelve around 6 to 12 MB. */
export function pickSize(random: () => number): number {
  const r = random();
  if (r < 0.6) return 2_000 + Math.floor(random() * 200_000);
  if (r < 11 / 12) return 300_000 + Math.floor(random() * 2_700_000);
  return 6_000_000 + Math.floor(random() * 6_000_000);
}

export function csvOf(tag: string, size: number): Buffer {
  const rows: string[] = [HEADER];
  let length = HEADER.length;
  for (let i = 0; length < size; i++) {
    const row = `Soak ${tag} account ${i},a${i}-${tag}.example.com\n`;
    rows.push(row);
    length += row.length;
  }
  return Buffer.from(rows.join(''));
}

export async function putObject(
  s3: S3Client,
  bucket: string,
  key: string,
  body: Buffer,
  name: string,
): Promise<SoakObject> {
  const out = await s3.send(new PutObjectCommand({ Bucket: bucket, Key: key, Body: body, ContentType: 'text/csv' }));
  return {
    bucket,
    key,
    etag: out.ETag ?? '',
    bytes: body.length,
    sha256: createHash('sha256').update(body).digest('hex'),
    name,
  };
}
