/**
 * The createImportJob activity: exactly one job per object version. The
 * service has no idempotency key; the object version's job record
 * (workflows/job-record.ts), not a search, says which job imports it, and a
 * key in the job's name (job-key.ts) finds a job whose create went unanswered.
 *
 * - known: the version's job; no service call at all.
 * - wait: another import owns the create; heartbeat and ask again every
 *   retryAfterMs while this attempt has time, then fail retryably
 *   (ImportInProgress). The gate claims over an owner whose run has closed.
 * - create: POST with the body's last byte held back until the record
 *   confirms this attempt still owns the create (a lease); the answer is
 *   reported (resolveCreate). An uncertain end (timeout, 5xx, reset, cancel,
 *   an unusable answer) reports nothing and fails retryably: the next attempt
 *   is told to resolve.
 * - resolve: an earlier owner may have made a job. Wait until it would be
 *   listed, counted from this claim (which comes after that POST ended), or
 *   fail retryably after that wait when it outlasts this attempt; then
 *   search only `new` jobs for the intent's key, every page: found, it is the
 *   job; none, the record opens a fresh intent.
 * So the happy path makes no list call: a create costs the same whatever the
 * tenant's history.
 */
import { Context, log } from '@temporalio/activity';
import { ApplicationFailure } from '@temporalio/common';
import type { CreateImportJobInput, CreateImportJobResult } from '../../workflows/contracts/activities.js';
import { jobNameWithKey } from '../../workflows/contracts/job-key.js';
import type {
  ClaimCreateAnswer,
  ResolveCreateAnswer,
  TenantObjectVersion,
} from '../../workflows/contracts/job-record.js';
import { HEARTBEAT_PULSE_MS, withHeartbeatPulse } from '../heartbeat-pulse.js';
import type { JobRecordGate, JobRecordSession } from '../job-record/gate.js';
import { knownJobState, unexpectedJobState } from '../job-state.js';
import { ReferenceCache } from '../reference-cache.js';
import type { CreatedJob, CreateImportJobBody, FencedCallOptions } from '../service/types.js';
import { ServiceCalls, type ServiceCallsDeps } from '../service-calls.js';
import { type CustomSourceService, onCustomSource } from './custom-source-name.js';
import { type JobListingService, JobSearch } from './job-search.js';

/** What this activity needs of the service client. */
export interface JobCreationService extends JobListingService, CustomSourceService {
  createJob(body: CreateImportJobBody, options?: FencedCallOptions): Promise<CreatedJob>;
}

export interface CreateImportJobDeps extends ServiceCallsDeps {
  service: JobCreationService;
  /** The worker's reference data (a custom source's name); default one of this activity's own. */
  reference?: ReferenceCache;
  /** The object versions' job records. */
  jobRecord: JobRecordGate;
  /** Jobs per list page asked for; 50 is the largest page size the spec documents anywhere. The service may send fewer. */
  listPageSize?: number;
  /** The least wait before a search after an uncertain create: how late the service may list a job. Default 30 s. */
  settleMs?: number;
  /** Longest sleep between heartbeats while waiting; keep well under the heartbeat timeout. */
  heartbeatIntervalMs?: number;
  /** The clock, for tests. */
  now?: () => number;
}

interface RecordCreateDeps {
  service: JobCreationService;
  jobRecord: JobRecordGate;
  tenant: string;
  perPage: number;
  settleMs: number;
  sliceMs: number;
  now: () => number;
}

/** Failures after which a create may still have made its job (anything not an ApplicationFailure too: a cancel). */
const UNCERTAIN_CREATE_FAILURES = new Set(['ServerError', 'Timeout', 'Network', 'UnusableResponse']);
/** Room left at the end of the attempt's own time for the last claim and the failure report. */
const END_MARGIN_MS = 30_000;

type Answer = ClaimCreateAnswer | ResolveCreateAnswer;

