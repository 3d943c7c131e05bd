/**
 * One Temporal Schedule per configured feed, kept in step with configuration
 * by an idempotent apply: compute a plan (create / update / unchanged /
 * delete), then carry it out. A schedule counts as changed when the hash of
 * its desired definition differs from the one stored in its action's memo,
 * so applying the same configuration twice changes nothing. Describes,
 * creates, updates and deletes run a bounded number at a time (p-limit), so a
 * hundred feeds apply in seconds without flooding the frontend.
 *
 * Two applies may run at once (two deploy steps, a retry), and the server's
 * list is eventually consistent: a schedule the plan would create may exist by
 * the time it is created. The create's ScheduleAlreadyRunning then turns into
 * an update (or nothing, when it already holds this definition), and a delete
 * that finds the schedule gone is done.
 */
import type { ScheduleDescription, ScheduleOptions, ScheduleUpdateOptions } from '@temporalio/client';
import { ScheduleAlreadyRunning, ScheduleNotFoundError, ScheduleOverlapPolicy } from '@temporalio/client';
import pLimit from 'p-limit';
import type { FeedConfig, InputDefaults } from '../../temporal.config.js';
import { fnv1a64 } from '../../workflows/contracts/job-key.js';
import {
  NIGHTLY_ID_PREFIX,
  NIGHTLY_WORKFLOW_TYPE,
  type NightlyFeed,
  type NightlyImportInput,
} from '../../workflows/contracts/nightly.js';

/** The memo key (on the action, which an update can change) holding the definition's hash. */
export const DEFINITION_HASH_MEMO = 'scheduleDefinitionHash';

export function scheduleIdForFeed(feedId: string): string {
  return `${NIGHTLY_ID_PREFIX}${feedId}`;
}

export interface DesiredSchedule {
  scheduleId: string;
  feedId: string;
  /** A human summary for plans and listings, e.g. "02:00 Europe/Berlin". */
  when: string;
  options: ScheduleOptions;
  definitionHash: string;
}

/** The part of ScheduleClient that apply, list and trigger use; a test passes a fake. */
export interface ScheduleApi {
  list(): AsyncIterable<{ scheduleId: string }>;
  getHandle(scheduleId: string): ScheduleHandleApi;
  create(options: ScheduleOptions): Promise<unknown>;
}

export interface ScheduleHandleApi {
  describe(): Promise<Pick<ScheduleDescription, 'action' | 'state'>>;
  update(updateFn: (previous: ScheduleDescription) => ScheduleUpdateOptions): Promise<void>;
  delete(): Promise<void>;
  trigger(overlap?: ScheduleOverlapPolicy): Promise<void>;
}

export interface ExistingSchedule {
  scheduleId: string;
  definitionHash?: string;
}

export interface SchedulePlan {
  create: DesiredSchedule[];
  update: DesiredSchedule[];
  unchanged: DesiredSchedule[];
  /** Schedule ids with our prefix that no feed wants: deleted with prune, */
  delete: string[];
  /** else kept, and said so: they still run every night. */
  kept: string[];
}

/** The feed as the workflow receives it: settings only (no id, no schedule), tenant and job timeout resolved. */
export function nightlyFeed(feed: FeedConfig, defaults: InputDefaults): NightlyFeed {
  const out: NightlyFeed = {
    bucket: feed.bucket,
    prefix: feed.prefix,
    entityType: feed.entityType,
    listAction: feed.listAction,
    maxConcurrentImports: feed.maxConcurrentImports,
    tenant: feed.tenant ?? defaults.tenant,
    jobTimeoutMs: defaults.jobTimeoutMs,
  };
  if (feed.pattern !== undefined) out.pattern = feed.pattern;
  if (feed.importSource !== undefined) out.importSource = feed.importSource;
  if (feed.activityTypeId !== undefined) out.activityTypeId = feed.activityTypeId;
  if (feed.fieldMappings !== undefined) out.fieldMappings = feed.fieldMappings;
  return out;
}

