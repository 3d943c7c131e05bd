/** The findImportJobs activity: asks the JobLookup, spending only reads, reserved with the ledger. */
import { Context } from '@temporalio/activity';
import type { DryRunStep, FindImportJobsInput, FindImportJobsResult } from '../../workflows/contracts/dry-run.js';
import { ServiceCalls, type ServiceCallsDeps } from '../service-calls.js';
import type { JobLookup } from './job-lookup.js';
import { dryRunStep, refusedStep } from './step.js';

export function makeFindImportJobs(deps: ServiceCallsDeps & { lookup: JobLookup }) {
  return async function findImportJobs(input: FindImportJobsInput): Promise<DryRunStep<FindImportJobsResult>> {
    let calls: ServiceCalls;
    try {
      calls = ServiceCalls.forCurrentActivity(deps, input.tenant);
    } catch (err) {
      return refusedStep(err);
    }
    if (input.lookups.every((l) => l.jobKey === undefined) && deps.lookup.via === 'job-search') {
      // No key exists yet, so no job can carry one: nothing to read.
      return { ok: true, value: { via: 'none', jobs: input.lookups.map(() => null) }, apiCalls: {} };
    }
    const signal = Context.current().cancellationSignal;
    return dryRunStep(calls, async () => ({
      via: deps.lookup.via,
      jobs: await deps.lookup.find(input, calls, signal),
    }));
  };
}
