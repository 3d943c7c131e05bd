/**
 * The one decision about a row, shared by the planning pass and every pass
 * that regenerates a part, so both send and refuse exactly the same rows: a
 * row is sent as its canonical line, or refused with a reason.
 */

import { ByteRow } from './byte-row.js';
import { canonicalLine } from './canonical-csv.js';
import { type CanonicalLine, lineBytes } from './line-blocks.js';
import { byteRowProblem, type RowRules, rowProblem } from './row-rules.js';
import type { SourceRow } from './source-rows.js';

export type RowVerdict = { line: CanonicalLine; bytes: number } | { reason: string };

export interface RowLimits {
  rules: RowRules;
  maxPartBytes: number;
  /** The canonical header line's size: every part starts with it. */
  headerBytes: number;
}

export function rowVerdict(limits: RowLimits, row: SourceRow): RowVerdict {
  if (row.unreadable !== undefined) return { reason: row.unreadable };
  const problem = row instanceof ByteRow ? byteRowProblem(limits.rules, row) : rowProblem(limits.rules, row.fields);
  if (problem !== undefined) return { reason: problem };
  // A plain row is its own line: copied from where it was read, without a view of its bytes of its own.
  const line = row instanceof ByteRow ? row : (row.canonical ?? canonicalLine(row.fields));
  const bytes = lineBytes(line);
  if (limits.headerBytes + bytes > limits.maxPartBytes) {
    return {
      reason: `${bytes} bytes as canonical CSV; with the header a part may hold at most ${limits.maxPartBytes} bytes`,
    };
  }
  return { line, bytes };
}
