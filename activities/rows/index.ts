/**
 * The row stage, between the S3 read and the PUT body: detect a file's
 * dialect from its first bytes, plan its body in one pass that sends nothing
 * (rows checked, refused rows reported, parts cut at row boundaries), then
 * regenerate any part's exact bytes on any attempt.
 */

export { type DetectOptions, detectDialect } from './detect-dialect.js';
export {
  DECLARABLE_ENCODINGS,
  DELIMITERS,
  type DeclaredEncoding,
  type Delimiter,
  type Dialect,
  describeDialect,
  isCanonicalDialect,
} from './dialect.js';
export { RowStageError, type RowStageErrorCode } from './errors.js';
export { type OpenSource, partBody } from './part-body.js';
export { DEFAULT_MAX_ROW_BYTES, type PlanOptions, planRows } from './plan-rows.js';
export { REJECTS_LEADING_LABELS } from './rejects-report.js';
export { type OnRejectedRows, type PartPlan, type PlanVerdict, planVerdict, type RowPlan } from './row-plan.js';
export type { RowChecks, RowRules } from './row-rules.js';
