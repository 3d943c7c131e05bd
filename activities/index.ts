/**
 * Every activity, built from its dependencies (the way the Temporal samples
 * inject a database): production passes real clients built from
 * configuration; tests pass the same clients pointed at local servers.
 */
import type { BudgetUsage, BudgetUsageInput } from '../workflows/contracts/activities.js';
import type { AllActivities } from '../workflows/contracts/all-activities.js';
import { makeApplyFieldMappings } from './apply-field-mappings.js';
import { makeAwaitJobCompletion } from './await-job-completion.js';
import type { BudgetGate } from './budget/gate.js';
import { makeCountWindowSpend } from './budget/window-spend.js';
import { makePlanRows, SERVICE_MAX_PART_BYTES } from './check-rows/plan-rows-activity.js';
import { makeCreateImportJob } from './create-job/create-import-job.js';
import { createDryRunActivities } from './dry-run/index.js';
import { makeInspectSource } from './inspect-source.js';
import type { JobRecordGate, JobRecordReader } from './job-record/gate.js';
import { makeListFeedObjects } from './list-feed-objects.js';
import type { MappingLocks } from './mapping-lock.js';
import { makeNotify, type WebhookSettings } from './notify/webhook.js';
import { makeReadImportStates, type WorkflowStatuses } from './read-import-states.js';
import { ReferenceCache } from './reference-cache.js';
import type { ParallelParts } from './s3/ranged-reader.js';
import type { S3Source } from './s3/source.js';
import type { ServiceClient } from './service/client.js';
import { ServiceCalls } from './service-calls.js';
import { makeUploadData } from './upload/index.js';
import { DEFAULT_WATCHER_SETTINGS, JobWatcher, type JobWatcherSettings } from './watch/job-watcher.js';
import type { SweepBoard } from './watch/sweep-board.js';

interface ActivitySettings {
  /** The largest source object taken; absent, any. */
  maxFileBytes?: number;
  /** The most one job receives; a larger body is split. Default the service's 5 GB. */
  maxPartBytes?: number;
  poll: { scheduleMs: readonly number[]; jitterRatio: number };
  uploadIdleTimeoutMs: number;
  partSizeBytes: number;
  parallelParts: ParallelParts;
  /** How long a create that got no clear answer may take to show its job in the list; default 30 s. */
  createSettleMs?: number;
  /**
   * The job watcher's settings; its fastest sweep defaults to the poll
   * schedule's last delay (the spec's "at most once every 60 s").
   */
  watch?: Partial<JobWatcherSettings>;
  /**
   * Service time runs this many times faster than real time: only the demo,
   * tests and benchmarks, whose simulator ends jobs in seconds, pass it; 1
   * (the default) in production. It shrinks the listing grace and the time
   * left in a budget window by that factor, so that the pace stays the one a
   * day would have.
   */
  timeCompression?: number;
}

export interface ActivityDeps {
  service: ServiceClient;
  s3: S3Source;
  budget: BudgetGate;
  /** Temporal's view of workflow ids (the nightly's child imports, the mapping locks' holders). */
  workflows: WorkflowStatuses;
  /** The custom sources' mapping locks. */
  mappingLocks: MappingLocks;
  /** The object versions' job records: which job imports a version, who may create or upload it now. */
  jobRecord: JobRecordGate & JobRecordReader;
  /** Where the tenant's worker processes share their sweeps; without one, this process sweeps for itself. */
  sweepBoard?: SweepBoard;
  settings: ActivitySettings;
  /** The operator's webhook; absent: `notify` sends nothing. */
  notify?: WebhookSettings;
  /** Metrics hook: bytes as they move into an upload. */
  onBytesUploaded?: (bytes: number) => void;
}

export function createActivities(deps: ActivityDeps) {
  const { service, s3, budget, settings } = deps;
  const calls = { service, budget };
  const reference = new ReferenceCache();
  const activities = {
    inspectSource: makeInspectSource({ ...calls, s3, maxFileBytes: settings.maxFileBytes, reference }),
    planRows: makePlanRows({ s3, maxPartBytes: settings.maxPartBytes ?? SERVICE_MAX_PART_BYTES }),
    applyFieldMappings: makeApplyFieldMappings({ ...calls, locks: deps.mappingLocks }),
    createImportJob: makeCreateImportJob({
      ...calls,
      jobRecord: deps.jobRecord,
      settleMs: settings.createSettleMs,
      reference,
    }),
    uploadData: makeUploadData({
      ...calls,
      s3,
      jobRecord: deps.jobRecord,
      uploadIdleTimeoutMs: settings.uploadIdleTimeoutMs,
      partSizeBytes: settings.partSizeBytes,
      parallelParts: settings.parallelParts,
      onBytes: deps.onBytesUploaded,
    }),
    awaitJobCompletion: makeAwaitJobCompletion({
      ...calls,
      jobRecord: deps.jobRecord,
      poll: settings.poll,
      watcher: watcherFor(deps),
    }),
    readBudgetUsage: async ({ tenant }: BudgetUsageInput): Promise<BudgetUsage> => {
      ServiceCalls.forCurrentActivity(calls, tenant);
      return budget.usage();
    },
    listFeedObjects: makeListFeedObjects({ s3 }),
    readImportStates: makeReadImportStates({ workflows: deps.workflows }),
    countWindowSpend: makeCountWindowSpend({ service }),
    notify: makeNotify(deps.notify),
    ...createDryRunActivities({
      ...calls,
      s3,
      maxFileBytes: settings.maxFileBytes,
      maxPartBytes: settings.maxPartBytes ?? SERVICE_MAX_PART_BYTES,
      reference,
      records: deps.jobRecord,
    }),
  };
  // The workflows proxy these by name: fail the build if one is missing or its signature drifts from a contract.
  activities satisfies AllActivities;
  return activities;
}

/**
 * The one watcher of this process's tenant (one credential per worker
 * process); with a sweep board it shares its sweeps with the tenant's other
 * processes, so the fleet lists once per interval. It sweeps at the poll schedule's last delay at most, and reads
 * service time as running `timeCompression` times faster (1 unless the demo,
 * a test or a benchmark says so): never from the schedule, so a production
 * schedule that polls faster than the spec's 60 s keeps the full listing
 * grace. The ledger still refuses every call past a limit.
 */
export function watcherFor({ service, budget, settings, sweepBoard }: ActivityDeps): JobWatcher {
  const minSweepMs = settings.poll.scheduleMs.at(-1) ?? DEFAULT_WATCHER_SETTINGS.minSweepMs;
  const compression = settings.timeCompression ?? 1;
  if (!Number.isFinite(compression) || compression < 1) {
    throw new Error(`timeCompression must be a number of at least 1 (1 in production), got ${compression}`);
  }
  const listLateGraceMs = DEFAULT_WATCHER_SETTINGS.listLateGraceMs / compression;
  return new JobWatcher({
    service,
    budget,
    ...(sweepBoard ? { board: sweepBoard } : {}),
    settings: { minSweepMs, listLateGraceMs, compression, ...settings.watch },
  });
}
