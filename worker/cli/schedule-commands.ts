/** `import-worker schedules apply|list|trigger`: the nightly feeds' Temporal Schedules. */
import { setTimeout as delay } from 'node:timers/promises';
import {
  type ScheduleDescription,
  type ScheduleHandle,
  ScheduleNotFoundError,
  ScheduleOverlapPolicy,
} from '@temporalio/client';
import { loadClientConfig, loadFeeds, loadInputDefaults, loadTemporalConfig } from '../../temporal.config.js';
import { NIGHTLY_ID_PREFIX } from '../../workflows/contracts/nightly.js';
import { CliError, UsageError } from './cli-error.js';
import { type CliContext, withClient } from './context.js';
import { applySchedules, describePlan, desiredSchedules, scheduleIdForFeed } from './schedules.js';
import { formatTable } from './table.js';

export interface ApplyFlags {
  dryRun?: boolean;
  prune?: boolean;
  /** --prune, also with no feed configured: then every nightly schedule goes. */
  pruneAll?: boolean;
}

/**
 * --prune with no feed configured would delete every nightly schedule; in a deploy step an unset
 * IMPORT_FEEDS_FILE is an easy mistake, so that takes --prune-all.
 */
function refusePruningEverything(ctx: CliContext): never {
  const file = ctx.env.IMPORT_FEEDS_FILE?.trim();
  const why = file ? `IMPORT_FEEDS_FILE ${file} lists no feeds` : 'IMPORT_FEEDS_FILE is unset';
  throw new UsageError(
    `refusing --prune: ${why}, so it would delete every nightly schedule; set IMPORT_FEEDS_FILE, or pass --prune-all to delete them all`,
  );
}

export async function schedulesApplyCommand(options: ApplyFlags, ctx: CliContext) {
  const config = loadClientConfig(ctx.env);
  const feeds = loadFeeds(ctx.env);
  const prune = (options.prune ?? false) || (options.pruneAll ?? false);
  if (options.prune && !options.pruneAll && feeds.length === 0) refusePruningEverything(ctx);
  const desired = desiredSchedules(feeds, config.temporal.taskQueue, loadInputDefaults(ctx.env));
  for (const feed of feeds) {
    if (feed.listAction === 'replace' || feed.listAction === 'delete') {
      ctx.warn(`warning: feed ${feed.id} uses listAction ${feed.listAction}, which removes list members`);
    }
  }
  await withClient(ctx, config.temporal, async ({ client }) => {
    const dryRun = options.dryRun ?? false;
    const plan = await applySchedules(client.schedule, desired, { dryRun, prune });
    for (const line of describePlan(plan, dryRun)) ctx.print(line);
  });
}

export async function schedulesListCommand(ctx: CliContext) {
  await withClient(ctx, loadTemporalConfig(ctx.env), async ({ client }) => {
    const rows: string[][] = [];
    // The listing is the server's visibility store, which lags a pause or an unpause by a moment: it
    // names the schedules, and each one's own description gives its state now.
    for await (const listed of client.schedule.list()) {
      if (!listed.scheduleId.startsWith(NIGHTLY_ID_PREFIX)) continue;
      const s = await client.schedule.getHandle(listed.scheduleId).describe();
      const last = s.info.recentActions.at(-1);
      rows.push([
        s.scheduleId,
        s.state.paused ? `paused${s.state.note ? ` (${s.state.note})` : ''}` : 'active',
        // The server still computes the times of a paused schedule; none of them runs until it is unpaused.
        s.state.paused ? 'none (paused)' : (s.info.nextActionTimes[0]?.toISOString() ?? '-'),
        last ? `${last.takenAt.toISOString()} ${last.action.workflow.workflowId}` : '-',
      ]);
    }
    if (rows.length === 0) {
      ctx.warn('no nightly schedules; run "import-worker schedules apply" with IMPORT_FEEDS_FILE set');
      return;
    }
    for (const line of formatTable(['schedule', 'state', 'next run', 'last run'], rows)) ctx.print(line);
  });
}

export async function schedulesTriggerCommand(feedId: string, ctx: CliContext) {
  const temporal = loadTemporalConfig(ctx.env);
  const feedIds = loadFeeds(ctx.env).map((f) => f.id);
  if (!feedIds.includes(feedId)) {
    const known = feedIds.length > 0 ? `configured feeds: ${feedIds.join(', ')}` : 'IMPORT_FEEDS_FILE lists no feeds';
    throw new UsageError(`no feed ${feedId} in IMPORT_FEEDS_FILE (${known})`);
  }
  const scheduleId = scheduleIdForFeed(feedId);
  await withClient(ctx, temporal, async ({ client }) => {
    const handle = client.schedule.getHandle(scheduleId);
    let before: ScheduleDescription;
    try {
      before = await handle.describe();
      // SKIP: a run still going is not doubled; the server records the trigger as skipped.
      await handle.trigger(ScheduleOverlapPolicy.SKIP);
    } catch (err) {
      if (err instanceof ScheduleNotFoundError) {
        throw new CliError(`no schedule ${scheduleId}; run "import-worker schedules apply" first`);
      }
      throw err;
    }
    const outcome = await triggerOutcome(handle, before);
    if (outcome.kind === 'started') {
      ctx.print(`triggered ${scheduleId}: started ${outcome.workflowId}`);
    } else if (outcome.kind === 'skipped') {
      const running = outcome.running.length > 0 ? ` (${outcome.running.join(', ')})` : '';
      throw new CliError(
        `${scheduleId} was not triggered: the server skipped the run because its previous run is still going${running}; follow it with import-worker status <id>, or trigger again when it ended`,
      );
    } else {
      ctx.print(
        `trigger of ${scheduleId} sent; the server has not started or skipped it yet: see import-worker schedules list`,
      );
    }
  });
}

/** How long a trigger's outcome is awaited: the schedule's own workflow takes it up within a second or two. */
const TRIGGER_OUTCOME_WAIT_MS = 15_000;

type TriggerOutcome =
  | { kind: 'started'; workflowId: string }
  | { kind: 'skipped'; running: string[] }
  | { kind: 'unknown' };

/** What the server did with the trigger, read from the schedule's counters (a trigger returns before it acts). */
async function triggerOutcome(handle: ScheduleHandle, before: ScheduleDescription): Promise<TriggerOutcome> {
  const deadline = Date.now() + TRIGGER_OUTCOME_WAIT_MS;
  while (Date.now() < deadline) {
    await delay(200);
    const now = await handle.describe();
    if (now.info.numActionsTaken > before.info.numActionsTaken) {
      const latest = now.info.recentActions.at(-1);
      return { kind: 'started', workflowId: latest?.action.workflow.workflowId ?? '(unknown)' };
    }
    if (now.info.numActionsSkippedOverlap > before.info.numActionsSkippedOverlap) {
      return { kind: 'skipped', running: now.info.runningActions.map((a) => a.workflow.workflowId) };
    }
  }
  return { kind: 'unknown' };
}
