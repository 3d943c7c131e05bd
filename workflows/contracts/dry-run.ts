/**
 * The dry run's contract: what `import-worker start --dry-run` and
 * `schedules trigger <feed> --dry-run` ask the worker, what the worker's
 * read-only activities answer, and the report that comes back. The dry run
 * runs as a workflow on the worker, so the service token never leaves it and
 * every read is reserved with the ledger like any call. Types only (and the
 * workflow type names), so the CLI imports no workflow code. Nothing secret.
 */
import type { InspectSourceInput } from './activities.js';
import type { ApiCallCounts, BudgetedEndpoint } from './endpoints.js';
import type { FieldMapping, FieldMappingSet, ImportFileInput, MappingObjectType } from './import-input.js';
import type { JobRecordStatus } from './job-record.js';
import type { NightlyFeed } from './nightly.js';

export const DRY_RUN_IMPORT_WORKFLOW_TYPE = 'dryRunImport';
export const DRY_RUN_FEED_WORKFLOW_TYPE = 'dryRunFeed';
/** Objects a feed's dry run checks when not told otherwise; at most MAX_FEED_DRY_RUN_OBJECTS. */
export const DEFAULT_FEED_DRY_RUN_OBJECTS = 20;
export const MAX_FEED_DRY_RUN_OBJECTS = 200;

export interface DryRunImportInput {
  /** The importFile input `start` would send, already validated by the CLI. */
  input: ImportFileInput;
  /** The operator's --workflow-id; absent: the object version's id, as `start` names it. */
  workflowId?: string;
}

export interface DryRunFeedInput {
  feedId: string;
  feed: NightlyFeed;
  /** Check at most this many objects of the feed, in the order the nightly lists them. */
  maxObjects: number;
}

/** A check that could not say yes: the failure type the import would fail with, and why. */
export interface DryRunProblem {
  /** The step of the import it stands for (inspectSource, applyFieldMappings, createImportJob, start, budget). */
  check: string;
  type: string;
  message: string;
}

/** import: the import would go ahead; the others stop it (`fail`) or make it unnecessary. */
export type DryRunVerdict = 'import' | 'fail' | 'already-imported' | 'running';

export interface MappingDiff {
  sourceId: string;
  /** The custom source's name, which the import's job would be created on (absent when it could not be read). */
  sourceName?: string;
  objectType: MappingObjectType;
  /** The source's set already equals the wanted one: the import writes nothing. */
  inPlace: boolean;
  /** Wanted mappings the source lacks. */
  missing: FieldMapping[];
  /** Mappings the source holds that the import would remove (the service keeps one set per source). */
  unexpected: FieldMapping[];
}

/** The job the version's record holds, which the import would use instead of creating one. */
export interface ExistingJob {
  jobId: string;
  /** Its state: the record's last known one, or one status read's when the record had not seen the job end. */
  state: string;
  /** The state the record last heard, present when a status read refreshed it (the record had not seen the end). */
  recordedState?: string;
}

/** The object version's job record (its workflow id) and how the next import would find it. */
export interface RecordFinding {
  workflowId: string;
  status: JobRecordStatus;
}

export interface DryRunJob {
  /** The job name the import would send; `<key>` stands for the key its record gives the create. */
  name: string;
  /** How the key is made, for a reader of the report. */
  keyNote: string;
  /** job-record: the version's record was read; none: not looked up (the import would stop before its job). */
  lookup: JobLookupVia;
  /** The version's record, when it was read. */
  record?: RecordFinding;
  /** The job the import would reuse instead of creating one. */
  existing?: ExistingJob;
}

/** One budgeted endpoint's cost for the import and what the ledger has left. */
export interface BudgetCheck {
  endpoint: BudgetedEndpoint;
  /** Calls the import would spend (an estimate for status polls and list pages). */
  calls: number;
  /** True when `calls` is a floor (list pages depend on how many jobs the service lists). */
  atLeast?: boolean;
  /** Left in the ledger's window now; absent when the ledger tracks no limit for it. */
  remaining?: number;
  resetsAt?: string;
  /** Not enough left: the import would wait durably for the window to reset (not a failure). */
  waits: boolean;
}