/** JSON with sorted keys, so equal definitions hash equally whatever order they were built in. */
function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`;
  }
  return JSON.stringify(value);
}

export function desiredSchedule(feed: FeedConfig, taskQueue: string, defaults: InputDefaults): DesiredSchedule {
  const scheduleId = scheduleIdForFeed(feed.id);
  const [hour, minute] = feed.schedule.time.split(':').map(Number) as [number, number];
  const input: NightlyImportInput = { feedId: feed.id, feed: nightlyFeed(feed, defaults) };
  const spec = { calendars: [{ hour, minute, comment: `feed ${feed.id}` }], timezone: feed.schedule.timeZone };
  const policies = {
    overlap: ScheduleOverlapPolicy.SKIP,
    catchupWindow: feed.schedule.catchupWindowMs,
    pauseOnFailure: feed.schedule.pauseOnFailure,
  };
  const action = {
    type: 'startWorkflow' as const,
    workflowType: NIGHTLY_WORKFLOW_TYPE,
    taskQueue,
    workflowId: scheduleId,
    args: [input],
  };
  const definitionHash = fnv1a64(canonicalJson({ spec, policies, action }));
  return {
    scheduleId,
    feedId: feed.id,
    when: `${feed.schedule.time} ${feed.schedule.timeZone}`,
    definitionHash,
    options: {
      scheduleId,
      spec,
      policies,
      action: { ...action, memo: { [DEFINITION_HASH_MEMO]: definitionHash } },
      memo: { feedId: feed.id },
    },
  };
}

export function desiredSchedules(feeds: FeedConfig[], taskQueue: string, defaults: InputDefaults): DesiredSchedule[] {
  return feeds.map((feed) => desiredSchedule(feed, taskQueue, defaults));
}

/** Pure: what apply would do. Schedules without our id prefix are never touched. */
export function planSchedules(
  desired: DesiredSchedule[],
  existing: ExistingSchedule[],
  options: { prune: boolean },
): SchedulePlan {
  const existingById = new Map(
    existing.filter((s) => s.scheduleId.startsWith(NIGHTLY_ID_PREFIX)).map((s) => [s.scheduleId, s]),
  );
  const plan: SchedulePlan = { create: [], update: [], unchanged: [], delete: [], kept: [] };
  for (const want of desired) {
    const have = existingById.get(want.scheduleId);
    if (!have) plan.create.push(want);
    else if (have.definitionHash === want.definitionHash) plan.unchanged.push(want);
    else plan.update.push(want);
    existingById.delete(want.scheduleId);
  }
  const unwanted = [...existingById.keys()].sort();
  if (options.prune) plan.delete = unwanted;
  else plan.kept = unwanted;
  return plan;
}

/** Schedule calls in flight at once during apply: fast for a hundred feeds, gentle on the frontend. */
export const DEFAULT_APPLY_CONCURRENCY = 10;

type Limit = ReturnType<typeof pLimit>;

/** Our schedules as they are on the server, with the definition hash each was last applied with. */
export async function readExistingSchedules(api: ScheduleApi, limit: Limit): Promise<ExistingSchedule[]> {
  const ids: string[] = [];
  for await (const summary of api.list()) {
    if (summary.scheduleId.startsWith(NIGHTLY_ID_PREFIX)) ids.push(summary.scheduleId);
  }
  const described = await Promise.all(
    ids.map((scheduleId) =>
      limit(async () => {
        try {
          const hash = (await api.getHandle(scheduleId).describe()).action.memo?.[DEFINITION_HASH_MEMO];
          return { scheduleId, definitionHash: typeof hash === 'string' ? hash : undefined };
        } catch (err) {
          // Deleted since it was listed (another apply's prune): it does not exist.
          if (err instanceof ScheduleNotFoundError) return undefined;
          throw err;
        }
      }),
    ),
  );
  return described.filter((s) => s !== undefined);
}

function updateTo(api: ScheduleApi, want: DesiredSchedule): Promise<void> {
  return api.getHandle(want.scheduleId).update((previous) => ({
    spec: want.options.spec,
    action: want.options.action,
    policies: want.options.policies,
    // An operator's pause (and its note) survives a configuration change.
    state: { paused: previous.state.paused, note: previous.state.note },
  }));
}

/** Creates the schedule, or, when it exists after all, brings it to this definition. */
async function createOrUpdate(api: ScheduleApi, want: DesiredSchedule): Promise<'create' | 'update' | 'unchanged'> {
  try {
    await api.create(want.options);
    return 'create';
  } catch (err) {
    if (!(err instanceof ScheduleAlreadyRunning)) throw err;
  }
  const hash = (await api.getHandle(want.scheduleId).describe()).action.memo?.[DEFINITION_HASH_MEMO];
  if (hash === want.definitionHash) return 'unchanged';
  await updateTo(api, want);
  return 'update';
}

async function deleteIfThere(api: ScheduleApi, scheduleId: string): Promise<void> {
  try {
    await api.getHandle(scheduleId).delete();
  } catch (err) {
    if (!(err instanceof ScheduleNotFoundError)) throw err;
  }
}

/** Carries the plan out; resolves to what was done, which differs from the plan where another apply came first. */
export async function executePlan(api: ScheduleApi, plan: SchedulePlan, limit: Limit): Promise<SchedulePlan> {
  const done: SchedulePlan = {
    create: [],
    update: [],
    unchanged: [...plan.unchanged],
    delete: plan.delete,
    kept: plan.kept,
  };
  const outcomes = await Promise.all([
    ...plan.create.map((want) => limit(async () => ({ want, outcome: await createOrUpdate(api, want) }))),
    ...plan.update.map((want) =>
      limit(async () => ({ want, outcome: await updateTo(api, want).then(() => 'update' as const) })),
    ),
    ...plan.delete.map((id) => limit(() => deleteIfThere(api, id)).then(() => undefined)),
  ]);
  // Promise.all keeps the plan's order, whichever call finished first.
  for (const entry of outcomes) if (entry) done[entry.outcome].push(entry.want);
  return done;
}

export interface ApplyOptions {
  prune: boolean;
  dryRun: boolean;
  /** Schedule calls in flight at once; default DEFAULT_APPLY_CONCURRENCY. */
  concurrency?: number;
}

export async function applySchedules(
  api: ScheduleApi,
  desired: DesiredSchedule[],
  options: ApplyOptions,
): Promise<SchedulePlan> {
  const limit = pLimit(options.concurrency ?? DEFAULT_APPLY_CONCURRENCY);
  const plan = planSchedules(desired, await readExistingSchedules(api, limit), options);
  return options.dryRun ? plan : executePlan(api, plan, limit);
}

/** The plan as the CLI prints it, one line per schedule. */
export function describePlan(plan: SchedulePlan, dryRun: boolean): string[] {
  const verb = (done: string, planned: string) => (dryRun ? planned : done);
  const lines = [
    ...plan.create.map((s) => `${verb('created', 'would create')}  ${s.scheduleId}  (${s.when})`),
    ...plan.update.map((s) => `${verb('updated', 'would update')}  ${s.scheduleId}  (${s.when})`),
    ...plan.unchanged.map((s) => `unchanged  ${s.scheduleId}  (${s.when})`),
    ...plan.delete.map((id) => `${verb('deleted', 'would delete')}  ${id}`),
    ...plan.kept.map((id) => `kept       ${id}  (no configured feed; it still runs; --prune deletes it)`),
  ];
  return lines.length > 0
    ? lines
    : ['no feeds configured and no nightly schedules found (IMPORT_FEEDS_FILE is unset?)'];
}
