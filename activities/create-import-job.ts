/**
 * The createImportJob activity: exactly one job per jobKey. The service has
 * no idempotency key, so the key travels in the job's name, and every attempt
 * first looks for a job that already carries it: a create whose response was
 * lost, a retried attempt and an operator's reset all find that job instead
 * of creating a second one.
 */
import { Context, log } from '@temporalio/activity';
import type { CreateImportJobInput, CreateImportJobResult } from '../workflows/policy/activity-contracts.js';
import { jobNameHasKey, jobNameWithKey } from '../workflows/policy/job-key.js';
import type { CallOptions, CreateImportJobBody, ImportJob, ImportJobList, ListJobsQuery } from './service/types.js';
import { ServiceCalls, type ServiceCallsDeps } from './service-calls.js';

/** What this activity needs of the service client. */
export interface JobCreationService {
  listJobs(query: ListJobsQuery, options?: CallOptions): Promise<ImportJobList>;
  createJob(body: CreateImportJobBody, options?: CallOptions): Promise<ImportJob>;
}

export interface CreateImportJobDeps extends ServiceCallsDeps {
  service: JobCreationService;
  /** Jobs per list page; 50 is the largest page size the spec documents anywhere. */
  listPageSize?: number;
}

export function makeCreateImportJob(deps: CreateImportJobDeps) {
  const perPage = deps.listPageSize ?? 50;
  return async function createImportJob(input: CreateImportJobInput): Promise<CreateImportJobResult> {
    const signal = Context.current().cancellationSignal;
    const calls = ServiceCalls.forCurrentActivity(deps, input.tenant);
    const existing = await findJobWithKey(input, perPage, calls, deps.service, signal);
    if (existing) {
      log.info('Import job found, created earlier', { jobId: existing.id, jobState: existing.state });
      return { jobId: existing.id, reused: true, state: existing.state, apiCalls: calls.counts };
    }
    const body: CreateImportJobBody = {
      dataImportName: jobNameWithKey(input.dataImportName, input.jobKey),
      entityType: input.entityType,
      ...(input.importSource === undefined ? {} : { source: input.importSource }),
      ...(input.activityTypeId === undefined ? {} : { activityTypeId: input.activityTypeId }),
    };
    const job = await calls.run('createJob', () => deps.service.createJob(body, { signal }));
    log.info('Import job created', { jobId: job.id, jobState: job.state });
    return { jobId: job.id, reused: false, state: job.state, apiCalls: calls.counts };
  };
}

/** Newest first, page by page, until the key is found or the jobs are older than notBefore. */
async function findJobWithKey(
  input: CreateImportJobInput,
  perPage: number,
  calls: ServiceCalls,
  service: JobCreationService,
  signal: AbortSignal,
): Promise<ImportJob | undefined> {
  const notBeforeMs = Date.parse(input.notBefore);
  if (Number.isNaN(notBeforeMs)) throw new RangeError(`notBefore must be an ISO instant, got ${input.notBefore}`);
  for (let page = 1; ; page++) {
    const list = await calls.run('listJobs', () =>
      service.listJobs({ entityType: input.entityType, sort: '-createdAt', page, perPage }, { signal }),
    );
    for (const job of list.data) {
      if (jobNameHasKey(job.dataImportName, input.jobKey)) return job;
      if (Date.parse(job.createdAt) < notBeforeMs) return undefined;
    }
    if (list.data.length < perPage || page * perPage >= list.totalCount) return undefined;
  }
}