export interface ObjectDryRun {
  source: { bucket: string; key: string };
  verdict: DryRunVerdict;
  /** Why it would fail, or why it needs no import. Empty when it would import. */
  problems: DryRunProblem[];
  warnings: string[];
  /** The import's workflow id (the object version's unless --workflow-id named one). */
  workflowId?: string;
  /** What Temporal holds for that id: absent, running, completed, ended-otherwise. */
  importState?: string;
  object?: {
    etag: string;
    sizeBytes: number;
    header: string[];
    /** How the file is written, e.g. `gzip, windows-1252, ";", CRLF`. */
    dialect?: string;
    rowSample?: RowSample;
  };
  fieldMappings?: MappingDiff;
  job?: DryRunJob;
  budget: BudgetCheck[];
}

export interface DryRunImportReport {
  object: ObjectDryRun;
  /** Every call this dry run made to the service, per endpoint (the budgeted ones reserved with the ledger). */
  spent: ApiCallCounts;
}

export interface DryRunFeedReport {
  feedId: string;
  bucket: string;
  prefix: string;
  /** Objects the listing gave, up to the bound. */
  listed: number;
  /** True when the feed holds more objects than were checked. */
  more: boolean;
  maxObjects: number;
  objects: ObjectDryRun[];
  fieldMappings?: MappingDiff;
  /** How many of the objects to import the budget allows now; absent when the ledger limits none. */
  allowedNow?: number;
  /** When the rest could start: the reset of the tightest spent window. */
  reopensAt?: string;
  spent: ApiCallCounts;
  /** A problem of the feed as a whole (its listing failed). */
  problems: DryRunProblem[];
}

/** One object version whose import's job is asked for (the record is the worker tenant's). */
export interface JobLookupRequest {
  version: { bucket: string; key: string; etag: string };
}

export type JobLookupVia = 'job-record' | 'none';

export interface FindImportJobsInput {
  tenant?: string;
  lookups: JobLookupRequest[];
}

export interface FindImportJobsResult {
  via: JobLookupVia;
  /** One per lookup, in order: the job the version's record holds, or null (the import would create one). */
  jobs: (ExistingJob | null)[];
  /**
   * One per lookup, in order. Optional only for the answer of a dry run begun
   * on a worker before this one (its job search had no record to name).
   */
  records?: RecordFinding[];
}

export interface DiffFieldMappingsInput {
  tenant?: string;
  set: FieldMappingSet;
}

/** A read-only step's answer: its value, or the failure the import would meet; what it spent either way. */
export type DryRunStep<T> =
  | { ok: true; value: T; apiCalls: ApiCallCounts }
  | { ok: false; type: string; message: string; apiCalls: ApiCallCounts };

export interface PreflightFacts {
  sizeBytes: number;
  etag: string;
  header: string[];
  warnings: string[];
  /** How the file is written, e.g. `gzip, windows-1252, ";", CRLF`. */
  dialect: string;
  /** The row check on the file's first rows: the dry run never reads a whole file. */
  rowSample: RowSample;
}

/** The rows of a sample of the file the service would refuse. */
export interface RowSample {
  /** The (decompressed) bytes the sample covered. */
  bytes: number;
  /** True when the sample is the whole file, so the counts are the file's. */
  wholeFile: boolean;
  read: number;
  rejected: number;
  /** The first refused rows, each with its row number (the header is row 1) and reason. */
  examples: { row: number; reason: string }[];
  /**
   * The jobs the file's body makes at the part limit (IMPORT_MAX_PART_BYTES):
   * counted when the sample is the whole file, else estimated from the
   * sample's body per source byte. Absent from a worker that does not count them.
   */
  parts?: number;
}

/** The read-only activities only the dry run calls; `createActivities(deps)` registers them. */
export interface DryRunActivities {
  /** inspectSource's checks, with what they spent also when they fail. */
  dryRunPreflight(input: InspectSourceInput): Promise<DryRunStep<PreflightFacts>>;
  /** applyFieldMappings' read and compare, never its write. */
  diffFieldMappings(input: DiffFieldMappingsInput): Promise<DryRunStep<MappingDiff>>;
  /** The job each version's record holds, read without a claim or a start; never a list call, never a create. */
  findImportJobs(input: FindImportJobsInput): Promise<DryRunStep<FindImportJobsResult>>;
}
