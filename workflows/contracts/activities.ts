/**
 * What each activity takes and returns: the contract between workflows (which
 * decide) and activities (which act). Types only, so workflow code can import
 * them without pulling any I/O into the sandbox. Nothing here carries a secret.
 */
// Types only (erased): the row stage's dialect and plan are plain data that cross activity results.
import type { Dialect, PartPlan, RowPlan } from '../../activities/rows/index.js';
import type { ApiCallCounts } from './endpoints.js';
import type {
  CsvDelimiter,
  CsvEncoding,
  EntityType,
  FieldMapping,
  FieldMappingSet,
  ListAction,
  OnRejectedRowsMode,
} from './import-input.js';
import type { RowCounts } from './import-workflow.js';
import type { ObjectVersion, PartOfVersion } from './object-version.js';

export type { PartPlan };

/**
 * The tenant an import names, if any. Budgets are always those of the
 * worker's own credential; an activity refuses an input naming another tenant.
 */
interface BudgetScope {
  tenant?: string;
}

export interface InspectSourceInput extends BudgetScope {
  bucket: string;
  key: string;
  /** The job reads the header through these: each sourceFieldLabel must appear, and they may supply required fields. */
  mappings?: FieldMapping[];
  /** Decides the header labels the file needs. */
  entityType: EntityType;
  /** Checked against the sources the service lists for the entity type. */
  importSource?: string;
  /** For Activity: decides the fields the file needs. */
  activityTypeId?: number;
  /** The import's delimiter; without one it is read from the header row. */
  delimiter?: CsvDelimiter;
  /** The import's declared encoding; without one UTF-8, or UTF-16 by its byte order mark. */
  encoding?: CsvEncoding;
}

export interface InspectSourceResult {
  sizeBytes: number;
  etag: string;
  versionId?: string;
  contentType?: string;
  /** How the file is written (compression, encoding, delimiter, line end): every later pass reads it so. */
  dialect: Dialect;
  header: string[];
  /** Header columns no mapping covers, and similar non-fatal findings. */
  warnings: string[];
  /** The reference reads preflight made (absent in histories from before it made any). */
  apiCalls?: ApiCallCounts;
}

export interface ApplyFieldMappingsInput extends BudgetScope {
  set: FieldMappingSet;
  /**
   * The import (workflow id) that takes the source's mapping lock first:
   * refused with MappingConflict while another running import holds it with
   * another set. Absent: the mappings are applied without the lock.
   */
  mappingLockHolder?: string;
}

export interface ApplyFieldMappingsResult {
  /** True when the service's set differed and was replaced. */
  changed: boolean;
  apiCalls: ApiCallCounts;
}

export interface CreateImportJobInput extends BudgetScope {
  dataImportName: string;
  entityType: EntityType;
  importSource?: string;
  /**
   * The custom source whose field mappings the import applied: the job is
   * created on it, by the name the service lists (it reads its header
   * through those mappings only then). Replaces importSource.
   */
  customSourceId?: string;
  activityTypeId?: number;
  /** The object version whose job record decides which job imports it. */
  objectVersion: ObjectVersion;
  /** The version this import moved on from (its file was replaced): its record is told to let go. */
  supersedes?: ObjectVersion;
}

export interface CreateImportJobResult {
  /** The service's int64 job id, as a decimal string. */
  jobId: string;
  /** True when the job already existed (a lost response or a reset). */
  reused: boolean;
  state: string;
  apiCalls: ApiCallCounts;
}

export interface PlanRowsInput extends BudgetScope {
  bucket: string;
  key: string;
  /** The version inspected: the read is pinned to it, and the rejects report is named after it. */
  etag: string;
  dialect: Dialect;
  entityType: EntityType;
  fieldMappings?: FieldMappingSet;
  onRejectedRows: OnRejectedRowsMode;
  /** `s3://bucket/prefix/` or a key prefix in the source's bucket; default beside the file. */
  rejectsPrefix?: string;
}

export interface PlanRowsResult {
  /** The durable plan every attempt at the upload regenerates the same body from. */
  plan: RowPlan;
  /** The plan as the result and `status` show it, with the rejects report's location. */
  rows: RowCounts;
}

export interface UploadDataInput extends BudgetScope {
  jobId: string;
  bucket: string;
  key: string;
  /** The ETag seen at preflight: the read is pinned to it (If-Match). */
  etag: string;
  /** The body's size: the object's, or the planned canonical body's. */
  sizeBytes: number;
  listAction: ListAction;
  /**
   * The plan of a body the row stage regenerates (canonical CSV); absent when
   * the object is sent byte for byte.
   */
  rowPlan?: RowPlan;
  /**
   * Set when the plan splits the file into several jobs: the part of
   * `rowPlan` this job receives, whose job record is the part's own.
   */
  part?: PartOfVersion;
}

export interface UploadDataResult {
  bytesSent: number;
  /** True when the service had already accepted data, so nothing was sent. */
  skipped: boolean;
  state: string;
  apiCalls: ApiCallCounts;
}

