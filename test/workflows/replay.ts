/**
 * Replays a history with today's workflow code in the SDK's sandbox and says
 * what the code did, next to what the history recorded. The replayer itself
 * fails on a command of another kind or order (DeterminismViolationError);
 * comparing the two `RunRecord`s also catches a changed activity input, timer
 * duration, child id, update result, continue-as-new input or result.
 */
import path from 'node:path';
import { defaultPayloadConverter } from '@temporalio/common';
import { historyFromJSON } from '@temporalio/common/lib/proto-utils.js';
import type { temporal } from '@temporalio/proto';
import { bundleWorkflowCode, DefaultLogger, type InjectedSinks, Runtime, Worker } from '@temporalio/worker';
import { createTracing, type Tracing } from '../../worker/process/tracing.js';
import { WORKFLOW_INTERCEPTOR_MODULES, WORKFLOWS_SOURCE } from '../../worker/process/workflow-source.js';
import type { ReplayRecorderSinks } from './replay-interceptors.js';

type Event = temporal.api.history.v1.IHistoryEvent;
type Payloads = temporal.api.common.v1.IPayloads | null | undefined;

/** What one run did, as the history holds it or as the code does it on replay. */
export interface RunRecord {
  activities: { activityType: string; args: unknown[] }[];
  timersMs: number[];
  children: { workflowType: string; workflowId: string; args: unknown[] }[];
  updates: { updateId: string; name: string; outcome: { result: unknown } | { failure: string } }[];
  continuedAsNew?: unknown[];
  result?: unknown;
  failure?: { type?: string; message: string };
}

/**
 * What a run answered, without how it called its activities and timers: for
 * histories of released versions, whose activity inputs and waits may
 * legitimately differ in today's code (the recorded commands are what ran),
 * while the answers (update results, carried state, result, child ids) must not.
 */
export function answersOf(r: RunRecord) {
  return {
    children: r.children.map((c) => ({ workflowType: c.workflowType, workflowId: c.workflowId })),
    updates: r.updates,
    continuedAsNew: r.continuedAsNew,
    result: r.result,
    failure: r.failure,
  };
}

/**
 * What the code did, as the history can hold it. A timer the code starts and
 * cancels within one activation (a `condition` already true, with a timeout)
 * never reaches the history: the SDK drops both commands. So replayed timers
 * that the history lacks are left out, in order; a timer the history holds
 * and the code no longer starts still shows as a difference (and a timer the
 * code starts for real without one in the history fails the replay itself).
 */
export function asHistoryHoldsIt(done: RunRecord, recorded: RunRecord): RunRecord {
  const timersMs: number[] = [];
  for (const ms of done.timersMs) {
    if (ms === recorded.timersMs[timersMs.length]) timersMs.push(ms);
  }
  return { ...done, timersMs };
}

const emptyRecord = (): RunRecord => ({ activities: [], timersMs: [], children: [], updates: [] });

let runtimeQuiet = false;

/**
 * The product's workflows bundled as production bundles them (its interceptor
 * modules, the import workflows' tracing) plus the replay interceptors; build
 * once per test file.
 */
export async function bundleForReplay(): Promise<string> {
  if (!runtimeQuiet) {
    // Replays of failing runs would log each failure; the tests compare them instead.
    Runtime.install({ logger: new DefaultLogger('ERROR') });
    runtimeQuiet = true;
  }
  const silent = { log() {}, trace() {}, debug() {}, info() {}, warn() {}, error() {} };
  const { code } = await bundleWorkflowCode({
    workflowsPath: WORKFLOWS_SOURCE,
    workflowInterceptorModules: [
      ...WORKFLOW_INTERCEPTOR_MODULES,
      path.resolve(import.meta.dirname, 'replay-interceptors.ts'),
    ],
    logger: silent,
  });
  return code;
}

/**
 * Replays `history` (JSON or proto) and reports what the code did, on a
 * replay worker with `tracing` (as the worker process has it: off unless a
 * collector is configured).
 */
