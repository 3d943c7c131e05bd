/**
 * The dry run's activities: read-only counterparts of the import's own, built
 * from the same dependencies (and the same reference cache, so a dry run's
 * reads serve the import that follows it).
 */
import type { DryRunActivities } from '../../workflows/contracts/dry-run.js';
import type { InspectSourceDeps } from '../inspect-source.js';
import type { JobRecordReader } from '../job-record/gate.js';
import type { ServiceClient } from '../service/client.js';
import type { ServiceCallsDeps } from '../service-calls.js';
import { makeFindImportJobs } from './find-import-jobs.js';
import { makeDiffFieldMappings } from './mapping-diff.js';
import { makeDryRunPreflight } from './preflight.js';

export interface DryRunDeps extends ServiceCallsDeps, Omit<InspectSourceDeps, 'service'> {
  service: ServiceClient;
  /** The object versions' job records, which say which job an import would use. */
  records: JobRecordReader;
  /** IMPORT_MAX_PART_BYTES: how many jobs a file would make. */
  maxPartBytes: number;
}

export function createDryRunActivities(deps: DryRunDeps): DryRunActivities {
  return {
    dryRunPreflight: makeDryRunPreflight(deps),
    diffFieldMappings: makeDiffFieldMappings(deps),
    findImportJobs: makeFindImportJobs({ service: deps.service, budget: deps.budget, records: deps.records }),
  };
}
