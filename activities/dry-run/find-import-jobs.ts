/**
 * The findImportJobs activity: which job each object version's import would
 * use. An import decides that through the version's job record
 * (workflows/job-record.ts), never through the service's job list, so the
 * dry run asks the record too: a look that starts, claims and writes
 * nothing (a dry run changes nothing), and no list call, whatever the
 * tenant's history.
 *
 * A job whose end the record has not seen (an import cut off, or one that
 * timed out waiting) may have moved on: whether the import would upload,
 * follow it or meet a failed job depends on where it is now, so one status
 * read, reserved with the ledger like any call, refreshes it. A job the
 * record saw complete is final: no read.
 */
import { Context } from '@temporalio/activity';
import type {
  DryRunStep,
  ExistingJob,
  FindImportJobsInput,
  FindImportJobsResult,
  JobLookupRequest,
  RecordFinding,
} from '../../workflows/contracts/dry-run.js';
import { jobRecordWorkflowId, type TenantObjectVersion } from '../../workflows/contracts/job-record.js';
import type { JobRecordReader } from '../job-record/gate.js';
import type { CallOptions, ImportJob } from '../service/types.js';
import { ServiceCalls, type ServiceCallsDeps } from '../service-calls.js';
import { dryRunStep, refusedStep } from './step.js';

/** What the refresh needs of the service client. */
export interface JobStatusService {
  getJob(jobId: string, options?: CallOptions): Promise<ImportJob>;
}

export interface FindImportJobsDeps extends ServiceCallsDeps {
  service: JobStatusService;
  records: JobRecordReader;
}

/** Records read at once: a feed's dry run asks about up to 200 versions. */
const READS_AT_ONCE = 8;

interface Found {
  record: RecordFinding;
  job: ExistingJob | null;
}

export function makeFindImportJobs(deps: FindImportJobsDeps) {
  return async function findImportJobs(input: FindImportJobsInput): Promise<DryRunStep<FindImportJobsResult>> {
    let calls: ServiceCalls;
    try {
      calls = ServiceCalls.forCurrentActivity(deps, input.tenant);
    } catch (err) {
      return refusedStep(err);
    }
    const ctx = Context.current();
    return dryRunStep(calls, async () => {
      const found: Found[] = [];
      for (let i = 0; i < input.lookups.length; i += READS_AT_ONCE) {
        const batch = input.lookups.slice(i, i + READS_AT_ONCE);
        found.push(...(await Promise.all(batch.map((l) => lookUp(l, deps, calls, ctx.cancellationSignal)))));
        ctx.heartbeat();
      }
      return { via: 'job-record', jobs: found.map((f) => f.job), records: found.map((f) => f.record) };
    });
  };
}

async function lookUp(
  request: JobLookupRequest,
  deps: FindImportJobsDeps,
  calls: ServiceCalls,
  signal: AbortSignal,
): Promise<Found> {
  // The record is the worker's tenant's, as the import's own activities name it.
  const version: TenantObjectVersion = { ...request.version, tenant: deps.budget.tenant };
  const reading = await deps.records.read(version);
  const record = { workflowId: jobRecordWorkflowId(version), status: reading.status };
  const known = reading.view?.job;
  if (!known) return { record, job: null };
  if (known.terminal === 'completed') return { record, job: { jobId: known.jobId, state: known.state } };
  const now = await calls.run('jobStatus', () => deps.service.getJob(known.jobId, { signal }));
  return { record, job: { jobId: known.jobId, state: now.state, recordedState: known.state } };
}
