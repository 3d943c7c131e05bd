/**
 * The one error vocabulary. The service client throws errors with these names;
 * activities turn them into ApplicationFailures whose `type` is the same name;
 * workflows and retry policies match on these strings.
 */
export const ServiceFailure = {
  Unauthorized: 'Unauthorized',
  Forbidden: 'Forbidden',
  NotFound: 'NotFound',
  BadRequest: 'BadRequest',
  RateLimited: 'RateLimited',
  ServerError: 'ServerError',
  Timeout: 'Timeout',
  Network: 'Network',
} as const;

export const PipelineFailure = {
  InvalidInput: 'InvalidInput',
  SourceNotFound: 'SourceNotFound',
  FileTooLarge: 'FileTooLarge',
  EmptyFile: 'EmptyFile',
  InvalidCsvHeader: 'InvalidCsvHeader',
  MappingMismatch: 'MappingMismatch',
  MappingNotApplied: 'MappingNotApplied',
  /**
   * Another running import holds the custom source's mapping lock with a
   * different set: retry once it has finished.
   */
  MappingConflict: 'MappingConflict',
  SourceChanged: 'SourceChanged',
  UploadStalled: 'UploadStalled',
  /**
   * Every byte of the file went out in an earlier attempt, but no answer came
   * and the job stayed new: sending again could import it twice, so an
   * operator checks the job and decides (retry sends the file again).
   */
  UploadUnconfirmed: 'UploadUnconfirmed',
  /** The service answered before it had the whole body: the job holds part of the file. */
  UploadIncomplete: 'UploadIncomplete',
  /** The job is in a state the spec does not name (not new, processing, completed or failed in any case). */
  UnexpectedJobState: 'UnexpectedJobState',
  /** S3 refused to let the worker read the source (403). */
  SourceAccessDenied: 'SourceAccessDenied',
  /** Reading the source from S3 failed on the way (a cut connection, a 5xx): retried. */
  SourceReadFailed: 'SourceReadFailed',
  JobFailed: 'JobFailed',
  JobTimedOut: 'JobTimedOut',
  /** A daily budget is spent: the workflow waits for the window to reset. */
  BudgetExhausted: 'BudgetExhausted',
  /** The service answered 429 for a daily limit before our ledger did. */
  DailyLimitReached: 'DailyLimitReached',
  /** The input names a tenant other than the one whose credential this worker holds. */
  TenantMismatch: 'TenantMismatch',
  /** The ledger refused to consider a reservation (a malformed request): retrying cannot help. */
  BudgetReservationRejected: 'BudgetReservationRejected',
} as const;

export type FailureType =
  | (typeof ServiceFailure)[keyof typeof ServiceFailure]
  | (typeof PipelineFailure)[keyof typeof PipelineFailure];

/**
 * Never retried by Temporal: the spec forbids retrying 400/401/403/404
 * unchanged, and the file and mapping errors do not heal by themselves.
 * BudgetExhausted is handled by the workflow (a durable wait), not by retries.
 */
export const NON_RETRYABLE_FAILURES: readonly FailureType[] = [
  'InvalidInput',
  'Unauthorized',
  'Forbidden',
  'NotFound',
  'BadRequest',
  'SourceNotFound',
  'FileTooLarge',
  'EmptyFile',
  'InvalidCsvHeader',
  'MappingMismatch',
  'MappingNotApplied',
  'MappingConflict',
  'SourceChanged',
  'UploadUnconfirmed',
  'UploadIncomplete',
  'UnexpectedJobState',
  'SourceAccessDenied',
  'JobFailed',
  'JobTimedOut',
  'BudgetExhausted',
  'DailyLimitReached',
  'TenantMismatch',
  'BudgetReservationRejected',
];

/**
 * Failures an operator can fix outside the workflow (a new token, a permission,
 * a corrected file or mapping source). With `onFailure: 'await-retry'` the
 * workflow waits for a `retry` signal on these instead of failing.
 */
export const OPERATOR_FIXABLE_FAILURES: readonly FailureType[] = [
  'Unauthorized',
  'Forbidden',
  'NotFound',
  'BadRequest',
  'SourceNotFound',
  'FileTooLarge',
  'EmptyFile',
  'InvalidCsvHeader',
  'MappingMismatch',
  'MappingNotApplied',
  'MappingConflict',
  'SourceChanged',
  'UploadUnconfirmed',
  'UnexpectedJobState',
  'SourceAccessDenied',
];

/** Failures that mean "a daily window is spent": wait for its reset, never fail. */
export const BUDGET_WAIT_FAILURES: readonly FailureType[] = ['BudgetExhausted', 'DailyLimitReached'];

/** Details carried by a BudgetExhausted / DailyLimitReached failure. */
export interface BudgetWaitDetails {
  endpoint: string;
  /** ISO timestamp when the window resets. */
  resetsAt: string;
}
