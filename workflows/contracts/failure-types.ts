/**
 * The one error vocabulary. The service client throws errors with these names;
 * activities turn them into ApplicationFailures whose `type` is the same name;
 * workflows and retry policies match on these strings.
 */
const ServiceFailure = {
  Unauthorized: 'Unauthorized',
  Forbidden: 'Forbidden',
  NotFound: 'NotFound',
  BadRequest: 'BadRequest',
  RateLimited: 'RateLimited',
  ServerError: 'ServerError',
  Timeout: 'Timeout',
  Network: 'Network',
  /** A 2xx whose body the worker cannot use (not JSON, or a field it needs is missing or wrong). */
  UnusableResponse: 'UnusableResponse',
} as const;

const PipelineFailure = {
  InvalidInput: 'InvalidInput',
  SourceNotFound: 'SourceNotFound',
  FileTooLarge: 'FileTooLarge',
  EmptyFile: 'EmptyFile',
  InvalidCsvHeader: 'InvalidCsvHeader',
  /** The file cannot be read as CSV at all: its encoding, its compression, a row beyond the bound. */
  UnreadableFile: 'UnreadableFile',
  /** Rows the service would refuse, under `onRejectedRows: 'fail'`: nothing was created. */
  RowsRejected: 'RowsRejected',
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
  /**
   * An entity workflow (the budget ledger, a job record, a mapping lock)
   * refused an Update: its validator or handler said no, or Temporal refused
   * an argument. The same Update would be refused again.
   */
  UpdateRefused: 'UpdateRefused',
  /** An entity workflow did not take up an Update within the client's patience (a burst, a lost worker): retried. */
  EntityBusy: 'EntityBusy',
  /**
   * Another import creates this object version's job, or an earlier attempt's
   * create may still arrive: this one follows it once it is known (the job record).
   */
  ImportInProgress: 'ImportInProgress',
  /** The job record gave this attempt's work to a later attempt: it stopped short of sending anything complete. */
  AttemptSuperseded: 'AttemptSuperseded',
} as const;

export type FailureType =
  | (typeof ServiceFailure)[keyof typeof ServiceFailure]
  | (typeof PipelineFailure)[keyof typeof PipelineFailure];

/**
 * What each failure means, in one place the compiler checks: a new type
 * that is not placed here does not build.
 * - `retry`: transient; Temporal retries the activity with backoff;
 * - `operator`: a person can fix it (a token, a permission, a file, a mapping
 *   source); the import fails, or waits for `retry` with `onFailure: 'await-retry'`;
 * - `budget-wait`: a daily window is spent; the workflow waits for its reset;
 * - `fatal`: the import fails.
 */
type Handling = 'retry' | 'operator' | 'budget-wait' | 'fatal';

export const FAILURE_HANDLING = {
  Unauthorized: 'operator',
  Forbidden: 'operator',
  NotFound: 'operator',
  BadRequest: 'operator',
  RateLimited: 'retry',
  ServerError: 'retry',
  Timeout: 'retry',
  Network: 'retry',
  UnusableResponse: 'operator',
  InvalidInput: 'fatal',
  SourceNotFound: 'operator',
  FileTooLarge: 'operator',
  EmptyFile: 'operator',
  InvalidCsvHeader: 'operator',
  UnreadableFile: 'operator',
  RowsRejected: 'operator',
  MappingMismatch: 'operator',
  MappingNotApplied: 'operator',
  MappingConflict: 'operator',
  SourceChanged: 'operator',
  UploadStalled: 'retry',
  UploadUnconfirmed: 'operator',
  UploadIncomplete: 'fatal',
  UnexpectedJobState: 'operator',
  SourceAccessDenied: 'operator',
  SourceReadFailed: 'retry',
  JobFailed: 'fatal',
  JobTimedOut: 'fatal',
  BudgetExhausted: 'budget-wait',
  DailyLimitReached: 'budget-wait',
  TenantMismatch: 'fatal',
  UpdateRefused: 'fatal',
  EntityBusy: 'retry',
  ImportInProgress: 'retry',
  AttemptSuperseded: 'retry',
} as const satisfies Record<FailureType, Handling>;

/**
 * Types whose single failures decide for themselves whether Temporal retries
 * them (the ApplicationFailure's own `nonRetryable` flag): a 401 after the
 * token rotated is a changed request and is retried, another 401 is not; an
 * unusable response is retried a few times, then not. They must stay out of
 * the retry policy's list, which the server applies whatever the flag says.
 */
const DECIDED_PER_FAILURE = ['Unauthorized', 'UnusableResponse'] as const satisfies readonly FailureType[];

function typesHandled(test: (handling: Handling) => boolean): readonly FailureType[] {
  return (Object.keys(FAILURE_HANDLING) as FailureType[]).filter((type) => test(FAILURE_HANDLING[type]));
}

/** Failures Temporal never retries (by their type): everything not `retry`, but the ones decided per failure. */
export const NON_RETRYABLE_FAILURES: readonly FailureType[] = typesHandled((h) => h !== 'retry').filter(
  (type) => !(DECIDED_PER_FAILURE as readonly string[]).includes(type),
);

/** Whether a failure of this type is retried, unless the failure itself says otherwise. */
export function isRetryableByDefault(type: FailureType): boolean {
  return FAILURE_HANDLING[type] === 'retry';
}

/** Failures an operator can fix; with `onFailure: 'await-retry'` the workflow waits for `retry` on these. */
export const OPERATOR_FIXABLE_FAILURES: readonly FailureType[] = typesHandled((h) => h === 'operator');

/** Failures that mean "a daily window is spent": wait for its reset, never fail. */
export const BUDGET_WAIT_FAILURES: readonly FailureType[] = typesHandled((h) => h === 'budget-wait');

/** Details carried by a BudgetExhausted / DailyLimitReached failure. */
export interface BudgetWaitDetails {
  endpoint: string;
  /** ISO timestamp when the window resets. */
  resetsAt: string;
}
