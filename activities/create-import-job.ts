/**
 * The createImportJob activity: exactly one job per jobKey. The service has
 * no idempotency key, so the key travels at the start of the job's name (see
 * job-key.ts), and no job is created before a search has shown that no job
 * carries it.
 *
 * The search relies only on what the service publishes: the list's
 * `entityType` and `state` filters, and that every job is listed sooner or
 * later. It does not depend on `sort` (its format is unpublished, so it is not
 * sent), on the page size asked for being honoured, on the first page's number
 * (the first page is asked for without `page`, then `page=1, 2, ...`; repeats
 * are harmless), on `totalCount`, or on the name surviving beyond the key. It
 * ends at an empty page, or at a page with nothing new (a service that repeats
 * its last page). Its place is kept in the heartbeat details, so a retried
 * attempt continues where the last one was.
 *
 * A create that timed out, failed with a 5xx or lost its connection may still
 * have made the job, which may also be listed a little late. So after such a
 * create the activity waits `settleMs` and searches again from the start
 * before any new create; when that search finds nothing it fails retryably,
 * and the next attempt (which knows the last create from the heartbeat
 * details) settles the same way.
 */

import { Context, log } from '@temporalio/activity';
import { ApplicationFailure } from '@temporalio/common';
import type {
  CreateImportJobInput,
  CreateImportJobResult,
  JobLookupProgress,
} from '../workflows/contracts/activities.js';
import { jobNameHasKey, jobNameWithKey } from '../workflows/contracts/job-key.js';
import { HEARTBEAT_PULSE_MS, withHeartbeatPulse } from './heartbeat-pulse.js';
import type {
  CallOptions,
  CreateImportJobBody,
  ImportJob,
  ImportJobList,
  ImportJobState,
  ListedJob,
  ListJobsQuery,
} from './service/types.js';
import { ServiceCalls, type ServiceCallsDeps } from './service-calls.js';

/** What this activity needs of the service client. */
interface JobCreationService {
  listJobs(query: ListJobsQuery, options?: CallOptions): Promise<ImportJobList>;
  createJob(body: CreateImportJobBody, options?: CallOptions): Promise<ImportJob>;
  getJob(jobId: string, options?: CallOptions): Promise<ImportJob>;
}

export interface CreateImportJobDeps extends ServiceCallsDeps {
  service: JobCreationService;
  /** Jobs per list page asked for; 50 is the largest page size the spec documents anywhere. The service may send fewer. */
  listPageSize?: number;
  /** How long a job made by an unanswered create may take to show in the list. Default 30 s. */
  settleMs?: number;
  /** Longest sleep between heartbeats while settling; keep well under the heartbeat timeout. */
  heartbeatIntervalMs?: number;
  /** The clock, for tests. */
  now?: () => number;
}

/** A job in `new` has no data yet; one a Reset's earlier run filled is processing or completed. A failed job is never reused. */
export const STATES_TO_SEARCH: readonly ImportJobState[] = ['new', 'processing', 'completed'];
/** Failures after which a create may still have made its job. */
const UNCERTAIN_CREATE_FAILURES = new Set(['ServerError', 'Timeout', 'Network', 'UnusableResponse']);

export function makeCreateImportJob(deps: CreateImportJobDeps) {
  const perPage = deps.listPageSize ?? 50;
  const settleMs = deps.settleMs ?? 30_000;
  const sliceMs = deps.heartbeatIntervalMs ?? 5_000;
  const now = deps.now ?? Date.now;
  return async function createImportJob(input: CreateImportJobInput): Promise<CreateImportJobResult> {
    const ctx = Context.current();
    const signal = ctx.cancellationSignal;
    const calls = ServiceCalls.forCurrentActivity(deps, input.tenant);
    const states = input.searchAllStates ? STATES_TO_SEARCH : STATES_TO_SEARCH.slice(0, 1);
    const progress = resumedProgress(ctx.info.heartbeatDetails, states.length) ?? freshSearch(now());
    const beat = () => ctx.heartbeat({ ...progress });
    let uncertainCreate: unknown;
    const search = new JobSearch(input, states, perPage, calls, deps.service, signal, beat);
    // A pause or reset must reach an attempt waiting on a slow list or create, and abort that call.
    return withHeartbeatPulse(beat, HEARTBEAT_PULSE_MS, async () => {
      for (;;) {
        const createdMs = progress.createdAt === undefined ? undefined : Date.parse(progress.createdAt);
        if (createdMs !== undefined && Date.parse(progress.startedAt) < createdMs + settleMs) {
          await sleepHeartbeating(createdMs + settleMs - now(), sliceMs, beat);
          Object.assign(progress, freshSearch(now()), { createdAt: progress.createdAt });
        }
        const found = await search.run(progress);
        if (found) {
          log.info('Import job found, created earlier', { jobId: found.id, jobState: found.state });
          return { jobId: found.id, reused: true, state: found.state, apiCalls: calls.counts };
        }
        // Settled and searched, and still no job: the uncertain create made none. Let Temporal back off before the next.
        if (uncertainCreate !== undefined) throw uncertainCreate;

        progress.createdAt = new Date(now()).toISOString();
        beat();
        try {
          const job = await calls.run('createJob', () => deps.service.createJob(createBody(input), { signal }));
          log.info('Import job created', { jobId: job.id, jobState: job.state });
          return { jobId: job.id, reused: false, state: job.state, apiCalls: calls.counts };
        } catch (err) {
          if (!(err instanceof ApplicationFailure) || !UNCERTAIN_CREATE_FAILURES.has(err.type ?? '')) throw err;
          uncertainCreate = err;
        }
      }
    });
  };
}

