/**
 * The soak's CSV files: small to medium with a few larger ones, each with
 * rows no other file has, so that the content hash of every body the service
 * should accept names the object version (the simulator records accepted
 * bodies by sha256). Besides files already in the service's form (sent byte
 * for byte), the soak imports files the worker must rewrite: gzip, a
 * `;`-delimited Windows-1252 export, files over the soak's small part
 * limit, split into several jobs, and a file in the service's form with a
 * row the service would refuse, imported with such rows skipped. Their expected bodies are written here by
 * the documented rules (canonical CSV, parts cut greedily at row boundaries),
 * not by the worker's own code.
 */
import { createHash } from 'node:crypto';
import { gzipSync } from 'node:zlib';
import { PutObjectCommand, type S3Client } from '@aws-sdk/client-s3';

/** A body the service should accept: the whole file, or one part of it. */
export interface SoakBody {
  bytes: number;
  sha256: string;
}

export interface SoakObject {
  bucket: string;
  key: string;
  etag: string;
  bytes: number;
  sha256: string;
  /** The dataImportName a manual start gives it. */
  name: string;
  /** What the service should accept for it, in order: one body, or one per part of a split file. */
  bodies: SoakBody[];
  /** The encoding its import declares, when it is not UTF-8. */
  encoding?: 'windows-1252';
  /** Its import skips refused rows (the default fails the import). */
  skipsRejected?: true;
}

/** How a soak file is written. */
export type SoakFileKind = 'plain' | 'gzip' | 'semicolon-1252' | 'refused-row';

export interface SoakFile {
  body: Buffer;
  bodies: SoakBody[];
  encoding?: 'windows-1252';
  skipsRejected?: true;
}

/** The most one job receives in the soak (IMPORT_MAX_PART_BYTES): a larger body is split. */
export const SOAK_MAX_PART_BYTES = 4_000_000;

const LABELS = ['Account Name', 'Account Domain'];

/** A size in bytes: mostly KB, a third up to a few MB, one in twelve around 6 to 12 MB. */
export function pickSize(random: () => number): number {
  const r = random();
  if (r < 0.6) return 2_000 + Math.floor(random() * 200_000);
  if (r < 11 / 12) return 300_000 + Math.floor(random() * 2_700_000);
  return 6_000_000 + Math.floor(random() * 6_000_000);
}

/** The file's data rows, about `size` bytes of them as LF lines. */
function rowsOf(tag: string, size: number, accent: boolean): string[][] {
  const rows: string[][] = [];
  let length = LABELS.join(',').length + 1;
  for (let i = 0; length < size; i++) {
    const row = [`Soak ${tag} ${accent ? 'café' : 'account'} ${i}`, `a${i}-${tag}.example.com`];
    rows.push(row);
    length += row.join(',').length + 1;
  }
  return rows;
}

const sha256 = (b: Buffer) => createHash('sha256').update(b).digest('hex');
const bodyOf = (b: Buffer): SoakBody => ({ bytes: b.length, sha256: sha256(b) });

/** The canonical bodies of `rows` (no field here needs quotes): the header, then CRLF rows while a part fits. */
function canonicalParts(rows: string[][]): SoakBody[] {
  const header = `${LABELS.join(',')}\r\n`;
  const parts: string[][] = [];
  let part = [header];
  let bytes = Buffer.byteLength(header);
  for (const row of rows) {
    const line = `${row.join(',')}\r\n`;
    const lineBytes = Buffer.byteLength(line);
    if (part.length > 1 && bytes + lineBytes > SOAK_MAX_PART_BYTES) {
      parts.push(part);
      part = [header];
      bytes = Buffer.byteLength(header);
    }
    part.push(line);
    bytes += lineBytes;
  }
  parts.push(part);
  return parts.map((p) => bodyOf(Buffer.from(p.join(''))));
}

/** Windows-1252 bytes of text whose only non-ASCII characters are Latin-1 ones. */
const latin1 = (text: string) => Buffer.from(text, 'latin1');

export function soakFile(kind: SoakFileKind, tag: string, size: number): SoakFile {
  const rows = rowsOf(tag, size, kind === 'semicolon-1252');
  if (kind === 'gzip') {
    const text = [LABELS, ...rows].map((r) => `${r.join(',')}\n`).join('');
    return { body: gzipSync(text), bodies: canonicalParts(rows) };
  }
  if (kind === 'semicolon-1252') {
    const text = [LABELS, ...rows].map((r) => `${r.join(';')}\r\n`).join('');
    return { body: latin1(text), bodies: canonicalParts(rows), encoding: 'windows-1252' };
  }
  if (kind === 'refused-row') {
    // A nameless row two thirds in: the file is read up to it, then again and rewritten without it.
    const at = Math.floor((rows.length * 2) / 3);
    const all = [...rows.slice(0, at), ['', `nameless-${tag}.example.com`], ...rows.slice(at)];
    const body = Buffer.from([LABELS, ...all].map((r) => `${r.join(',')}\n`).join(''));
    return { body, bodies: canonicalParts(rows), skipsRejected: true };
  }
  // Already the service's form: sent byte for byte while it fits one part, else rewritten and split.
  const body = Buffer.from([LABELS, ...rows].map((r) => `${r.join(',')}\n`).join(''));
  return { body, bodies: body.length <= SOAK_MAX_PART_BYTES ? [bodyOf(body)] : canonicalParts(rows) };
}

export async function putObject(
  s3: S3Client,
  bucket: string,
  key: string,
  file: SoakFile,
  name: string,
): Promise<SoakObject> {
  const out = await s3.send(
    new PutObjectCommand({ Bucket: bucket, Key: key, Body: file.body, ContentType: 'text/csv' }),
  );
  return {
    bucket,
    key,
    etag: out.ETag ?? '',
    bytes: file.body.length,
    sha256: sha256(file.body),
    name,
    bodies: file.bodies,
    ...(file.encoding ? { encoding: file.encoding } : {}),
    ...(file.skipsRejected ? { skipsRejected: true } : {}),
  };
}
