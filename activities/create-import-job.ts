/**
 * The createImportJob activity: exactly one job per object version. The
 * service has no idempotency key, so a key travels at the start of the job's
 * name (see job-key.ts).
 *
 * Runs with the `import-uses-job-record` marker name the object version: the
 * version's job record decides (job-record/create-job.ts), and the service is
 * searched only to resolve an uncertain create, among `new` jobs.
 *
 * Runs recorded before it (no object version) keep the search before every
 * create, over `new` jobs (and processing and completed ones after a Reset or
 * under a jobScope), always from the first page: a place kept in heartbeat
 * details may be lost or stale. A create that timed out, failed with a 5xx or
 * lost its connection may still have made the job, which may be listed a
 * little late: the next search waits `settleMs` after it.
 */

import { Context, log } from '@temporalio/activity';
import { ApplicationFailure } from '@temporalio/common';
import type {
  CreateImportJobInput,
  CreateImportJobResult,
  JobLookupProgress,
} from '../workflows/contracts/activities.js';
import { jobNameWithKey } from '../workflows/contracts/job-key.js';
import { type CustomSourceService, onCustomSource } from './custom-source-name.js';
import { HEARTBEAT_PULSE_MS, withHeartbeatPulse } from './heartbeat-pulse.js';
import { createThroughRecord, type RecordCreateService, sleepHeartbeating } from './job-record/create-job.js';
import type { JobRecordGate } from './job-record/gate.js';
import { JobSearch } from './job-search.js';
import { ReferenceCache } from './reference-cache.js';
import type { CreateImportJobBody, ImportJobState } from './service/types.js';
import { ServiceCalls, type ServiceCallsDeps } from './service-calls.js';

/** What this activity needs of the service client. */
export type JobCreationService = RecordCreateService & CustomSourceService;

export interface CreateImportJobDeps extends ServiceCallsDeps {
  service: JobCreationService;
  /** The worker's reference data (a custom source's name); default one of this activity's own. */
  reference?: ReferenceCache;
  /** The job records; the runs that name an object version need one. */
  jobRecord?: JobRecordGate;
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
const STATES_TO_SEARCH: readonly ImportJobState[] = ['new', 'processing', 'completed'];
/** Failures after which a create may still have made its job. */
const UNCERTAIN_CREATE_FAILURES = new Set(['ServerError', 'Timeout', 'Network', 'UnusableResponse']);

export function makeCreateImportJob(deps: CreateImportJobDeps) {
  const perPage = deps.listPageSize ?? 50;
  const settleMs = deps.settleMs ?? 30_000;
  const sliceMs = deps.heartbeatIntervalMs ?? 5_000;
  const now = deps.now ?? Date.now;
  const reference = deps.reference ?? new ReferenceCache();
  return async function createImportJob(given: CreateImportJobInput): Promise<CreateImportJobResult> {
    const calls = ServiceCalls.forCurrentActivity(deps, given.tenant);
    const input = await onCustomSource(
      given,
      { service: deps.service, reference },
      calls,
      Context.current().cancellationSignal,
    );
    const { objectVersion } = input;
    if (objectVersion) {
      if (!deps.jobRecord) throw new Error('createImportJob: this worker was built without job records');
      const recordDeps = { service: deps.service, jobRecord: deps.jobRecord, tenant: deps.budget.tenant };
      const ctx = Context.current();
      // A pause or reset must reach an attempt waiting on a slow list or create, and abort that call.
      return withHeartbeatPulse(
        () => ctx.heartbeat(),
        HEARTBEAT_PULSE_MS,
        () =>
          createThroughRecord({ ...input, objectVersion }, { ...recordDeps, perPage, settleMs, sliceMs, now }, calls),
      );
    }
    return searchThenCreate(input, calls, { perPage, settleMs, sliceMs, now, service: deps.service });
  };
}

/** The way of runs recorded before the job record: search, then create. */
async function searchThenCreate(
  input: CreateImportJobInput,
  calls: ServiceCalls,
  o: { perPage: number; settleMs: number; sliceMs: number; now: () => number; service: JobCreationService },
): Promise<CreateImportJobResult> {
  const ctx = Context.current();
  const signal = ctx.cancellationSignal;
  const progress: JobLookupProgress = { createdAt: lastCreate(ctx.info.heartbeatDetails) };
  const beat = () => ctx.heartbeat({ ...progress });
  const search = new JobSearch(calls, o.service, signal, beat);
  const states = input.searchAllStates ? STATES_TO_SEARCH : STATES_TO_SEARCH.slice(0, 1);
  let uncertainCreate: unknown;
  // A pause or reset must reach an attempt waiting on a slow list or create, and abort that call.
  return withHeartbeatPulse(beat, HEARTBEAT_PULSE_MS, async () => {
    for (;;) {
      if (progress.createdAt !== undefined) {
        await sleepHeartbeating(Date.parse(progress.createdAt) + o.settleMs - o.now(), o.sliceMs, beat);
      }
      const found = await search.find({
        entityType: input.entityType,
        jobKey: input.jobKey,
        states,
        perPage: o.perPage,
      });
      if (found) {
        log.info('Import job found, created earlier', { jobId: found.id, jobState: found.state });
        return { jobId: found.id, reused: true, state: found.state, apiCalls: calls.counts };
      }
      // Settled and searched, and still no job: the uncertain create made none. Let Temporal back off before the next.
      if (uncertainCreate !== undefined) throw uncertainCreate;
      progress.createdAt = new Date(o.now()).toISOString();
      beat();
      try {
        const job = await calls.run('createJob', () => o.service.createJob(createBody(input), { signal }));
        log.info('Import job created', { jobId: job.id, jobState: job.state });
        return { jobId: job.id, reused: false, state: job.state, apiCalls: calls.counts };
      } catch (err) {
        if (!(err instanceof ApplicationFailure) || !UNCERTAIN_CREATE_FAILURES.has(err.type ?? '')) throw err;
        uncertainCreate = err;
      }
    }
  });
}

function createBody(input: CreateImportJobInput): CreateImportJobBody {
  return {
    dataImportName: jobNameWithKey(input.dataImportName, input.jobKey),
    entityType: input.entityType,
    ...(input.importSource === undefined ? {} : { source: input.importSource }),
    ...(input.activityTypeId === undefined ? {} : { activityTypeId: input.activityTypeId }),
  };
}

/** When the last attempt's uncertain create began, if its details say so (a wait, never a search place). */
function lastCreate(details: unknown): string | undefined {
  const createdAt = (details as Partial<JobLookupProgress> | undefined)?.createdAt;
  return typeof createdAt === 'string' && !Number.isNaN(Date.parse(createdAt)) ? createdAt : undefined;
}
