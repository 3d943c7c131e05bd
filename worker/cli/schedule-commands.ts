/** `import-worker schedules apply|list|trigger`: the nightly feeds' Temporal Schedules. */
import { ScheduleNotFoundError, ScheduleOverlapPolicy } from '@temporalio/client';
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
    for await (const s of client.schedule.list()) {
      if (!s.scheduleId.startsWith(NIGHTLY_ID_PREFIX)) continue;
      const last = s.info.recentActions.at(-1);
      rows.push([
        s.scheduleId,
        s.state.paused ? `paused${s.state.note ? ` (${s.state.note})` : ''}` : 'active',
        s.info.nextActionTimes[0]?.toISOString() ?? '-',
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
    try {
      // SKIP: a run still going is not doubled; the server records the trigger as skipped.
      await client.schedule.getHandle(scheduleId).trigger(ScheduleOverlapPolicy.SKIP);
    } catch (err) {
      if (err instanceof ScheduleNotFoundError) {
        throw new CliError(`no schedule ${scheduleId}; run "import-worker schedules apply" first`);
      }
      throw err;
    }
    ctx.print(`triggered ${scheduleId} (skipped by the server if its previous run is still going)`);
  });
}
