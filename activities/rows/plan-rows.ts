/**
 * The planning pass: reads the whole source, sends nothing. It checks every
 * row, writes the refused ones to the rejects report, and cuts the
 * canonical body into parts of at most `maxPartBytes` at row boundaries:
 * a part takes rows while they fit, so the cut depends on the file and the
 * settings alone. A file that can go as it is needs no parts: it is only
 * watched, and read again to be cut if it turns out it cannot (`reopen`).
 * The result is the durable plan every part's body is regenerated from.
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
  /**
   * Opens the source again from its start. Given, a file already in the
   * service's form is first read without cutting its canonical parts (the
   * costlier half of the pass), as it will go as it is; the first row that
   * rules that out (refused, or not strict RFC 4180), or a size over a part,
   * makes the pass start over from here and cut. A file that goes as it is
   * is read once; one that does not, up to that row twice.
   */
  reopen?: () => Promise<Readable>;
  /** The source's size, when known: a file over a part cannot go as it is, and is cut from the start. */
  sourceBytes?: number;
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

/** The pass over the data rows: each is judged, then cut into a part (unless the pass only watches) or reported. */
class Planner {
  readonly limits: RowLimits;
  readonly cutter: PartCutter | undefined;
  rowsRejected = 0;
  lastRow = 1;
  private rowStart: number;

  /** `cut`: write each sent row into its part; a pass that only watches for a file sendable as it is does not. */
  constructor(header: SourceRow, options: PlanOptions, cut: boolean) {
    const headerLine = canonicalLine(header.fields);
    const rules = rowRules(header.fields, options.checks);
    this.limits = { rules, maxPartBytes: options.maxPartBytes, headerBytes: Buffer.byteLength(headerLine) };
    this.cutter = cut ? new PartCutter(headerLine, options.maxPartBytes) : undefined;
    this.rowStart = header.end;
  }

  /** Takes a data row; returns the reason it is refused, if it is. */
  take(row: SourceRow): string | undefined {
    const start = this.rowStart;
    this.rowStart = row.end;
    this.lastRow = row.row;
    this.cutter?.read(row.row, start);
    const verdict = rowVerdict(this.limits, row);
    if ('line' in verdict) {
      this.cutter?.send(row.row, start, verdict.line, verdict.bytes);
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
      parts: this.cutter?.finish(this.lastRow) ?? [],
    };
  }
}

function checkLimit(name: string, value: number): void {
  if (!Number.isSafeInteger(value) || value <= 0) {
    throw new RangeError(`${name} must be a positive whole number of bytes, got ${value}`);
  }
}

/**
 * How a pass reads: `watch` only watches for a file that can go as it is
 * (nothing cut, nothing reported) and gives up at the first sign it cannot;
 * `cut` cuts the canonical parts and reports refused rows, with the tap
 * (`tapped`) when the file may still go as it is.
 */
type PassMode = 'watch' | 'cut-tapped' | 'cut';

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
  try {
    const canonical = isCanonicalDialect(options.dialect);
    if (!canonical) return await pass(source, options, maxRowBytes, report, 'cut');
    const mayGoAsItIs = (options.sourceBytes ?? 0) <= options.maxPartBytes;
    if (!options.reopen || !mayGoAsItIs) return await pass(source, options, maxRowBytes, report, 'cut-tapped');
    const asItIs = await pass(source, options, maxRowBytes, report, 'watch');
    if (asItIs) return asItIs;
    // The file cannot go as it is after all: read it again, cutting its parts. Nothing was reported yet.
    return await pass(await options.reopen(), options, maxRowBytes, report, 'cut');
  } catch (err) {
    report.abort();
    throw err;
  }
}

/** One pass over the source; a watching pass gives undefined as soon as the file cannot go as it is. */
function pass(
  source: Readable,
  options: PlanOptions,
  maxRowBytes: number,
  report: RejectsReport,
  mode: 'watch',
): Promise<RowPlan | undefined>;
function pass(
  source: Readable,
  options: PlanOptions,
  maxRowBytes: number,
  report: RejectsReport,
  mode: 'cut' | 'cut-tapped',
): Promise<RowPlan>;
async function pass(
  source: Readable,
  options: PlanOptions,
  maxRowBytes: number,
  report: RejectsReport,
  mode: PassMode,
): Promise<RowPlan | undefined> {
  const watching = mode === 'watch';
  const tap = mode === 'cut' ? undefined : new OriginalTap();
  const from = { startByte: 0, firstRow: 1, maxRowBytes };
  const batches = sourceRows(source, options.dialect, from, tap?.stream(), (reason) => {
    if (tap) tap.notStrict ??= reason;
  });
  const cannotGoAsItIs = () => tap!.notStrict !== undefined || tap!.bytes > options.maxPartBytes;
  let planner: Planner | undefined;
  try {
    for await (const batch of batches) {
      for (const row of batch) {
        if (watching && tap!.notStrict !== undefined) return undefined;
        if (!planner) {
          const header = headerOf(row);
          report.setLabels(header.fields);
          planner = new Planner(header, options, !watching);
          continue;
        }
        const refused = planner.take(row);
        if (refused === undefined) continue;
        if (watching) return undefined;
        await report.add(row.row, refused, row.fields);
      }
      if (watching && cannotGoAsItIs()) return undefined;
      options.onProgress?.({ rowsRead: Math.max(0, batch.at(-1)!.row - 1), bytesRead: batch.at(-1)!.end });
    }
    planner ??= new Planner(headerOf(undefined), options, !watching);
    if (watching && cannotGoAsItIs()) return undefined;
    await report.close();
    const plan = planner.plan(options, maxRowBytes);
    const sendable = tap && !cannotGoAsItIs() && plan.rowsRejected === 0;
    return sendable ? asOriginal(plan, tap) : plan;
  } finally {
    await batches.return(undefined);
  }
}

/** The plan of a file sent as it is: one part, the whole object. */
function asOriginal(plan: RowPlan, tap: OriginalTap): RowPlan {
  if (plan.rowsSent === 0) return { ...plan, body: 'original', parts: [] };
  const whole: PartPlan = {
    number: 1,
    firstRow: 2,
    lastRow: plan.rowsRead + 1,
    rowsSent: plan.rowsSent,
    startByte: 0,
    bytes: tap.bytes,
    sha256: tap.hash.digest('hex'),
  };
  return { ...plan, body: 'original', parts: [whole] };
}
