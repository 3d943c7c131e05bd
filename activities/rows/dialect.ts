/**
 * How a source file is written: the facts the row stage needs to read it,
 * found once by detectDialect and recorded durably by the workflow, so every
 * later pass reads the file the same way. Plain data: it crosses activity
 * results and workflow history.
 */
import type { Delimiter } from '../csv/header-row.js';

export type { Delimiter };
export const DELIMITERS: readonly Delimiter[] = [',', ';', '\t', '|'];

/** Encodings read from a byte order mark (utf-16) or declared per import (the single-byte ones). */
export type SourceEncoding = 'utf-8' | 'utf-16le' | 'utf-16be' | 'windows-1252' | 'latin1';
/** The encodings an operator may declare: a UTF-16 file says so with its byte order mark. */
export const DECLARABLE_ENCODINGS = ['utf-8', 'windows-1252', 'latin1'] as const;
export type DeclaredEncoding = (typeof DECLARABLE_ENCODINGS)[number];

export type Compression = 'none' | 'gzip';
/** The header row's line end; `none` when the file is its header row alone, with no line end. */
export type LineEnd = 'CRLF' | 'LF' | 'CR' | 'none';

export interface Dialect {
  compression: Compression;
  encoding: SourceEncoding;
  /** Whether the (decompressed) bytes start with a byte order mark. */
  hasBom: boolean;
  delimiter: Delimiter;
  lineEnd: LineEnd;
}

/**
 * What the service receives: UTF-8 without a byte order mark, comma, RFC 4180
 * quoting, uncompressed. Line ends: the canonical writer uses CRLF (RFC 4180's
 * record separator); a file that already ends its lines with LF is accepted as
 * it is, since every RFC 4180 reader takes LF and today's byte-for-byte path
 * sends such files. CR alone is not: it is the old Mac form many readers do not
 * split on.
 */
export function isCanonicalDialect(d: Dialect): boolean {
  return d.compression === 'none' && d.encoding === 'utf-8' && !d.hasBom && d.delimiter === ',' && d.lineEnd !== 'CR';
}

/** One line for logs, the dry run and `status`, e.g. `gzip, windows-1252, ";", CRLF`. */
export function describeDialect(d: Dialect): string {
  const delimiter = d.delimiter === '\t' ? 'tab' : `"${d.delimiter}"`;
  const parts = [d.compression === 'gzip' ? 'gzip' : 'uncompressed', d.encoding + (d.hasBom ? ' with BOM' : '')];
  parts.push(delimiter, d.lineEnd === 'none' ? 'one line' : d.lineEnd);
  return parts.join(', ');
}
