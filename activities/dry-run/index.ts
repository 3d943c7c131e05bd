/**
 * The dry run's activities: read-only counterparts of the import's own, built
 * from the same dependencies (and the same reference cache, so a dry run's
 * reads serve the import that follows it).
 */
import { Context } from '@temporalio/activity';
import type { DryRunActivities } from '../../workflows/contracts/dry-run.js';
import type { InspectSourceDeps } from '../inspect-source.js';
import type { ServiceClient } from '../service/client.js';
import type { ServiceCallsDeps } from '../service-calls.js';
import { makeFindImportJobs } from './find-import-jobs.js';
import { type JobLookup, jobSearchLookup } from './job-lookup.js';
import { makeDiffFieldMappings } from './mapping-diff.js';
import { makeDryRunPreflight } from './preflight.js';

export interface DryRunDeps extends ServiceCallsDeps, Omit<InspectSourceDeps, 'service'> {
  service: ServiceClient;
  /** Where "does the service hold this import's job" is answered; default: the service's job list. */
  jobLookup?: JobLookup;
}

export function createDryRunActivities(deps: DryRunDeps): DryRunActivities {
  const lookup = deps.jobLookup ?? jobSearchLookup(deps.service, () => Context.current().heartbeat());
  return {
    dryRunPreflight: makeDryRunPreflight(deps),
    diffFieldMappings: makeDiffFieldMappings(deps),
    findImportJobs: makeFindImportJobs({ budget: deps.budget, lookup }),
  };
}
