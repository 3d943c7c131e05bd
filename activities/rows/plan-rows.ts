/**
 * The planning pass: reads the whole source once, sends nothing. It checks
 * every row, writes the refused ones to the rejects report, and cuts the
 * canonical body into parts of at most `maxPartBytes` at row boundaries:
 * a part takes rows while they fit, so the cut depends on the file and the
 * settings alone. The result is the durable plan every part's body is
 * regenerated from.
 */
import type { Readable, Writable } from 'node:stream';
import { canonicalLine } from './canonical-csv.js';
import { type Dialect, isCanonicalDialect } from './dialect.js';
import { RowStageError } from './errors.js';
import { OriginalTap } from './original-tap.js';
import { PartCutter } from './part-cutter.js';
import { RejectsReport } from './rejects-report.js';
import type { PartPlan, RowPlan } from './row-plan.js';
import { type RowChecks, rowRules } from './row-rules.js';
import { type RowLimits, rowVerdict } from './row-verdict.js';
import { type SourceRow, sourceRows } from './source-rows.js';

/** Enough for any real row, small enough that a quote that never closes cannot take the worker's memory. */
export const DEFAULT_MAX_ROW_BYTES = 16 * 1024 * 1024;

export interface PlanOptions {
  dialect: Dialect;
  checks: RowChecks;
  maxPartBytes: number;
  maxRowBytes?: number;
  /** Receives the rejects report; ended when the pass ends, empty when no row is refused. */
  rejects?: Writable;
  /** Called after each batch of rows (one chunk read): for heartbeats. Cancel the pass by destroying the source. */
  onProgress?: (progress: PlanProgress) => void;
}

export interface PlanProgress {
  rowsRead: number;
  /** The (decompressed) byte offset the pass has parsed up to. */
  bytesRead: number;
}

function headerOf(row: SourceRow | undefined): SourceRow {
  if (row === undefined || row.unreadable !== undefined)
    throw new RowStageError('NoHeader', 'the file holds no header row');
  return row;
}

/** The pass over the data rows: each is judged, then cut into a part or reported. */
class Planner {
  readonly limits: RowLimits;
  readonly cutter: PartCutter;
  rowsRejected = 0;
  lastRow = 1;
  private rowStart: number;

  constructor(header: SourceRow, options: PlanOptions) {
    const headerLine = canonicalLine(header.fields);
    const rules = rowRules(header.fields, options.checks);
    this.limits = { rules, maxPartBytes: options.maxPartBytes, headerBytes: Buffer.byteLength(headerLine) };
    this.cutter = new PartCutter(headerLine, options.maxPartBytes);
    this.rowStart = header.end;
  }

  /** Takes a data row; returns the reason it is refused, if it is. */
  take(row: SourceRow): string | undefined {
    const start = this.rowStart;
    this.rowStart = row.end;
    this.lastRow = row.row;
    this.cutter.read(row.row, start);
    const verdict = rowVerdict(this.limits, row);
    if ('line' in verdict) {
      this.cutter.send(row.row, start, verdict.line, verdict.bytes);
      return undefined;
    }
    this.rowsRejected++;
    return verdict.reason;
  }

  plan(options: PlanOptions, maxRowBytes: number): RowPlan {
    const rowsRead = this.lastRow - 1;
    return {
      dialect: options.dialect,
      rules: this.limits.rules,
      maxPartBytes: options.maxPartBytes,
      maxRowBytes,
      body: 'canonical',
      rowsRead,
      rowsSent: rowsRead - this.rowsRejected,
      rowsRejected: this.rowsRejected,
      parts: this.cutter.finish(this.lastRow),
    };
  }
}

function checkLimit(name: string, value: number): void {
  if (!Number.isSafeInteger(value) || value <= 0) {
    throw new RangeError(`${name} must be a positive whole number of bytes, got ${value}`);
  }
}

export async function planRows(source: Readable, options: PlanOptions): Promise<RowPlan> {
  const maxRowBytes = options.maxRowBytes ?? DEFAULT_MAX_ROW_BYTES;
  const report = new RejectsReport(options.rejects);
  try {
    checkLimit('maxPartBytes', options.maxPartBytes);
    checkLimit('maxRowBytes', maxRowBytes);
  } catch (err) {
    // Nothing will read the source or write the report: release both.
    source.destroy();
    report.abort();
    throw err;
  }
  const tap = isCanonicalDialect(options.dialect) ? new OriginalTap() : undefined;
  const from = { startByte: 0, firstRow: 1, maxRowBytes };
  const batches = sourceRows(source, options.dialect, from, tap?.stream(), (reason) => {
    if (tap) tap.notStrict ??= reason;
  });
  let planner: Planner | undefined;
  try {
    for await (const batch of batches) {
      for (const row of batch) {
        if (!planner) {
          const header = headerOf(row);
          report.setLabels(header.fields);
          planner = new Planner(header, options);
          continue;
        }
        const refused = planner.take(row);
        if (refused !== undefined) await report.add(row.row, refused, row.fields);
      }
      options.onProgress?.({ rowsRead: Math.max(0, batch.at(-1)!.row - 1), bytesRead: batch.at(-1)!.end });
    }
    planner ??= new Planner(headerOf(undefined), options);
    await report.close();
    const plan = planner.plan(options, maxRowBytes);
    const sendable = tap && tap.notStrict === undefined && plan.rowsRejected === 0 && tap.bytes <= options.maxPartBytes;
    return sendable ? asOriginal(plan, tap) : plan;
  } catch (err) {
    report.abort();
    throw err;
  } finally {
    await batches.return(undefined);
  }
}

/** The plan of a file sent as it is: one part, the whole object. */
function asOriginal(plan: RowPlan, tap: OriginalTap): RowPlan {
  if (plan.parts.length === 0) return { ...plan, body: 'original' };
  const last = plan.parts[plan.parts.length - 1]!;
  const whole: PartPlan = {
    number: 1,
    firstRow: 2,
    lastRow: last.lastRow,
    rowsSent: plan.rowsSent,
    startByte: 0,
    bytes: tap.bytes,
    sha256: tap.hash.digest('hex'),
  };
  return { ...plan, body: 'original', parts: [whole] };
}
