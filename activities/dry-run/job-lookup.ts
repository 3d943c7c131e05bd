/**
 * Whether the service already holds the job an import would use: the seam
 * between the dry run and where that knowledge lives. Today it is the
 * service's job list, searched as createImportJob searches it (the key in
 * the job's name, the same states, a failed job never counts). The per
 * object-version job record (JOB-RECORD-DESIGN) will answer the same
 * question by the version without a list call: it plugs in here as another
 * JobLookup, and the report names which one answered (`via`).
 *
 * The cheapest form of the search: one pass over the list for all the keys
 * a feed's dry run asks about, state by state, ending as soon as every key
 * is found, never one pass per object.
 */
import type { ExistingJob, FindImportJobsInput, JobLookupVia } from '../../workflows/contracts/dry-run.js';
import { jobNameHasKey } from '../../workflows/contracts/job-key.js';
import { STATES_TO_SEARCH } from '../create-import-job.js';
import type {
  CallOptions,
  ImportJob,
  ImportJobList,
  ImportJobState,
  ListedJob,
  ListJobsQuery,
} from '../service/types.js';
import type { ServiceCalls } from '../service-calls.js';

export interface JobLookup {
  readonly via: JobLookupVia;
  /** One answer per lookup, in order; spends through `calls`. */
  find(input: FindImportJobsInput, calls: ServiceCalls, signal: AbortSignal): Promise<(ExistingJob | null)[]>;
}

/** What the search needs of the service client. */
export interface JobListService {
  listJobs(query: ListJobsQuery, options?: CallOptions): Promise<ImportJobList>;
  getJob(jobId: string, options?: CallOptions): Promise<ImportJob>;
}

/** Jobs per list page asked for, as createImportJob asks. */
const PER_PAGE = 50;

export function jobSearchLookup(service: JobListService, onPage: () => void = () => undefined): JobLookup {
  return {
    via: 'job-search',
    async find(input, calls, signal) {
      const keys = input.lookups.map((l) => l.jobKey);
      const found = new Map<string, ExistingJob>();
      const wanted = new Set(keys.filter((k): k is string => k !== undefined));
      const states = input.searchAllStates ? STATES_TO_SEARCH : STATES_TO_SEARCH.slice(0, 1);
      const usable = async (job: ListedJob): Promise<ExistingJob | undefined> => {
        const state = job.state ?? (await calls.run('jobStatus', () => service.getJob(job.id, { signal }))).state;
        return state.toLowerCase() === 'failed' ? undefined : { jobId: job.id, state };
      };
      for (const state of states) {
        if (found.size === wanted.size) break;
        await searchState(state, async (job) => {
          for (const key of wanted) {
            if (found.has(key) || !jobNameHasKey(job.dataImportName, key)) continue;
            const hit = await usable(job);
            if (hit) found.set(key, hit);
          }
          return found.size === wanted.size;
        });
      }
      return keys.map((k) => (k === undefined ? null : (found.get(k) ?? null)));

      /** Pages through one state's list until `onJob` says done; ends as createImportJob's search ends. */
      async function searchState(state: ImportJobState, onJob: (job: ListedJob) => Promise<boolean>) {
        const seen = new Set<string>();
        for (let page = 0; ; page++) {
          const list = await calls.run('listJobs', () =>
            service.listJobs(
              { entityType: input.entityType, state, perPage: PER_PAGE, ...(page > 0 ? { page } : {}) },
              { signal },
            ),
          );
          for (const job of list.data) if (await onJob(job)) return;
          const news = list.data.filter((job) => !seen.has(job.id));
          for (const job of list.data) seen.add(job.id);
          onPage();
          // Page 1 may repeat the first page (numbered from 1), so "nothing new" ends the list only from page 2 on.
          if (list.data.length === 0 || (page >= 2 && news.length === 0)) return;
        }
      }
    },
  };
}