/**
 * Heartbeat details of uploadData: progress to show, nothing more. What may
 * be sent is the job record's to say (held-back, lost or cleared heartbeat
 * details cannot decide it).
 */
export interface UploadProgress {
  bytesSent: number;
  totalBytes: number;
}

export interface AwaitJobCompletionInput extends BudgetScope {
  jobId: string;
  /** Overall limit on waiting, from the first poll (ms). */
  timeoutMs: number;
  /** Where to start in the poll schedule, when resuming after a budget wait. */
  startPollIndex?: number;
  /** ISO instant the wait began; the timeout counts from it across budget waits. */
  waitingSince?: string;
  /** The object version whose job record is told the job's end. */
  objectVersion?: ObjectVersion;
}

export interface AwaitJobCompletionResult {
  state: 'completed';
  polls: number;
  apiCalls: ApiCallCounts;
}

/** Heartbeat details of awaitJobCompletion. */
export interface PollProgress {
  pollIndex: number;
  lastState: string;
  waitingSince: string;
  /**
   * The latest word of the job's state this wait has: a status read, or a
   * watcher sweep that listed the job in `processing` (`at`: when that sweep
   * began). For `import-worker status`; absent until the first word.
   */
  lastSeen?: JobSighting;
  /** ISO instant the next word is due: the watcher's next sweep, or the next status poll. */
  nextCheckAt?: string;
}

export interface JobSighting {
  state: string;
  /** ISO instant. */
  at: string;
  by: 'status read' | 'watcher';
}

export interface BudgetUsageInput {
  tenant?: string;
}

export interface EndpointUsage {
  used: number;
  limit: number;
  remaining: number;
  /** ISO instant the window resets. */
  resetsAt: string;
  /** Set when the service said 429 before the ledger's count ran out (ISO). */
  exhaustedUntil?: string;
  /**
   * Of `used`, the calls granted to worker processes' allowances that their
   * holders have not settled yet: spent or still held (absent when none).
   */
  held?: number;
}

export type BudgetUsage = Record<string, EndpointUsage>;

export interface WindowSpendInput {
  /** ISO instant the ledger's window began. */
  windowStart: string;
  /** The window's limit of job creations: how many jobs it can hold, so how many pages to read at most. */
  createLimit?: number;
}

/** Calls the service's own record shows spent in a window, and the list calls it took to read it. */
export interface WindowSpend {
  createJob: number;
  submitData: number;
  listJobs: number;
  /** Set when the list's order could not be told, or its bound came first: the counts may be short. */
  partial?: boolean;
}

export interface ReadImportStatesInput {
  workflowIds: string[];
}

/** Where a child import's workflow id stands: never started, running, completed, or ended any other way. */
export type ImportState = 'absent' | 'running' | 'completed' | 'ended-otherwise';

export interface ListFeedObjectsInput {
  bucket: string;
  prefix: string;
  /** A regular expression source that object keys (after the prefix) must match. */
  pattern?: string;
  continuationToken?: string;
  maxKeys: number;
}

export interface FeedObject {
  key: string;
  etag: string;
  sizeBytes: number;
  lastModified: string;
}

export interface ListFeedObjectsResult {
  objects: FeedObject[];
  nextContinuationToken?: string;
}

/**
 * The activities the import workflow calls, by the names `createActivities(deps)`
 * registers. Workflows proxy this interface; the worker passes the real ones.
 */
export interface ImportActivities {
  inspectSource(input: InspectSourceInput): Promise<InspectSourceResult>;
  planRows(input: PlanRowsInput): Promise<PlanRowsResult>;
  applyFieldMappings(input: ApplyFieldMappingsInput): Promise<ApplyFieldMappingsResult>;
  createImportJob(input: CreateImportJobInput): Promise<CreateImportJobResult>;
  /** Runs on `uploadTaskQueue(taskQueue)`: a worker with its own, lower concurrency. */
  uploadData(input: UploadDataInput): Promise<UploadDataResult>;
  awaitJobCompletion(input: AwaitJobCompletionInput): Promise<AwaitJobCompletionResult>;
  readBudgetUsage(input: BudgetUsageInput): Promise<BudgetUsage>;
}

/** The activities the nightly workflow calls; `createActivities(deps)` must provide these too. */
export interface NightlyActivities {
  listFeedObjects(input: ListFeedObjectsInput): Promise<ListFeedObjectsResult>;
  readBudgetUsage(input: BudgetUsageInput): Promise<BudgetUsage>;
  readImportStates(input: ReadImportStatesInput): Promise<Record<string, ImportState>>;
}

/** The activities the budget ledger calls. */
export interface LedgerActivities {
  /** Run by the budget ledger when it starts without counts. */
  countWindowSpend(input: WindowSpendInput): Promise<WindowSpend>;
}

/** The activities the mapping lock calls: whether its holders still run. */
export type MappingLockActivities = Pick<NightlyActivities, 'readImportStates'>;