function createBody(input: CreateImportJobInput): CreateImportJobBody {
  return {
    dataImportName: jobNameWithKey(input.dataImportName, input.jobKey),
    entityType: input.entityType,
    ...(input.importSource === undefined ? {} : { source: input.importSource }),
    ...(input.activityTypeId === undefined ? {} : { activityTypeId: input.activityTypeId }),
  };
}

function freshSearch(nowMs: number): JobLookupProgress {
  return { stateIndex: 0, page: 0, startedAt: new Date(nowMs).toISOString() };
}

/** The last attempt's place, when its details are readable; a finished search starts over (jobs may have appeared since). */
function resumedProgress(details: unknown, stateCount: number): JobLookupProgress | undefined {
  const d = details as Partial<JobLookupProgress> | undefined;
  const isIndex = (v: unknown): v is number => typeof v === 'number' && Number.isInteger(v) && v >= 0;
  const isInstant = (v: unknown): v is string => typeof v === 'string' && !Number.isNaN(Date.parse(v));
  if (!isIndex(d?.stateIndex) || !isIndex(d.page) || !isInstant(d.startedAt)) return undefined;
  if (d.createdAt !== undefined && !isInstant(d.createdAt)) return undefined;
  const place = d.stateIndex < stateCount ? { stateIndex: d.stateIndex, page: d.page } : { stateIndex: 0, page: 0 };
  return { ...place, startedAt: d.startedAt, ...(d.createdAt === undefined ? {} : { createdAt: d.createdAt }) };
}

async function sleepHeartbeating(ms: number, sliceMs: number, beat: () => void): Promise<void> {
  for (let slept = 0; slept < ms; slept += sliceMs) {
    await Context.current().sleep(Math.min(sliceMs, ms - slept));
    beat();
  }
}

/** One pass over the listed jobs of each state, page by page, for a usable job carrying the key. */
class JobSearch {
  constructor(
    private readonly input: CreateImportJobInput,
    private readonly states: readonly ImportJobState[],
    private readonly perPage: number,
    private readonly calls: ServiceCalls,
    private readonly service: JobCreationService,
    private readonly signal: AbortSignal,
    private readonly beat: () => void,
  ) {}

  /** Advances `progress` as it goes; returns the job, or undefined once every state's list is read. */
  async run(progress: JobLookupProgress): Promise<{ id: string; state: string } | undefined> {
    for (; progress.stateIndex < this.states.length; progress.stateIndex++, progress.page = 0) {
      const state = this.states[progress.stateIndex] as ImportJobState;
      const seen = new Set<string>();
      for (;;) {
        const page = progress.page;
        const list = await this.calls.run('listJobs', () =>
          this.service.listJobs(
            { entityType: this.input.entityType, state, perPage: this.perPage, ...(page > 0 ? { page } : {}) },
            { signal: this.signal },
          ),
        );
        for (const job of list.data) {
          if (!jobNameHasKey(job.dataImportName, this.input.jobKey)) continue;
          const usable = await this.usable(job);
          if (usable) return usable;
        }
        const news = list.data.filter((job) => !seen.has(job.id));
        for (const job of list.data) seen.add(job.id);
        progress.page += 1;
        this.beat();
        // Page 1 may repeat the first page (numbered from 1), so "nothing new" ends the list only from page 2 on.
        if (list.data.length === 0 || (page >= 2 && news.length === 0)) break;
      }
    }
    return undefined;
  }

  /** The job with its state, unless the service marked it failed; a list entry without a state is read by id. */
  private async usable(job: ListedJob): Promise<{ id: string; state: string } | undefined> {
    const state =
      job.state ??
      (await this.calls.run('jobStatus', () => this.service.getJob(job.id, { signal: this.signal }))).state;
    return state.toLowerCase() === 'failed' ? undefined : { id: job.id, state };
  }
}
