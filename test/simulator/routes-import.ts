/**
 * The import endpoints: create a job, submit its data, read one job, list
 * jobs, and the metadata GETs (sources, activity types, activity fields).
 * Errors carry `{message}`, as on the production import paths.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { BudgetedEndpoint } from '../../workflows/contracts/endpoints.js';
import { ENTITY_TYPES, LIST_ACTIONS } from '../../workflows/contracts/import-input.js';
import { defaultFaultReply, importError } from './error-bodies.js';
import { json, parseJson, type Reply, readSmallBody, unanswered } from './http-io.js';
import { publicJob } from './job-store.js';
import { ACTIVITY_TYPES, activityFields } from './reference-data.js';
import type { RouteContext } from './route-context.js';
import type { JobRecord, JobState } from './types.js';
import { receiveUpload } from './upload-body.js';

const JOB_STATES: JobState[] = ['new', 'processing', 'completed', 'failed'];
const INT32_MIN = -(2 ** 31);
const INT32_MAX = 2 ** 31 - 1;

export const IMPORT_ROUTES: Record<BudgetedEndpoint, (ctx: RouteContext) => Promise<Reply>> = {
  createJob,
  submitData,
  jobStatus: async (ctx) => {
    const parsed = parseJobId(ctx.params[0]!);
    if (typeof parsed === 'string') return importError(400, parsed);
    const { id } = parsed;
    const job = ctx.store.get(id);
    return job
      ? json(200, publicJob(job, ctx.faults.jobs.takeOmit('jobStatus')))
      : importError(404, `Import job ${id} not found`);
  },
  listJobs,
  listSources: async (ctx) => {
    const entityType = canonicalEntityType(ctx.params[0]!);
    if (!entityType) {
      return importError(
        400,
        `entityType must be one of ${ENTITY_TYPES.join(', ')}, got ${JSON.stringify(ctx.params[0])}`,
      );
    }
    // By name, never by id: a job names a custom source as listed here.
    return json(200, { data: ctx.store.listedSources() });
  },
  activityTypes: async () => json(200, ACTIVITY_TYPES),
  activityFields: async (ctx) => {
    const raw = ctx.params[0]!;
    if (!/^-?\d+$/.test(raw)) return importError(400, `activityTypeId must be an integer, got ${JSON.stringify(raw)}`);
    const fields = activityFields(Number(raw));
    return fields ? json(200, fields) : importError(404, `Activity type ${raw} not found`);
  },
};

async function createJob(ctx: RouteContext): Promise<Reply> {
  const body = await readSmallBody(ctx.req);
  if ('tooLarge' in body) return importError(400, 'request body is too large for a create-job request');
  const input = parseJson(body.text);
  if (typeof input !== 'object' || input === null || Array.isArray(input)) {
    return importError(400, 'request body must be a JSON object with dataImportName and entityType');
  }
  const { dataImportName, entityType, source, activityTypeId } = input as Record<string, unknown>;
  if (typeof dataImportName !== 'string' || dataImportName.trim() === '') {
    return importError(400, `dataImportName must be a non-empty string, got ${JSON.stringify(dataImportName)}`);
  }
  if (typeof entityType !== 'string' || !(ENTITY_TYPES as readonly string[]).includes(entityType)) {
    return importError(400, `entityType must be one of ${ENTITY_TYPES.join(', ')}, got ${JSON.stringify(entityType)}`);
  }
  if (source !== undefined && (typeof source !== 'string' || source === '')) {
    return importError(400, `source must be a non-empty string when given, got ${JSON.stringify(source)}`);
  }
  if (activityTypeId !== undefined && !isInt32(activityTypeId)) {
    return importError(400, `activityTypeId must be a 32-bit integer, got ${JSON.stringify(activityTypeId)}`);
  }
  if (entityType === 'Activity' && activityTypeId === undefined) {
    return importError(400, 'activityTypeId is required when entityType is Activity');
  }
  const faults = ctx.faults.jobs;
  const maxChars = faults.takeTruncate();
  const fields = {
    dataImportName: maxChars === undefined ? dataImportName : Array.from(dataImportName).slice(0, maxChars).join(''),
    entityType,
    source: source ?? 'CSV',
    ...(activityTypeId === undefined ? {} : { activityTypeId: activityTypeId as number }),
  };
  const options = { bigId: faults.takeBigId(), listedAfterMs: faults.takeListLate() ?? ctx.chaos.listLateMs };
  const late = faults.takeLateCommit() ?? ctx.chaos.lateCreate;
  if (late) {
    ctx.store.createLater(late.afterMs, fields, options);
    if (late.answer === 'reset') {
      ctx.req.socket.destroy();
      return unanswered(0);
    }
    // 'timeout': the socket stays open and silent until the client gives up.
    if (late.answer === 'timeout') return unanswered(0);
    return importError(late.answer.status, 'Internal server error');
  }
  const job = ctx.store.create(fields, options);
  return json(200, publicJob(job, faults.takeOmit('createJob')));
}

async function submitData(ctx: RouteContext): Promise<Reply> {
  const parsed = parseJobId(ctx.params[0]!);
  if (typeof parsed === 'string') return importError(400, parsed);
  const { id } = parsed;
  const listAction = ctx.url.searchParams.get('listAction') ?? undefined;
  if (listAction !== undefined && !(LIST_ACTIONS as readonly string[]).includes(listAction)) {
    return importError(400, `listAction must be one of ${LIST_ACTIONS.join(', ')}, got ${JSON.stringify(listAction)}`);
  }
  const job = ctx.store.get(id);
  if (!job) return importError(404, `Import job ${id} not found`);
  if (job.state !== 'new') return notNew(job);

  const outcome = await receiveUpload(ctx.req, ctx.maxUploadBytes, {
    resetAfterBytes: ctx.faults.takeUploadReset() ?? ctx.chaos.resetUploadAfterBytes,
    stallAfterBytes: ctx.faults.takeUploadStall(),
    hold: ctx.faults.takeUploadHold(),
    answerEarlyAfterBytes: ctx.faults.takeEarlyAnswer(),
    refuseMidBody: ctx.faults.takeMidBodyRefusal(),
    throttleBytesPerSec: ctx.chaos.throttleBytesPerSec,
  });
  const declared = ctx.req.headers['content-length'];
  ctx.noteBody(outcome.bytes, declared === undefined ? undefined : Number(declared));
  const upload = { listAction };
  // Only the body that moves a job out of `new` starts its processing, so only it takes a holdProcessing fault.
  const hold = () => ({ held: job.state === 'new' && ctx.faults.jobs.takeHoldProcessing() });
  switch (outcome.kind) {
    case 'tooLarge':
      return importError(400, `the file exceeds the upload limit of ${ctx.maxUploadBytes} bytes`);
    case 'short':
      // The client is gone; the log shows the 400 the service would have sent.
      return unanswered(400);
    case 'reset':
    case 'stalled':
      return unanswered(0);
    case 'refused':
      return { ...defaultFaultReply('submitData', outcome.status), resetMidAnswer: true };
    case 'early':
      if (job.state !== 'new') return notNew(job);
      ctx.store.accept(job, { ...outcome, ...upload }, hold());
      return { ...json(200, publicJob(job)), closeUnread: true };
    case 'complete': {
      const commitAfterMs = ctx.faults.takeCommitLate();
      if (commitAfterMs !== undefined) {
        await sleep(commitAfterMs, undefined, { signal: ctx.closed }).catch(() => undefined);
        // Committed whoever is still there: only the answer needs the client.
        if (job.state !== 'new' && !ctx.lenientUploads) return notNew(job);
        ctx.store.accept(job, { ...outcome, ...upload });
        if (ctx.req.socket.destroyed) return unanswered(0);
        return json(200, publicJob(job));
      }
      const answerAfterMs = ctx.faults.takeCommitOnAnswer();
      if (answerAfterMs !== undefined) {
        await sleep(answerAfterMs, undefined, { signal: ctx.closed }).catch(() => undefined);
        // Nobody is there to hear the answer: this service does not commit.
        if (ctx.req.socket.destroyed || ctx.closed.aborted) return unanswered(0);
      }
      // Another upload to the same job may have finished while this one streamed: a strict service refuses
      // this one, a lenient one takes it too (it began while the job was new).
      if (job.state !== 'new' && !ctx.lenientUploads) return notNew(job);
      ctx.store.accept(job, { ...outcome, ...upload }, hold());
      return json(200, publicJob(job, ctx.faults.jobs.takeOmit('submitData')));
    }
  }
}

async function listJobs(ctx: RouteContext): Promise<Reply> {
  const q = ctx.url.searchParams;
  const entityTypeParam = q.get('entityType');
  const entityType = entityTypeParam === null ? undefined : canonicalEntityType(entityTypeParam);
  if (entityTypeParam !== null && !entityType) {
    return importError(
      400,
      `entityType must be one of ${ENTITY_TYPES.join(', ')}, got ${JSON.stringify(entityTypeParam)}`,
    );
  }
  const state = q.get('state');
  if (state !== null && !(JOB_STATES as string[]).includes(state)) {
    return importError(400, `state must be one of ${JOB_STATES.join(', ')}, got ${JSON.stringify(state)}`);
  }
  const sort = q.get('sort');
  if (sort !== null && sort !== 'createdAt' && sort !== '-createdAt') {
    return importError(400, `sort must be createdAt or -createdAt, got ${JSON.stringify(sort)}`);
  }
  const page = positiveInt(q.get('page'), 1);
  if (page === undefined) return importError(400, `page must be an integer >= 1, got ${JSON.stringify(q.get('page'))}`);
  const asked = positiveInt(q.get('perPage'), 20);
  if (asked === undefined || asked > 100) {
    return importError(400, `perPage must be an integer from 1 to 100, got ${JSON.stringify(q.get('perPage'))}`);
  }
  const faults = ctx.faults.jobs;
  const perPage = Math.min(asked, faults.takePageCap() ?? asked);
  const ignoreSort = faults.takeIgnoreSort();

  const matching = ctx.store
    .all()
    .filter(
      (job) =>
        ctx.store.isListed(job) &&
        (entityType === undefined || job.entityType === entityType) &&
        (state === null || job.state === state),
    )
    .sort(byId);
  if (sort !== null && !ignoreSort) {
    const direction = sort === '-createdAt' ? -1 : 1;
    // Jobs created in the same millisecond follow id order, in the same direction.
    matching.sort((a, b) => direction * (a.createdAt.localeCompare(b.createdAt) || byId(a, b)));
  }
  const omit = faults.takeOmit('listJobs') ?? [];
  const data = matching.slice((page - 1) * perPage, page * perPage).map((job) => publicJob(job, omit));
  return json(200, omit.includes('totalCount') ? { data } : { totalCount: matching.length, data });
}

function byId(a: JobRecord, b: JobRecord): number {
  const d = BigInt(a.id) - BigInt(b.id);
  return d < 0n ? -1 : d > 0n ? 1 : 0;
}

function notNew(job: JobRecord): Reply {
  return importError(400, `Import job ${job.id} is ${job.state}; data can only be submitted to a job in state new`);
}

/** The job id as a canonical decimal string, or the one-line reason it is not an int64. */
function parseJobId(raw: string): { id: string } | string {
  if (!/^\d{1,19}$/.test(raw) || BigInt(raw) > 2n ** 63n - 1n) {
    return `job id must be an int64, got ${JSON.stringify(raw)}`;
  }
  return { id: BigInt(raw).toString() };
}

function canonicalEntityType(raw: string): string | undefined {
  return ENTITY_TYPES.find((t) => t.toLowerCase() === raw.toLowerCase());
}

function isInt32(value: unknown): boolean {
  return Number.isInteger(value) && (value as number) >= INT32_MIN && (value as number) <= INT32_MAX;
}

function positiveInt(raw: string | null, fallback: number): number | undefined {
  if (raw === null) return fallback;
  if (!/^\d+$/.test(raw)) return undefined;
  const n = Number(raw);
  return n >= 1 ? n : undefined;
}
