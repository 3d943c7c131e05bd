/** Deterministic account CSV bytes for the tests that send a file, and the hash they check it by. */
import { createHash } from 'node:crypto';

/** A header row, then numbered rows until the file holds at least `bytes` bytes (the last row whole). */
export function accountsCsv(bytes: number, header = 'Account Name,Account Domain'): Buffer {
  const rows: string[] = [`${header}\n`];
  let size = rows[0]!.length;
  for (let i = 0; size < bytes; i++) {
    const row = `Company ${i},company-${i}.example.com\n`;
    rows.push(row);
    size += row.length;
  }
  return Buffer.from(rows.join(''));
}

export function sha256(bytes: Uint8Array): string {
  return createHash('sha256').update(bytes).digest('hex');
}

/**
 * The parts a file of LF rows (accountsCsv's) is sent as when split at
 * `maxPartBytes`, cut here by the documented rule: each part the canonical
 * header, then whole CRLF rows while the part stays within the limit.
 */
export function canonicalParts(file: Buffer, maxPartBytes: number): Buffer[] {
  const [header, ...rows] = file.toString().split('\n').slice(0, -1);
  const headerLine = `${header}\r\n`;
  const parts: string[][] = [];
  let part = [headerLine];
  let bytes = headerLine.length;
  for (const row of rows) {
    const line = `${row}\r\n`;
    if (part.length > 1 && bytes + line.length > maxPartBytes) {
      parts.push(part);
      part = [headerLine];
      bytes = headerLine.length;
    }
    part.push(line);
    bytes += line.length;
  }
  parts.push(part);
  return parts.map((p) => Buffer.from(p.join('')));
}
