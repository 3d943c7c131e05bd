/**
 * The plan of an import's body: the durable facts a workflow records after
 * the planning pass, from which any attempt at any part regenerates exactly
 * the same bytes. Plain data.
 */
import type { Dialect } from './dialect.js';
import type { RowRules } from './row-rules.js';

export interface PartPlan {
  /** 1 for the first part. */
  number: number;
  /**
   * The source rows the part covers, inclusive (the header is row 1). Parts
   * cover the data rows end to end, in order; the covered rows that were
   * refused are in the rejects report, the others in the part.
   */
  firstRow: number;
  lastRow: number;
  rowsSent: number;
  /** The (decompressed) byte offset where `firstRow` starts: an uncompressed source is re-read from here. */
  startByte: number;
  /** The body's exact size (a Content-Length) and digest: a regenerated body must match both. */
  bytes: number;
  sha256: string;
}

export interface RowPlan {
  dialect: Dialect;
  rules: RowRules;
  maxPartBytes: number;
  maxRowBytes: number;
  /**
   * `original`: the object already is what the service takes, no row is
   * refused and it fits one part, so it is sent byte for byte (the upload's
   * fast path; the row stage is not in the way). `canonical`: every part is
   * the canonical header and canonical lines of its sent rows.
   */
  body: 'original' | 'canonical';
  /** Data rows read (the header not counted), and how many of them were sent and refused. */
  rowsRead: number;
  rowsSent: number;
  rowsRejected: number;
  /** Empty when no row is to be sent: a header-only file, or every row refused. */
  parts: PartPlan[];
}

export type OnRejectedRows = 'skip' | 'fail';

export type PlanVerdict = { outcome: 'send' } | { outcome: 'nothing-to-send' | 'refused'; message: string };

/** What the import does with the plan: send its parts, finish without a job, or fail before any job. */
export function planVerdict(plan: RowPlan, onRejectedRows: OnRejectedRows): PlanVerdict {
  if (onRejectedRows === 'fail' && plan.rowsRejected > 0) {
    return {
      outcome: 'refused',
      message: `${plan.rowsRejected} of ${plan.rowsRead} row(s) would be refused by the service (see the rejects report); fix them, or import with rejected rows skipped`,
    };
  }
  if (plan.parts.length === 0) {
    const why =
      plan.rowsRead === 0
        ? 'the file holds a header row and no data rows'
        : `all ${plan.rowsRead} row(s) were refused (see the rejects report)`;
    return { outcome: 'nothing-to-send', message: `nothing to import: ${why}` };
  }
  return { outcome: 'send' };
}
