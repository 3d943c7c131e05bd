/**
 * Every activity, built from its dependencies (the way the Temporal samples
 * inject a database): production passes real clients built from
 * configuration; tests pass the same clients pointed at local servers.
 */
import type { AllActivities, BudgetUsage } from '../workflows/policy/activity-contracts.js';
import { makeApplyFieldMappings } from './apply-field-mappings.js';
import { makeAwaitJobCompletion } from './await-job-completion.js';
import type { BudgetGate } from './budget/gate.js';
import { makeCreateImportJob } from './create-import-job.js';
import { makeInspectSource } from './inspect-source.js';
import { makeListFeedObjects } from './list-feed-objects.js';
import { ReferenceCache } from './reference-cache.js';
import type { ParallelParts } from './s3/ranged-reader.js';
import type { S3Source } from './s3/source.js';
import type { ServiceClient } from './service/client.js';
import { makeUploadData } from './upload-data.js';

export interface ActivitySettings {
  maxFileBytes: number;
  /** The service's daily reset, minutes after midnight UTC. */
  resetMinuteUtc: number;
  poll: { scheduleMs: readonly number[]; jitterRatio: number };
  uploadIdleTimeoutMs: number;
  partSizeBytes: number;
  parallelParts: ParallelParts;
}

export interface ActivityDeps {
  service: ServiceClient;
  s3: S3Source;
  budget: BudgetGate;
  settings: ActivitySettings;
  /** Metrics hook: bytes as they move into an upload. */
  onBytesUploaded?: (bytes: number) => void;
}

export function createActivities(deps: ActivityDeps) {
  const { service, s3, budget, settings } = deps;
  const calls = { service, budget, resetMinuteUtc: settings.resetMinuteUtc };
  const reference = new ReferenceCache();
  const activities = {
    inspectSource: makeInspectSource({ ...calls, s3, maxFileBytes: settings.maxFileBytes, reference }),
    applyFieldMappings: makeApplyFieldMappings(calls),
    createImportJob: makeCreateImportJob(calls),
    uploadData: makeUploadData({
      ...calls,
      s3,
      uploadIdleTimeoutMs: settings.uploadIdleTimeoutMs,
      partSizeBytes: settings.partSizeBytes,
      parallelParts: settings.parallelParts,
      onBytes: deps.onBytesUploaded,
    }),
    awaitJobCompletion: makeAwaitJobCompletion({ ...calls, poll: settings.poll }),
    readBudgetUsage: async ({ tenant }: { tenant: string }): Promise<BudgetUsage> => budget.usage(tenant),
    listFeedObjects: makeListFeedObjects({ s3 }),
  };
  // The workflows proxy these by name: fail the build if one is missing or its signature drifts from a contract.
  activities satisfies AllActivities;
  return activities;
}
