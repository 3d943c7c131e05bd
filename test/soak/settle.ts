/**
 * The settle after the chaos: faults are off, every worker runs and reaches
 * Temporal, and the soak waits until every import and night has ended or
 * waits for an operator or a budget window. It ends the moment that holds;
 * the bound only says how long a healthy import may still need, so that one
 * that never ends is reported as stuck instead of waited on forever.
 *
 * The bound follows from today's code, not from the length of the run: an
 * attempt lost with a killed, frozen or cut-off worker is noticed after its
 * heartbeat (or start-to-close) timeout, and its retry waits at most the
 * retry policy's longest interval; then the import may still follow another
 * one's create (the record's retry-after), wait out a create's and an
 * upload's takeover settle (lease + lag each), make a few service calls, and
 * have its job processed and seen to leave the processing list (two sweeps
 * and a confirming read).
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { parseDuration } from '../../worker/config/units.js';
import { DEFAULT_JOB_RECORD_SETTINGS } from '../../workflows/contracts/job-record.js';
import { progressQuery } from '../../workflows/contracts/messages.js';
import { ACTIVITY_RETRY_POLICY, activityOptionsFor } from '../../workflows/retry-policies.js';
import type { Stack } from './stack.js';

/** What the soak's own configuration adds: the workers' request timeout and poll schedule, the simulator's processing. */
export interface SoakTimings {
  requestTimeoutMs: number;
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
  const work = retryAfterMs + 2 * (leaseMs + lagMs) + 4 * t.requestTimeoutMs + t.processingMs + 3 * sweepMs;
  return lostAttemptMs() + retryMs + work;
}

const OPEN = 'ExecutionStatus="Running" AND (WorkflowType="importFile" OR WorkflowType="nightlyImport")';
const POLL_MS = 2_000;

/** Until every import and night has ended or waits for an operator or a budget window, within `limitMs`; the time it took. */
export async function settle(stack: Stack, limitMs: number, log: (line: string) => void): Promise<number> {
  const began = Date.now();
  const deadline = began + limitMs;
  let last = '';
  while (Date.now() < deadline) {
    let open = 0;
    let waiting = 0;
    let listed = false;
    try {
      for await (const info of stack.client().workflow.list({ query: OPEN })) {
        open += 1;
        if (info.type !== 'importFile') continue;
        const progress = await stack
          .client()
          .workflow.getHandle(info.workflowId)
          .query(progressQuery)
          .catch(() => undefined);
        if (progress?.awaitingRetry || progress?.waitingForBudgetUntil) waiting += 1;
      }
      listed = true;
    } catch (error) {
      log(`settle: ${(error as Error).message}`);
    }
    // A list cut short by an error says nothing: look again.
    if (listed && open === waiting) return Date.now() - began;
    const line = `${open} open, ${waiting} waiting for an operator or a budget`;
    if (line !== last) log(`settle: ${line}`);
    last = line;
    await sleep(POLL_MS);
  }
  return Date.now() - began;
}
