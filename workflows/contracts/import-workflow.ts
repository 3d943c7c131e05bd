/**
 * What the importFile workflow exposes to its callers (CLI, schedules, parent
 * workflows): the result, the progress query's answer and the defaults it
 * applies (its messages are in messages.ts). Types and constants only, so
 * callers need not import workflow code.
 */
import type { ApiCallCounts } from './endpoints.js';

export const DEFAULT_JOB_TIMEOUT_MS = 24 * 60 * 60 * 1000;
export const DEFAULT_AWAIT_RETRY_TIMEOUT_MS = 7 * 24 * 60 * 60 * 1000;

export type ImportPhase =
  | 'validating'
  | 'inspecting'
  | 'checking-rows'
  | 'applying-mappings'
  | 'creating-job'
  | 'uploading'
  | 'awaiting-completion'
  | 'completed'
  | 'failed';

/** The steps the workflow runs, named as their activities are. */
export type ImportStep =
  | 'inspectSource'
  | 'planRows'
  | 'applyFieldMappings'
  | 'createImportJob'
  | 'uploadData'
  | 'awaitJobCompletion';

interface AwaitingRetry {
  step: ImportStep;
  failureType: string;
  failure: string;
  /** ISO instant the workflow started waiting for a signal. */
  since: string;
  /** ISO instant it gives up without one. */
  until: string;
}

/**
 * The `progress` query's answer. Bytes sent are not here: the workflow never
 * sees heartbeats, so the CLI reads `bytesSent` from the pending uploadData
 * activity's heartbeat details (`describe()`), and shows it against totalBytes.
 */
export interface ImportProgress {
  phase: ImportPhase;
  /** The tenant the input named, if any (the budgets are always the worker's tenant's). */
  tenant?: string;
  /** The service's int64 job id, as a decimal string. */
  jobId?: string;
  jobState?: string;
  totalBytes?: number;
  /** The rows as the row check counted them, once it has run. */
  rows?: RowCounts;
  /** Set while a file split into several jobs is imported: the part under way (jobId and jobState are its). */
  part?: { number: number; of: number };
  /** Set while a daily budget is spent: the ISO instant the workflow resumes. */
  waitingForBudgetUntil?: string;
  /** Set while the workflow waits for a `retry` or `abandon` signal. */
  awaitingRetry?: AwaitingRetry;
  lastError?: { step: ImportStep; type: string; message: string };
}

/** What the row check found: how the file is written, and its rows read, sent and refused. */
export interface RowCounts {
  /** e.g. `gzip, windows-1252, ";", CRLF`. */
  dialect: string;
  /** `original`: the object went byte for byte; `canonical`: it was rewritten as UTF-8 comma CSV. */
  body: 'original' | 'canonical';
  read: number;
  sent: number;
  rejected: number;
  /** How many jobs the sent rows are split into, when more than one (each part at most IMPORT_MAX_PART_BYTES). */
  parts?: number;
  /** `s3://bucket/key` of the rejects report, when a row was refused. */
  rejectsReport?: string;
}

/** Seconds spent in each step (workflow time, so budget waits are counted apart). */
interface ImportStepSeconds {
  inspect: number;
  checkRows: number;
  mappings: number;
  createJob: number;
  upload: number;
  awaitCompletion: number;
  waitingForBudget: number;
}

/** One part of a file split into several jobs, as it was imported. */
export interface PartResult {
  /** 1 for the first part. */
  number: number;
  jobId: string;
  bytes: number;
  /** The source rows the part covers, inclusive (the header is row 1); its refused ones are in the rejects report. */
  firstRow: number;
  lastRow: number;
  rowsSent: number;
  jobReused: boolean;
  uploadSkipped: boolean;
}

export interface ImportFileResult {
  /** The service's int64 job id, as a decimal string; the first part's, for a file split into several jobs. */
  jobId: string;
  state: 'completed';
  bytes: number;
  etag: string;
  seconds: ImportStepSeconds;
  rows: RowCounts;
  apiCalls: ApiCallCounts;
  /** True when the job already existed (a lost create response or a reset); for a split file, every part's. */
  jobReused: boolean;
  /** True when the service had already accepted the data, so nothing was sent again; for a split file, every part's. */
  uploadSkipped: boolean;
  /** Set for a file split into several jobs (`bytes` is then their sum): each part, in order. */
  parts?: PartResult[];
}
