/**
 * Finds a file's dialect from its first bytes: gzip by its magic bytes (the
 * key's suffix says nothing reliable), the encoding from a byte order mark or
 * the import's declaration, the delimiter from the header row (unless set),
 * and the header row's line end. Pure: the caller reads the sample.
 */
import { constants, gunzipSync } from 'node:zlib';
import { detectDelimiter } from '../csv/header-row.js';
import type { DeclaredEncoding, Delimiter, Dialect, LineEnd, SourceEncoding } from './dialect.js';
import { RowStageError } from './errors.js';
import { completeUtf8Length, notUtf8Error } from './utf8.js';

export interface DetectOptions {
  /** The import's declared encoding; without one a file is UTF-8 unless its byte order mark says UTF-16. */
  encoding?: DeclaredEncoding;
  /** The import's delimiter; without one it is the header row's most frequent candidate. */
  delimiter?: Delimiter;
  /** The sample is the whole object, so a header row without a line end is complete. */
  complete?: boolean;
}

const GZIP_MAGIC = [0x1f, 0x8b];
const BOMS: { encoding: SourceEncoding; bytes: number[] }[] = [
  { encoding: 'utf-8', bytes: [0xef, 0xbb, 0xbf] },
  { encoding: 'utf-16le', bytes: [0xff, 0xfe] },
  { encoding: 'utf-16be', bytes: [0xfe, 0xff] },
];

export function bomLength(encoding: SourceEncoding): number {
  return encoding === 'utf-8' ? 3 : 2;
}

function startsWith(sample: Uint8Array, bytes: number[]): boolean {
  return bytes.every((b, i) => sample[i] === b);
}

/** The decompressed start of a gzip sample: a cut-off sample yields what its bytes hold. */
function gunzipSample(sample: Uint8Array): Buffer {
  try {
    return gunzipSync(sample, { finishFlush: constants.Z_SYNC_FLUSH });
  } catch (err) {
    throw new RowStageError(
      'CorruptCompression',
      `the file starts like gzip but does not decompress: ${(err as Error).message}`,
    );
  }
}

function encodingOf(
  bytes: Uint8Array,
  declared: DeclaredEncoding | undefined,
): { encoding: SourceEncoding; hasBom: boolean } {
  const bom = BOMS.find((b) => startsWith(bytes, b.bytes));
  if (!bom) {
    if (bytes.includes(0)) {
      throw new RowStageError(
        'UnsupportedEncoding',
        'the file holds NUL bytes: UTF-16 without a byte order mark? Save it as UTF-8, or as UTF-16 with a byte order mark',
      );
    }
    return { encoding: declared ?? 'utf-8', hasBom: false };
  }
  if (declared !== undefined && declared !== bom.encoding) {
    throw new RowStageError(
      'UnsupportedEncoding',
      `the file starts with a ${bom.encoding} byte order mark but the import declares ${declared}; declare ${bom.encoding === 'utf-8' ? 'utf-8' : 'no encoding'} or re-save the file`,
    );
  }
  return { encoding: bom.encoding, hasBom: true };
}

function decodeSample(bytes: Uint8Array, encoding: SourceEncoding, hasBom: boolean, complete: boolean): string {
  const body = bytes.subarray(hasBom ? bomLength(encoding) : 0);
  if (encoding === 'utf-8') {
    const usable = complete ? body : body.subarray(0, completeUtf8Length(body));
    try {
      return new TextDecoder('utf-8', { fatal: true }).decode(usable);
    } catch {
      throw notUtf8Error(hasBom ? 3 : 0, usable);
    }
  }
  if (encoding === 'latin1') return Buffer.from(body).toString('latin1');
  // TextDecoder drops a trailing half character of a cut-off sample unless told it is the end; fine here.
  return new TextDecoder(encoding).decode(body, { stream: !complete });
}

/** The header row (the first record, quotes respected) and the line end that ends it. */
function headerRow(text: string, complete: boolean): { header: string; lineEnd: LineEnd } {
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const ch = text[i];
    if (ch === '"') quoted = !quoted;
    else if (!quoted && (ch === '\n' || ch === '\r')) {
      // A CR at the sample's very end may be a CRLF cut in two; calling it CR only costs the fast path.
      const lineEnd = ch === '\n' ? 'LF' : text[i + 1] === '\n' ? 'CRLF' : 'CR';
      return { header: text.slice(0, i), lineEnd };
    }
  }
  if (complete) return { header: text, lineEnd: 'none' };
  throw new RowStageError(
    'NoHeader',
    `no line end in the first ${text.length} characters: the header row is longer than the sample read, or a quote in it never closes`,
  );
}

export function detectDialect(sample: Uint8Array, options: DetectOptions = {}): Dialect {
  const gzip = startsWith(sample, GZIP_MAGIC);
  const bytes = gzip ? gunzipSample(sample) : sample;
  const complete = options.complete ?? false;
  const { encoding, hasBom } = encodingOf(bytes, options.encoding);
  const text = decodeSample(bytes, encoding, hasBom, complete);
  if (text.trim() === '')
    throw new RowStageError('NoHeader', 'the file is empty; expected a CSV file with a header row');
  const { header, lineEnd } = headerRow(text, complete);
  const delimiter = options.delimiter ?? detectDelimiter(header);
  return { compression: gzip ? 'gzip' : 'none', encoding, hasBom, delimiter, lineEnd };
}
