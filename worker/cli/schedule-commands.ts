/** `import-worker schedules apply|list|trigger`: the nightly feeds' Temporal Schedules. */
import { ScheduleNotFoundError, ScheduleOverlapPolicy } from '@temporalio/client';
import { NIGHTLY_ID_PREFIX } from '../../workflows/policy/nightly.js';
import { applySchedules, describePlan, desiredSchedules, scheduleIdForFeed } from '../schedules.js';
import { CliError } from './cli-error.js';
import { type CliContext, withClient } from './context.js';
import { formatTable } from './table.js';

export async function schedulesApplyCommand(options: { dryRun?: boolean; prune?: boolean }, ctx: CliContext) {
  const config = ctx.config();
  const desired = desiredSchedules(config.feeds, config.temporal.taskQueue, config.tenant);
  for (const feed of config.feeds) {
    if (feed.listAction === 'replace' || feed.listAction === 'delete') {
      ctx.warn(`warning: feed ${feed.id} uses listAction ${feed.listAction}, which removes list members`);
    }
  }
  await withClient(ctx, config, async ({ client }) => {
    const dryRun = options.dryRun ?? false;
    const plan = await applySchedules(client.schedule, desired, { dryRun, prune: options.prune ?? false });
    for (const line of describePlan(plan, dryRun)) ctx.print(line);
  });
}

export async function schedulesListCommand(ctx: CliContext) {
  const config = ctx.config();
  await withClient(ctx, config, async ({ client }) => {
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
      ctx.print('no nightly schedules; run "import-worker schedules apply" with IMPORT_FEEDS_FILE set');
      return;
    }
    for (const line of formatTable(['schedule', 'state', 'next run', 'last run'], rows)) ctx.print(line);
  });
}

export async function schedulesTriggerCommand(feedId: string, ctx: CliContext) {
  const config = ctx.config();
  const scheduleId = scheduleIdForFeed(feedId);
  await withClient(ctx, config, async ({ client }) => {
    try {
      // SKIP: a run still going is not doubled; the server records the trigger as skipped.
      await client.schedule.getHandle(scheduleId).trigger(ScheduleOverlapPolicy.SKIP);
    } catch (err) {
      if (err instanceof ScheduleNotFoundError) {
        throw new CliError(`no schedule ${scheduleId}; is feed ${feedId} configured and "schedules apply" run?`);
      }
      throw err;
    }
    ctx.print(`triggered ${scheduleId} (skipped by the server if its previous run is still going)`);
  });
}