export async function replay(
  code: string,
  history: unknown,
  workflowId: string,
  tracing: Tracing = createTracing(undefined),
): Promise<RunRecord> {
  const seen = emptyRecord();
  const during = <A extends unknown[]>(fn: (...args: A) => void) => ({
    fn: (_info: unknown, ...args: A) => fn(...args),
    callDuringReplay: true,
  });
  const sinks: InjectedSinks<ReplayRecorderSinks> = {
    replayRecorder: {
      activity: during((activityType, args) => seen.activities.push({ activityType, args })),
      timer: during((durationMs) => seen.timersMs.push(durationMs)),
      child: during((workflowType, childId, args) => seen.children.push({ workflowType, workflowId: childId, args })),
      update: during((updateId, name, outcome) => seen.updates.push({ updateId, name, outcome })),
      continuedAsNew: during((args) => {
        seen.continuedAsNew = args;
      }),
      completed: during((result) => {
        seen.result = result;
      }),
      failed: during((type, message) => {
        seen.failure = { type, message };
      }),
    },
  };
  await Worker.runReplayHistory(
    { workflowBundle: { code }, plugins: tracing.worker.plugins, sinks: { ...tracing.worker.sinks, ...sinks } },
    history,
    workflowId,
  );
  return seen;
}

/** A proto Duration in ms (its `seconds` is a Long, a number or a string, depending on how it was decoded). */
function durationMs(d: temporal.api.history.v1.ITimerStartedEventAttributes['startToFireTimeout']): number {
  return Number(String(d?.seconds ?? 0)) * 1000 + Math.round((d?.nanos ?? 0) / 1e6);
}

const decode = (payloads: Payloads): unknown[] =>
  (payloads?.payloads ?? []).map((p) => defaultPayloadConverter.fromPayload(p));

/** What the history recorded: the commands' contents and how the run ended. */
export function recordOfHistory(history: unknown): RunRecord {
  const events = historyFromJSON(history).events ?? [];
  const record = emptyRecord();
  const updateNames = new Map<string, string>();
  for (const e of events) addEvent(record, updateNames, e);
  return record;
}

function addEvent(record: RunRecord, updateNames: Map<string, string>, e: Event): void {
  if (e.activityTaskScheduledEventAttributes) {
    const a = e.activityTaskScheduledEventAttributes;
    record.activities.push({ activityType: a.activityType?.name ?? '', args: decode(a.input) });
  } else if (e.timerStartedEventAttributes) {
    record.timersMs.push(durationMs(e.timerStartedEventAttributes.startToFireTimeout));
  } else if (e.startChildWorkflowExecutionInitiatedEventAttributes) {
    const c = e.startChildWorkflowExecutionInitiatedEventAttributes;
    record.children.push({
      workflowType: c.workflowType?.name ?? '',
      workflowId: c.workflowId ?? '',
      args: decode(c.input),
    });
  } else if (e.workflowExecutionUpdateAcceptedEventAttributes) {
    const u = e.workflowExecutionUpdateAcceptedEventAttributes;
    updateNames.set(u.protocolInstanceId ?? '', u.acceptedRequest?.input?.name ?? '');
  } else if (e.workflowExecutionUpdateCompletedEventAttributes) {
    const u = e.workflowExecutionUpdateCompletedEventAttributes;
    const updateId = u.meta?.updateId ?? '';
    const outcome = u.outcome?.failure
      ? { failure: u.outcome.failure.message ?? '' }
      : { result: decode(u.outcome?.success)[0] };
    record.updates.push({ updateId, name: updateNames.get(updateId) ?? '', outcome });
  } else if (e.workflowExecutionContinuedAsNewEventAttributes) {
    record.continuedAsNew = decode(e.workflowExecutionContinuedAsNewEventAttributes.input);
  } else if (e.workflowExecutionCompletedEventAttributes) {
    record.result = decode(e.workflowExecutionCompletedEventAttributes.result)[0];
  } else if (e.workflowExecutionFailedEventAttributes) {
    const f = e.workflowExecutionFailedEventAttributes.failure;
    record.failure = { type: f?.applicationFailureInfo?.type ?? undefined, message: f?.message ?? '' };
  }
}
