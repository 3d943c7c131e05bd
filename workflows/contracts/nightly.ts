/**
 * The nightlyImport workflow's contract: its input and result, and which
 * workflow id an S3 object gets (the CLI and the schedules name imports the
 * same way). Its decisions are in nightly-policy.ts. Pure code: it runs in the
 * workflow sandbox, the activities, the schedules command and the tests alike.
 */
import type { BudgetedEndpoint } from './endpoints.js';
import type { EntityType, FieldMappingSet, ListAction, RowOptions } from './import-input.js';
import { fnv1a64 } from './job-key.js';
import { normaliseEtag } from './object-version.js';

export const NIGHTLY_WORKFLOW_TYPE = 'nightlyImport';
export const NIGHTLY_ID_PREFIX = 'nightly-';

/**
 * A feed's settings as the schedule's action carries them (workflows cannot
 * read configuration). No secrets: anyone with Temporal UI access reads this.
 */
export interface NightlyFeed {
  bucket: string;
  prefix: string;
  /** Regular expression that keys (after the prefix) must match. */
  pattern?: string;
  entityType: EntityType;
  importSource?: string;
  activityTypeId?: number;
  listAction: ListAction;
  fieldMappings?: FieldMappingSet;
  /** How the feed's files are read, and what happens to the rows the service would refuse. */
  rows?: RowOptions;
  maxConcurrentImports: number;
  /** Resolved when the schedule is applied (the feed's own, else the worker's default). */
  tenant: string;
  /**
   * How long each of the night's imports waits for its job: IMPORT_JOB_TIMEOUT
   * when the schedule was applied. Absent from schedules applied before it
   * was carried: their imports take importFile's default.
   */
  jobTimeoutMs?: number;
}

export interface NightlyFailure {
  key: string;
  workflowId: string;
  reason: string;
}

/** What one nightly import did, carried across continue-as-new. */
export interface NightlyTally {
  started: number;
  skippedAlreadyImported: number;
  succeeded: number;
  /** The first MAX_LISTED_FAILURES failures; failedCount counts them all. */
  failed: NightlyFailure[];
  failedCount: number;
  /** Objects whose start waited for a daily budget window to reset. */
  deferredForBudget: number;
  /**
   * Objects whose import still runs from an earlier night: neither imported
   * nor started again.
   */
  stillRunning?: number;
}

export type NightlyImportResult = NightlyTally;

/** Where a running night is: its tally so far and the child imports it runs now. */
export interface NightlyProgress {
  tally: NightlyTally;
  /** Workflow ids of the children this run started that have not ended. */
  runningImports: string[];
}

/** The budgeted calls one finished child import made, by endpoint (from its result's apiCalls). */
export type ImportSpend = Partial<Record<BudgetedEndpoint, number>>;

export interface NightlyImportInput {
  feedId: string;
  feed: NightlyFeed;
  tally?: NightlyTally;
  continuationToken?: string;
  /**
   * Child starts after which this run continues as new. A run's threshold
   * must not change while it runs (replay would take another path), so it
   * travels in the input (CHILD_STARTS_PER_RUN when absent).
   */
  childStartsPerRun?: number;
  /**
   * What the night's most recently finished children spent (at most
   * RECENT_IMPORTS of them), carried so that the next run admits by it too.
   * Absent in a night's first run.
   */
  recentSpend?: ImportSpend[];
}

/**
 * One object version, one workflow id, whichever feed (or person) starts it:
 * with ALLOW_DUPLICATE_FAILED_ONLY the same object version is never imported
 * twice, a failed one can run again, and a changed object (new ETag) is a new
 * import. Two feeds whose prefixes overlap therefore import an object once.
 */
export function objectImportWorkflowId(bucket: string, key: string, etag: string): string {
  return `import-${fnv1a64(`${bucket}/${key}/${normaliseEtag(etag)}`)}`;
}
