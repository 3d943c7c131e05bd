/**
 * The row stage, between the S3 read and the PUT body:
 * 1. `detectDialect(firstBytes)`: how the file is written; record it.
 * 2. `planRows(wholeObject, { dialect, checks, maxPartBytes, rejects })`: one
 *    pass that sends nothing: rows checked, refused ones written to the
 *    rejects report, parts cut at row boundaries. Record the plan;
 *    `planVerdict(plan, onRejectedRows)` says whether to send, finish with
 *    nothing to send, or fail before any job.
 * 3. For each part, on any attempt: `plan.body === 'original'` sends the
 *    object byte for byte (the upload's own fast path); otherwise
 *    `partBody(plan, n, open)` regenerates part n's exact bytes
 *    (`parts[n-1].bytes` long, a Content-Length) from the recorded plan.
 */
export { type DetectOptions, detectDialect } from './detect-dialect.js';
export {
  type Compression,
  DECLARABLE_ENCODINGS,
  DELIMITERS,
  type DeclaredEncoding,
  type Delimiter,
  type Dialect,
  describeDialect,
  isCanonicalDialect,
  type LineEnd,
  type SourceEncoding,
} from './dialect.js';
export { RowStageError, type RowStageErrorCode } from './errors.js';
export { type OpenSource, partBody } from './part-body.js';
export { DEFAULT_MAX_ROW_BYTES, type PlanOptions, type PlanProgress, planRows } from './plan-rows.js';
export { REJECTS_LEADING_LABELS } from './rejects-report.js';
export { type OnRejectedRows, type PartPlan, type PlanVerdict, planVerdict, type RowPlan } from './row-plan.js';
export type { RowChecks, RowRules } from './row-rules.js';