export function makeCreateImportJob(deps: CreateImportJobDeps) {
  const recordDeps: RecordCreateDeps = {
    service: deps.service,
    jobRecord: deps.jobRecord,
    tenant: deps.budget.tenant,
    perPage: deps.listPageSize ?? 50,
    settleMs: deps.settleMs ?? 30_000,
    sliceMs: deps.heartbeatIntervalMs ?? 5_000,
    now: deps.now ?? Date.now,
  };
  const reference = deps.reference ?? new ReferenceCache();
  return async function createImportJob(given: CreateImportJobInput): Promise<CreateImportJobResult> {
    const calls = ServiceCalls.forCurrentActivity(deps, given.tenant);
    const ctx = Context.current();
    const input = await onCustomSource(given, { service: deps.service, reference }, calls, ctx.cancellationSignal);
    // A pause or reset must reach an attempt waiting on a slow list or create, and abort that call.
    return withHeartbeatPulse(
      () => ctx.heartbeat(),
      HEARTBEAT_PULSE_MS,
      () => createThroughRecord(input, recordDeps, calls),
    );
  };
}

async function createThroughRecord(
  input: CreateImportJobInput,
  deps: RecordCreateDeps,
  calls: ServiceCalls,
): Promise<CreateImportJobResult> {
  const ctx = Context.current();
  const version: TenantObjectVersion = { ...input.objectVersion, tenant: deps.tenant };
  if (input.supersedes) await deps.jobRecord.session({ ...input.supersedes, tenant: deps.tenant }).supersede();
  const session = deps.jobRecord.session(version);
  const endsAt = deps.now() + (ctx.info.startToCloseTimeoutMs || 10 * 60_000) - END_MARGIN_MS;
  const beat = () => ctx.heartbeat();
  const search = new JobSearch(calls, deps.service, ctx.cancellationSignal, beat);
  const result = (job: { jobId: string; state: string }, reused: boolean): CreateImportJobResult => ({
    jobId: job.jobId,
    reused,
    state: job.state,
    apiCalls: calls.counts,
  });
  let reused = true;
  let answer: Answer = await session.claimCreate();
  for (;;) {
    switch (answer.kind) {
      case 'known':
        log.info(reused ? 'Import job known for this file version' : 'Import job created', {
          jobId: answer.jobId,
          jobState: answer.state,
        });
        return result(answer, reused);
      case 'refused':
        throw superseded(answer.reason);
      case 'wait':
        if (deps.now() + answer.retryAfterMs > endsAt) throw inProgress(answer.reason, answer.retryAfterMs);
        log.info('Another import creates this file version’s job: following it', { reason: answer.reason });
        await sleepHeartbeating(answer.retryAfterMs, deps.sliceMs, beat);
        answer = await session.claimCreate();
        break;
      case 'resolve': {
        // Counted from this claim, which came after the earlier POST ended (or its worker died).
        const settleMs = Math.max(answer.settleMs, deps.settleMs);
        if (deps.now() + settleMs > endsAt) throw unsettled(settleMs);
        await sleepHeartbeating(settleMs, deps.sliceMs, beat);
        const found = await search.find({
          entityType: input.entityType,
          jobKey: answer.jobKey,
          perPage: deps.perPage,
        });
        log.info(found ? 'Import job found, created earlier' : 'No job from the uncertain create: creating', {
          jobKey: answer.jobKey,
          ...(found ? { jobId: found.id } : {}),
        });
        answer = await session.resolveCreate(answer.seq, found ? { jobId: found.id, state: found.state } : undefined);
        break;
      }
      case 'create':
        reused = false;
        answer = await post(input, answer, session, deps, calls);
        break;
    }
  }
}

/**
 * What the import makes after its create: the upload and the status read
 * before it, the wait's early read and its confirm. Asked for with the
 * create's own reservation when this process holds none of them: whichever
 * import's upload or wait runs here next spends them, so each process of a
 * fleet holds calls in an import's proportions instead of asking its ledger
 * again at every step of an import that moved between processes.
 */
const CALLS_AFTER_CREATE = { submitData: 1, jobStatus: 3 } as const;

