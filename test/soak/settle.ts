/**
 * The settle after the chaos: faults are off, every worker runs and reaches
 * Temporal, and the soak waits until every import and night has ended or
 * waits for an operator or a budget window. It ends the moment that holds;
 * the bound only says how long a healthy import may still need after the
 * last one ended, so that one that never ends is reported as stuck instead of
 * waited on forever.
 *
 * The bound follows from today's code, not from the length of the run: an
 * attempt lost with a killed, frozen or cut-off worker is noticed after its
 * heartbeat (or start-to-close) timeout, and its retry waits at most the
 * retry policy's longest interval; then the import may still follow another
 * one's create (the record's retry-after), wait out a create's and an
 * upload's takeover settle (lease + delivery bound + lag each), make a few service calls, and
 * have its job processed and seen to leave the processing list (two sweeps
 * and a confirming read).
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { Client, WorkflowExecutionInfo } from '@temporalio/client';
import { DEFAULT_WATCHER_SETTINGS } from '../../activities/watch/job-watcher.js';
import { parseDuration } from '../../worker/config/units.js';
import { DEFAULT_JOB_RECORD_SETTINGS } from '../../workflows/contracts/job-record.js';
import { progressQuery } from '../../workflows/contracts/messages.js';
import { ACTIVITY_RETRY_POLICY, activityOptionsFor } from '../../workflows/retry-policies.js';
import type { Stack } from './stack.js';

/** What the soak's own configuration adds: the workers' request timeout, poll schedule and delivery bound, the simulator's processing. */
export interface SoakTimings {
  requestTimeoutMs: number;
  /** IMPORT_DELIVERY_BOUND: each takeover settle waits it. */
  deliveryBoundMs: number;
  pollScheduleMs: number[];
  processingMs: number;
}

const STEPS = ['inspectSource', 'applyFieldMappings', 'createImportJob', 'uploadData', 'awaitJobCompletion'] as const;

/** How long a lost attempt of any step goes unnoticed: its heartbeat timeout, else its whole time. */
function lostAttemptMs(): number {
  const context = { jobTimeoutMs: 0, uploadTaskQueue: 'u', pollTaskQueue: 'p' };
  return Math.max(
    ...STEPS.map((step) => {
      const o = activityOptionsFor(step, context);
      return durationMs(o.heartbeatTimeout ?? o.startToCloseTimeout);
    }),
  );
}

function durationMs(value: string | number | undefined): number {
  if (typeof value === 'number') return value;
  const ms = value === undefined ? undefined : parseDuration(value);
  if (ms === undefined) throw new Error(`soak settle: cannot read the duration ${JSON.stringify(value)}`);
  return ms;
}

/** The longest a healthy import may still need once the chaos has healed. */
export function settleBoundMs(t: SoakTimings): number {
  const { leaseMs, lagMs, retryAfterMs } = DEFAULT_JOB_RECORD_SETTINGS;
  const retryMs = durationMs(ACTIVITY_RETRY_POLICY.maximumInterval);
  const sweepMs = t.pollScheduleMs.at(-1) ?? 0;
  // The compiled worker runs production time: a job that ends before a sweep lists it waits the full listing grace.
  const listingGraceMs = DEFAULT_WATCHER_SETTINGS.listLateGraceMs;
  const work =
    retryAfterMs +
    2 * (leaseMs + t.deliveryBoundMs + lagMs) +
    4 * t.requestTimeoutMs +
    t.processingMs +
    3 * sweepMs +
    listingGraceMs;
  return lostAttemptMs() + retryMs + work;
}

const OPEN = 'ExecutionStatus="Running" AND (WorkflowType="importFile" OR WorkflowType="nightlyImport")';
const POLL_MS = 2_000;
const QUERY_TIMEOUT_MS = 10_000;

/**
 * Until every import and night has ended or waits for an operator or a
 * budget window; the time it took. It gives up once none has ended for
 * `boundMs`: a night imports its objects a few at a time, so its last ones
 * may start long after the healing, and each gets the whole bound.
 */
export async function settle(
  stack: Stack,
  boundMs: number,
  log: (line: string) => void,
  onProgress: () => void,
): Promise<number> {
  const began = Date.now();
  let deadline = began + boundMs;
  let before = new Set<string>();
  let last = '';
  while (Date.now() < deadline) {
    try {
      const open = await openExecutions(stack.client());
      const now = new Set(open.map((info) => `${info.workflowId}/${info.runId}`));
      if ([...before].some((id) => !now.has(id))) {
        deadline = Date.now() + boundMs;
        onProgress();
      }
      before = now;
      if (await allWaiting(stack.client(), open)) return Date.now() - began;
      const line = `${open.length} open`;
      if (line !== last) log(`settle: ${line}`);
      last = line;
    } catch (error) {
      // A list cut short by an error says nothing: look again.
      log(`settle: ${(error as Error).message}`);
    }
    await sleep(POLL_MS);
  }
  return Date.now() - began;
}

async function openExecutions(client: Client): Promise<WorkflowExecutionInfo[]> {
  const open: WorkflowExecutionInfo[] = [];
  for await (const info of client.workflow.list({ query: OPEN })) open.push(info);
  return open;
}

/**
 * Whether every open one waits for an operator or a budget window. It stops
 * at the first that does not, so that a look while hundreds run costs one
 * query, not hundreds (each may have to replay its history on a busy worker).
 */
async function allWaiting(client: Client, open: WorkflowExecutionInfo[]): Promise<boolean> {
  for (const info of open) {
    // A night has no progress to show: it is open until its children have ended.
    if (info.type !== 'importFile') return false;
    const progress = await Promise.race([
      client.workflow.getHandle(info.workflowId).query(progressQuery),
      sleep(QUERY_TIMEOUT_MS).then(() => undefined),
    ]).catch(() => undefined);
    if (!progress?.awaitingRetry && !progress?.waitingForBudgetUntil) return false;
  }
  return true;
}
