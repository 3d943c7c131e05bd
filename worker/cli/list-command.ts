/**
 * `import-worker list [--failed] [--limit n] [--json]`: the imports running
 * now (and among them those waiting for an operator or for the daily budget),
 * and with --failed the ones that failed. Read from Temporal's visibility by
 * workflow type, then each running import's progress query: no call to the
 * Company Data Service, no budget spent.
 */
import type { Client, WorkflowExecutionInfo } from '@temporalio/client';
import pLimit from 'p-limit';
import { loadTemporalConfig } from '../../temporal.config.js';
import { UsageError } from './cli-error.js';
import { type CliContext, withClient } from './context.js';
import { queryProgress } from './import-progress.js';
import { IMPORT_WORKFLOW_TYPE } from './status-report.js';
import { formatTable } from './table.js';
import { hasWorkflowPoller } from './task-queue-pollers.js';
import { failureReason } from './watch-import.js';

export const DEFAULT_LIST_LIMIT = 50;
const MAX_LIST_LIMIT = 1_000;
/** Progress queries (and failure reads) in flight at once: quick for a page, gentle on the frontend. */
const QUERY_CONCURRENCY = 5;

type ImportState = 'running' | 'waiting-for-operator' | 'waiting-for-budget' | 'no-worker' | 'unknown' | 'failed';

export interface ListedImport {
  workflowId: string;
  state: ImportState;
  /** The progress query's phase, while the import runs and a worker answers. */
  phase?: string;
  /** What it waits for, or why it failed, in one line. */
  detail?: string;
  startedAt: string;
  closedAt?: string;
  taskQueue: string;
}

export interface ListFlags {
  failed?: boolean;
  limit?: string;
  json?: boolean;
}

function parseLimit(text: string | undefined): number {
  if (text === undefined) return DEFAULT_LIST_LIMIT;
  const n = /^\d+$/.test(text.trim()) ? Number(text) : Number.NaN;
  if (!Number.isInteger(n) || n < 1 || n > MAX_LIST_LIMIT) {
    throw new UsageError(`--limit must be a whole number from 1 to ${MAX_LIST_LIMIT}, got ${JSON.stringify(text)}`);
  }
  return n;
}

/** The visibility query: imports by workflow type (the server lists the newest first; not every store takes ORDER BY). */
export function listQuery(failed: boolean): string {
  const statuses = failed
    ? "(ExecutionStatus = 'Running' OR ExecutionStatus = 'Failed')"
    : "ExecutionStatus = 'Running'";
  return `WorkflowType = '${IMPORT_WORKFLOW_TYPE}' AND ${statuses}`;
}

async function readExecutions(client: Client, failed: boolean, limit: number): Promise<WorkflowExecutionInfo[]> {
  const found: WorkflowExecutionInfo[] = [];
  for await (const info of client.workflow.list({ query: listQuery(failed), pageSize: Math.min(limit, 100) })) {
    found.push(info);
    if (found.length >= limit) break;
  }
  return found.sort((a, b) => b.startTime.getTime() - a.startTime.getTime());
}

async function describeImport(client: Client, info: WorkflowExecutionInfo, polled: boolean): Promise<ListedImport> {
  const base = {
    workflowId: info.workflowId,
    startedAt: info.startTime.toISOString(),
    taskQueue: info.taskQueue,
    ...(info.closeTime ? { closedAt: info.closeTime.toISOString() } : {}),
  };
  const handle = client.workflow.getHandle(info.workflowId, info.runId);
  if (info.status.name === 'FAILED') {
    return { ...base, state: 'failed', detail: await handle.result().then(() => '', failureReason) };
  }
  if (!polled) return { ...base, state: 'no-worker', detail: `no worker polls task queue "${info.taskQueue}"` };
  const progress = await queryProgress(handle);
  if (!progress) return { ...base, state: 'unknown', detail: 'no worker answered its progress query' };
  const phase = { phase: progress.phase };
  if (progress.awaitingRetry) {
    const a = progress.awaitingRetry;
    return {
      ...base,
      ...phase,
      state: 'waiting-for-operator',
      detail: `${a.step} failed (${a.failureType}) since ${a.since}`,
    };
  }
  if (progress.waitingForBudgetUntil) {
    return { ...base, ...phase, state: 'waiting-for-budget', detail: `until ${progress.waitingForBudgetUntil}` };
  }
  return { ...base, ...phase, state: 'running' };
}

export async function listImports(
  client: Client,
  options: { failed: boolean; limit: number },
): Promise<ListedImport[]> {
  const executions = await readExecutions(client, options.failed, options.limit);
  const queues = [...new Set(executions.filter((e) => e.status.name === 'RUNNING').map((e) => e.taskQueue))];
  const polledQueues = new Set<string>();
  for (const queue of queues) {
    if (await hasWorkflowPoller(client.workflow, queue).catch(() => true)) polledQueues.add(queue);
  }
  const limit = pLimit(QUERY_CONCURRENCY);
  return Promise.all(executions.map((e) => limit(() => describeImport(client, e, polledQueues.has(e.taskQueue)))));
}

export async function listCommand(flags: ListFlags, ctx: CliContext): Promise<void> {
  const limit = parseLimit(flags.limit);
  const failed = flags.failed ?? false;
  const imports = await withClient(ctx, loadTemporalConfig(ctx.env), ({ client }) =>
    listImports(client, { failed, limit }),
  );
  if (flags.json) {
    ctx.print(JSON.stringify({ imports }, null, 2));
    return;
  }
  if (imports.length === 0) {
    ctx.warn(failed ? 'no import runs or failed' : 'no import runs (--failed lists failed ones too)');
    return;
  }
  const rows = imports.map((i) => [i.workflowId, i.state, i.phase ?? '-', i.startedAt, i.detail ?? '']);
  for (const line of formatTable(['workflow', 'state', 'phase', 'started', 'detail'], rows)) ctx.print(line);
  if (imports.length === limit) ctx.warn(`showing the newest ${limit}; --limit shows more`);
}
