/**
 * The header row of a file's first bytes, read through its dialect: gunzipped,
 * decoded from its encoding and split on its delimiter, so a `;`-delimited
 * Windows-1252 export is checked under its real labels. Also says whether
 * anything follows the header, so a header-only file is refused before any
 * job exists.
 */
import { constants, gunzipSync } from 'node:zlib';
import type { Dialect } from '../rows/index.js';
import { latin1ToWindows1252 } from '../rows/windows-1252.js';
import { parseHeaderText } from './header-row.js';

export interface SampleHeader {
  labels: string[];
  /** False only when the sample is the whole file and holds nothing but the header row. */
  hasDataRows: boolean;
}

function decode(bytes: Uint8Array, dialect: Dialect): string {
  const body = bytes.subarray(dialect.hasBom ? (dialect.encoding === 'utf-8' ? 3 : 2) : 0);
  if (dialect.encoding === 'latin1') return Buffer.from(body).toString('latin1');
  if (dialect.encoding === 'windows-1252') return latin1ToWindows1252(Buffer.from(body).toString('latin1'));
  // A character cut by the sample's end is dropped (stream mode): it lies past the header row.
  return new TextDecoder(dialect.encoding).decode(body, { stream: true });
}

/** Where the first record ends (quotes respected), and where the next one starts. */
function firstRecordBounds(text: string): { end: number; next: number } {
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const ch = text[i];
    if (ch === '"') quoted = !quoted;
    else if (!quoted && (ch === '\n' || ch === '\r')) {
      return { end: i, next: ch === '\r' && text[i + 1] === '\n' ? i + 2 : i + 1 };
    }
  }
  return { end: text.length, next: text.length };
}

/**
 * `sample`: the object's first bytes, whose dialect detectDialect found (so
 * the header row ends inside it); `complete`: the sample is the whole object.
 */
export function sampleHeader(sample: Uint8Array, dialect: Dialect, complete: boolean): SampleHeader {
  const bytes = dialect.compression === 'gzip' ? gunzipSync(sample, { finishFlush: constants.Z_SYNC_FLUSH }) : sample;
  const text = decode(bytes, dialect);
  const { end, next } = firstRecordBounds(text);
  const { labels } = parseHeaderText(text.slice(0, end), dialect.delimiter);
  const hasDataRows = !complete || text.slice(next).trim() !== '';
  return { labels, hasDataRows };
}
