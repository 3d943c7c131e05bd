/**
 * One pass over the listed `new` jobs, page by page, for a usable job whose
 * name carries a job key (see job-key.ts): a job an unanswered create made
 * has no data yet.
 *
 * It relies only on what the service publishes: the list's `entityType` and
 * `state` filters, and that every job is listed sooner or later. It does not
 * depend on `sort` (its format is unpublished, so it is not sent), on the page
 * size asked for being honoured, on the first page's number (the first page
 * is asked for without `page`, then `page=1, 2, ...`; repeats are harmless), on
 * `totalCount`, or on the name surviving beyond the key. It ends at an empty
 * page, or at a page with nothing new (a service that repeats its last page).
 * It always starts from the first page: a place kept in heartbeat details may
 * be lost or stale, and a job may sit on any page.
 */

import type { EntityType } from '../../workflows/contracts/import-input.js';
import { jobNameHasKey } from '../../workflows/contracts/job-key.js';
import type {
  CallOptions,
  ImportJob,
  ImportJobList,
  ImportJobState,
  ListedJob,
  ListJobsQuery,
} from '../service/types.js';
import type { ServiceCalls } from '../service-calls.js';

/** What a search needs of the service client. */
export interface JobListingService {
  listJobs(query: ListJobsQuery, options?: CallOptions): Promise<ImportJobList>;
  getJob(jobId: string, options?: CallOptions): Promise<ImportJob>;
}

export interface JobSearchRequest {
  entityType: EntityType;
  jobKey: string;
  perPage: number;
}

export class JobSearch {
  constructor(
    private readonly calls: ServiceCalls,
    private readonly service: JobListingService,
    private readonly signal: AbortSignal,
    private readonly beat: () => void,
  ) {}

  /** The job carrying the key, unless the service marked it failed; undefined once every list is read. */
  async find(request: JobSearchRequest): Promise<{ id: string; state: string } | undefined> {
    const state: ImportJobState = 'new';
    const seen = new Set<string>();
    for (let page = 0; ; page++) {
      const list = await this.calls.run('listJobs', () =>
        this.service.listJobs(
          { entityType: request.entityType, state, perPage: request.perPage, ...(page > 0 ? { page } : {}) },
          { signal: this.signal },
        ),
      );
      for (const job of list.data) {
        if (!jobNameHasKey(job.dataImportName, request.jobKey)) continue;
        const usable = await this.usable(job);
        if (usable) return usable;
      }
      const news = list.data.filter((job) => !seen.has(job.id));
      for (const job of list.data) seen.add(job.id);
      this.beat();
      // Page 1 may repeat the first page (numbered from 1), so "nothing new" ends the list only from page 2 on.
      if (list.data.length === 0 || (page >= 2 && news.length === 0)) return undefined;
    }
  }

  /** The job with its state, unless the service marked it failed; a list entry without a state is read by id. */
  private async usable(job: ListedJob): Promise<{ id: string; state: string } | undefined> {
    const state =
      job.state ??
      (await this.calls.run('jobStatus', () => this.service.getJob(job.id, { signal: this.signal }))).state;
    return state.toLowerCase() === 'failed' ? undefined : { id: job.id, state };
  }
}
