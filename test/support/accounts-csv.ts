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