/** One create, its body's last byte held for the fence; the answer goes to the record. */
async function post(
  input: CreateImportJobInput,
  intent: { seq: number; jobKey: string },
  session: JobRecordSession,
  deps: RecordCreateDeps,
  calls: ServiceCalls,
): Promise<Answer> {
  let refusal: string | undefined;
  // Asked on every send (a resend after a 401 confirms again); the last byte leaves only within the lease.
  const fence = async () => {
    const lease = await session.confirm('create', intent.seq);
    if (lease?.valid()) return true;
    refusal = lease ? 'the lease ran out before the last byte' : 'the record gave the create to another attempt';
    return false;
  };
  const body = createBody(input, intent.jobKey);
  const signal = Context.current().cancellationSignal;
  let job: CreatedJob;
  calls.expect(CALLS_AFTER_CREATE);
  try {
    job = await calls.run('createJob', () => deps.service.createJob(body, { signal, fence }));
  } catch (err) {
    // A body held short of its length cannot have created a job, and a later attempt owns the create now.
    if (refusal !== undefined) throw superseded(refusal);
    if (err instanceof ApplicationFailure && !UNCERTAIN_CREATE_FAILURES.has(err.type ?? '')) {
      // The service refused it: no job. A fresh intent spares the next attempt the settle.
      await session.resolveCreate(intent.seq).catch(() => undefined);
    }
    throw err;
  }
  const state = knownJobState(job.state) ?? (await stateReadAgain(job.id, deps, calls));
  if (!state.trim()) throw unexpectedJobState(job.id, state, 'it was not recorded; the next attempt searches for it');
  const answer = await session.resolveCreate(intent.seq, { jobId: job.id, state });
  if (answer.kind === 'known' && answer.jobId !== job.id) {
    log.warn('The record names another job for this file version than the create made', {
      created: job.id,
      recorded: answer.jobId,
    });
  }
  if (knownJobState(state) === undefined) {
    throw unexpectedJobState(job.id, state, 'the job is kept for this file version and no file was sent to it');
  }
  return answer;
}

/**
 * A create answered with a state the spec does not name (`queued`), or none:
 * what the job holds is read, never assumed (a job taken to hold its file
 * would never get it).
 */
async function stateReadAgain(jobId: string, deps: RecordCreateDeps, calls: ServiceCalls): Promise<string> {
  const signal = Context.current().cancellationSignal;
  const job = await calls.run('jobStatus', () => deps.service.getJob(jobId, { signal }));
  return knownJobState(job.state) ?? job.state;
}

function createBody(input: CreateImportJobInput, jobKey: string): CreateImportJobBody {
  return {
    dataImportName: jobNameWithKey(input.dataImportName, jobKey),
    entityType: input.entityType,
    ...(input.importSource === undefined ? {} : { source: input.importSource }),
    ...(input.activityTypeId === undefined ? {} : { activityTypeId: input.activityTypeId }),
  };
}

function superseded(reason: string): ApplicationFailure {
  return ApplicationFailure.create({ type: 'AttemptSuperseded', message: `this create attempt stopped: ${reason}` });
}

function inProgress(reason: string, retryAfterMs: number): ApplicationFailure {
  return ApplicationFailure.create({
    type: 'ImportInProgress',
    message: `${reason}; this import follows its job once it is known`,
    nextRetryDelay: retryAfterMs,
  });
}

/**
 * The wait for an earlier create to settle outlasts this attempt (a long
 * delivery bound): the next attempt, after that wait, asks the record again,
 * which counts from the same confirm.
 */
function unsettled(settleMs: number): ApplicationFailure {
  return ApplicationFailure.create({
    type: 'ImportInProgress',
    message:
      `an earlier attempt's create may still reach the service for ${settleMs} ms (IMPORT_DELIVERY_BOUND), ` +
      'longer than this attempt may run; the next attempt searches for its job after that',
    nextRetryDelay: settleMs,
  });
}

async function sleepHeartbeating(ms: number, sliceMs: number, beat: () => void): Promise<void> {
  for (let slept = 0; slept < ms; slept += sliceMs) {
    await Context.current().sleep(Math.min(sliceMs, ms - slept));
    beat();
  }
}
