/**
 * `import-worker start --dry-run` and `schedules trigger <feed> --dry-run`:
 * what the import (or the feed's nightly) would do, without doing it. The
 * CLI validates the input as `start` does and hands it to a dry-run workflow
 * on the worker, which holds the service token and reserves each read with
 * the ledger. Exit 0 when the import would go ahead (a feed: when no object
 * would fail), 1 with the reasons when not; `--json` prints the report as
 * the workflow returned it, with `ok`.
 */
import { randomUUID } from 'node:crypto';
import type { Client } from '@temporalio/client';
import { loadClientConfig, loadFeeds, loadInputDefaults, type TemporalConfig } from '../../temporal.config.js';
import {
  DEFAULT_FEED_DRY_RUN_OBJECTS,
  DRY_RUN_FEED_WORKFLOW_TYPE,
  DRY_RUN_IMPORT_WORKFLOW_TYPE,
  MAX_FEED_DRY_RUN_OBJECTS,
} from '../../workflows/contracts/dry-run.js';
import type { dryRunFeed, dryRunImport } from '../../workflows/dry-run-import.js';
import { CliError, UsageError } from './cli-error.js';
import { type CliContext, withClient } from './context.js';
import { feedReportLines, importReportLines, reasonsOf } from './dry-run-report.js';
import { nightlyFeed } from './schedules.js';
import { destructiveListActionWarning, importInputFromFlags, type StartFlags } from './start-input.js';
import { hasWorkflowPoller } from './task-queue-pollers.js';

export interface DryRunOutput {
  json?: boolean;
}

/** A dry run that has not started on a worker by then is said to be waiting for one. */
const NO_WORKER_HINT_MS = 10_000;
/** Temporal ends a dry run no worker took by then. */
const DRY_RUN_TIMEOUT = '10 minutes';

/** --json and --limit mean something only with --dry-run; --wait has nothing to follow in one. */
export function checkDryRunFlags(options: { dryRun?: boolean; json?: boolean; limit?: string; wait?: boolean }): void {
  if (options.dryRun && options.wait)
    throw new UsageError('--dry-run starts no import, so there is nothing to --wait for');
  if (options.dryRun) return;
  const stray = [options.json && '--json', options.limit !== undefined && '--limit'].filter(Boolean);
  if (stray.length > 0) throw new UsageError(`${stray.join(' and ')} go with --dry-run`);
}

export async function startDryRunCommand(options: StartFlags & DryRunOutput, ctx: CliContext): Promise<void> {
  const config = loadClientConfig(ctx.env);
  const input = importInputFromFlags(options, loadInputDefaults(ctx.env));
  const warning = destructiveListActionWarning(input);
  if (warning) ctx.warn(warning);
  const report = await withClient(ctx, config.temporal, ({ client }) =>
    runDryRun<typeof dryRunImport>(client, config.temporal, ctx, DRY_RUN_IMPORT_WORKFLOW_TYPE, [
      { input, ...(options.workflowId !== undefined ? { workflowId: options.workflowId } : {}) },
    ]),
  );
  const reasons = reasonsOf(report.object);
  const ok = report.object.verdict === 'import';
  if (options.json) ctx.print(JSON.stringify({ ok, ...report }, null, 2));
  else for (const line of importReportLines(report)) ctx.print(line);
  if (!ok) throw new CliError(`dry run: the import would not go ahead: ${reasons.join('; ')}`);
}

export async function triggerDryRunCommand(
  feedId: string,
  options: DryRunOutput & { limit?: string },
  ctx: CliContext,
): Promise<void> {
  const config = loadClientConfig(ctx.env);
  const maxObjects = parseLimit(options.limit);
  const defaults = loadInputDefaults(ctx.env);
  const feeds = loadFeeds(ctx.env);
  const feed = feeds.find((f) => f.id === feedId);
  if (!feed) {
    const known =
      feeds.length > 0 ? `configured feeds: ${feeds.map((f) => f.id).join(', ')}` : 'IMPORT_FEEDS_FILE lists no feeds';
    throw new UsageError(`no feed ${feedId} in IMPORT_FEEDS_FILE (${known})`);
  }
  const report = await withClient(ctx, config.temporal, ({ client }) =>
    runDryRun<typeof dryRunFeed>(client, config.temporal, ctx, DRY_RUN_FEED_WORKFLOW_TYPE, [
      { feedId, feed: nightlyFeed(feed, defaults), maxObjects },
    ]),
  );
  const failing = report.objects.filter((o) => o.verdict === 'fail');
  const ok = failing.length === 0 && report.problems.length === 0;
  if (options.json) ctx.print(JSON.stringify({ ok, ...report }, null, 2));
  else for (const line of feedReportLines(report)) ctx.print(line);
  if (!ok) {
    const reasons = [
      ...report.problems.map((p) => `${p.check}: ${p.type}: ${p.message}`),
      ...failing.map((o) => `${o.source.key}: ${reasonsOf(o).join('; ')}`),
    ];
    throw new CliError(`dry run: ${failing.length} object(s) of feed ${feedId} would fail: ${reasons.join(' | ')}`);
  }
}

function parseLimit(text: string | undefined): number {
  if (text === undefined) return DEFAULT_FEED_DRY_RUN_OBJECTS;
  const n = /^\d+$/.test(text.trim()) ? Number(text) : Number.NaN;
  if (!Number.isInteger(n) || n < 1 || n > MAX_FEED_DRY_RUN_OBJECTS) {
    throw new UsageError(
      `--limit must be a whole number from 1 to ${MAX_FEED_DRY_RUN_OBJECTS}, got ${JSON.stringify(text)}`,
    );
  }
  return n;
}

/** Runs the dry-run workflow on the worker's task queue and returns its report. */
async function runDryRun<W extends typeof dryRunImport | typeof dryRunFeed>(
  client: Client,
  temporal: TemporalConfig,
  ctx: CliContext,
  workflowType: string,
  args: Parameters<W>,
): Promise<Awaited<ReturnType<W>>> {
  // A dry run nobody runs would wait for its 10-minute timeout: refuse it before starting anything.
  if (!(await hasWorkflowPoller(client.workflow, temporal.taskQueue).catch(() => true))) {
    throw new CliError(
      `no worker polls task queue "${temporal.taskQueue}": a dry run runs on a worker (it holds the service token); start one, or check IMPORT_TASK_QUEUE; nothing was started`,
    );
  }
  const handle = await client.workflow.start<W>(workflowType, {
    taskQueue: temporal.taskQueue,
    workflowId: `dry-run-${randomUUID()}`,
    args,
    workflowExecutionTimeout: DRY_RUN_TIMEOUT,
  });
  const hint = setTimeout(
    () =>
      ctx.warn(`dry run ${handle.workflowId} has not finished: is a worker polling task queue ${temporal.taskQueue}?`),
    NO_WORKER_HINT_MS,
  );
  try {
    return (await handle.result()) as Awaited<ReturnType<W>>;
  } finally {
    clearTimeout(hint);
  }
}
