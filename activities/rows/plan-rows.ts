/**
 * The planning pass: reads the whole source once, sends nothing. It checks
 * every row, writes the refused ones to the rejects report, and cuts the
 * canonical body into parts of at most `maxPartBytes` at row boundaries:
 * a part takes rows while they fit, so the cut depends on the file and the
 * settings alone. The result is the durable plan every part's body is
 * regenerated from.
 */
import { createHash, type Hash } from 'node:crypto';
import { type Readable, Transform, type TransformCallback, type Writable } from 'node:stream';
import { canonicalLine } from './canonical-csv.js';
import { type Dialect, isCanonicalDialect } from './dialect.js';
import { RowStageError } from './errors.js';
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
}

/** Counts and hashes the bytes that pass: the original object's size and digest. */
class OriginalTap {
  bytes = 0;
  readonly hash = createHash('sha256');
  stream(): Transform {
    return new Transform({
      transform: (chunk: Buffer, _enc, done: TransformCallback) => {
        this.bytes += chunk.length;
        this.hash.update(chunk);
        done(null, chunk);
      },
    });
  }
}

/** The part being filled. */
class OpenPart {
  bytes: number;
  rowsSent = 0;
  readonly hash: Hash = createHash('sha256');
  constructor(
    readonly number: number,
    readonly firstRow: number,
    readonly startByte: number,
    headerLine: string,
  ) {
    this.bytes = Buffer.byteLength(headerLine);
    this.hash.update(headerLine);
  }
  add(line: string, bytes: number): void {
    this.bytes += bytes;
    this.rowsSent++;
    this.hash.update(line);
  }
  close(lastRow: number): PartPlan {
    const { number, firstRow, rowsSent, startByte, bytes } = this;
    return { number, firstRow, lastRow, rowsSent, startByte, bytes, sha256: this.hash.digest('hex') };
  }
}

async function headerOf(rows: AsyncGenerator<SourceRow>): Promise<SourceRow> {
  const first = await rows.next();
  if (first.done || first.value.unreadable !== undefined) {
    throw new RowStageError('NoHeader', 'the file holds no header row');
  }
  return first.value;
}

export async function planRows(source: Readable, options: PlanOptions): Promise<RowPlan> {
  const { dialect, maxPartBytes } = options;
  const maxRowBytes = options.maxRowBytes ?? DEFAULT_MAX_ROW_BYTES;
  const tap = isCanonicalDialect(dialect) ? new OriginalTap() : undefined;
  const rows = sourceRows(source, dialect, { startByte: 0, firstRow: 1, maxRowBytes }, tap?.stream());
  let report: RejectsReport | undefined;
  try {
    const header = await headerOf(rows);
    const headerLine = canonicalLine(header.fields);
    const limits: RowLimits = {
      rules: rowRules(header.fields, options.checks),
      maxPartBytes,
      headerBytes: Buffer.byteLength(headerLine),
    };
    report = new RejectsReport(options.rejects, header.fields);
    const parts: PartPlan[] = [];
    let part: OpenPart | undefined;
    let rowStart = header.end;
    let lastRow = 1;
    let rowsRejected = 0;
    for await (const row of rows) {
      part ??= new OpenPart(1, row.row, rowStart, headerLine);
      const verdict = rowVerdict(limits, row);
      if ('reason' in verdict) {
        rowsRejected++;
        await report.add(row.row, verdict.reason, row.fields);
      } else {
        if (part.rowsSent > 0 && part.bytes + verdict.bytes > maxPartBytes) {
          parts.push(part.close(row.row - 1));
          part = new OpenPart(part.number + 1, row.row, rowStart, headerLine);
        }
        part.add(verdict.line, verdict.bytes);
      }
      rowStart = row.end;
      lastRow = row.row;
    }
    if (part && part.rowsSent > 0) parts.push(part.close(lastRow));
    await report.close();
    const rowsRead = lastRow - 1;
    const plan: RowPlan = {
      dialect,
      rules: limits.rules,
      maxPartBytes,
      maxRowBytes,
      body: 'canonical',
      rowsRead,
      rowsSent: rowsRead - rowsRejected,
      rowsRejected,
      parts,
    };
    return tap && rowsRejected === 0 && tap.bytes <= maxPartBytes ? asOriginal(plan, tap) : plan;
  } catch (err) {
    report?.abort(err);
    if (!report) options.rejects?.destroy(err as Error);
    throw err;
  } finally {
    await rows.return(undefined);
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
