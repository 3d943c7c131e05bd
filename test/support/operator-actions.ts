/**
 * What an operator does to a running or failed import, done the way the
 * operator does it: the CLI's own command handlers (retry, abandon, schedules
 * trigger) over a real connection, and a Reset through the workflow service
 * (what the Temporal UI's History -> Reset sends).
 */
import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { promisify } from 'node:util';
import type { Client, WorkflowHandle } from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import { connectClient } from '../../worker/cli/connect.js';
import type { CliContext } from '../../worker/cli/context.js';
import { findTemporalBinary } from '../../worker/demo/temporal-binaries.js';

const EventType = temporal.api.enums.v1.EventType;
type HistoryEvent = temporal.api.history.v1.IHistoryEvent;
type History = temporal.api.history.v1.IHistory;
type EventId = NonNullable<HistoryEvent['eventId']>;

/** A CLI context reading `env` as the CLI reads the process environment; what it prints is kept. */
export function cliContext(env: Record<string, string>): CliContext & { printed: string[]; warned: string[] } {
  const printed: string[] = [];
  const warned: string[] = [];
  return {
    env,
    connect: connectClient,
    print: (line) => printed.push(line),
    warn: (line) => warned.push(line),
    now: () => new Date(),
    printed,
    warned,
  };
}

/** Polls `probe` until it returns a value other than undefined (the test's own timeout bounds the wait). */
export async function waitFor<T>(probe: () => Promise<T | undefined> | T | undefined, everyMs = 50): Promise<T> {
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    await sleep(everyMs);
  }
}

/** The WorkflowTaskCompleted event that scheduled the first `activityType` activity of the history. */
export function taskThatScheduled(history: History, activityType: string): EventId {
  const events = history.events ?? [];
  const scheduled = events.findIndex(
    (e) =>
      e.eventType === EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED &&
      e.activityTaskScheduledEventAttributes?.activityType?.name === activityType,
  );
  if (scheduled < 0) throw new Error(`no ${activityType} activity was scheduled`);
  const task = events
    .slice(0, scheduled)
    .reverse()
    .find((e) => e.eventType === EventType.EVENT_TYPE_WORKFLOW_TASK_COMPLETED);
  if (!task?.eventId) throw new Error(`no workflow task completed before ${activityType} was scheduled`);
  return task.eventId;
}

/** The first WorkflowTaskCompleted event: a Reset to it runs the whole import again. */
export function firstWorkflowTask(history: History): EventId {
  const task = history.events?.find((e) => e.eventType === EventType.EVENT_TYPE_WORKFLOW_TASK_COMPLETED);
  if (!task?.eventId) throw new Error('no workflow task completed');
  return task.eventId;
}

/** Resets the workflow's latest run to `workflowTaskFinishEventId`; returns the new run's handle. */
export async function resetWorkflow<T extends WorkflowHandle>(
  client: Client,
  handle: T,
  workflowTaskFinishEventId: EventId,
): Promise<T> {
  const { runId } = await handle.describe();
  const { runId: newRunId } = await client.workflowService.resetWorkflowExecution({
    namespace: client.options.namespace,
    workflowExecution: { workflowId: handle.workflowId, runId },
    workflowTaskFinishEventId,
    reason: 'operator fixed the cause',
    requestId: randomUUID(),
  });
  return client.workflow.getHandle(handle.workflowId, newRunId ?? undefined) as T;
}

/**
 * An operator's activity reset of the workflow's running `activityType`,
 * through the Temporal CLI (`temporal activity reset`, what the UI's Reset
 * on a Pending Activity card sends); with `clearHeartbeatDetails`, the
 * step's heartbeat details are cleared too. Returns what the CLI printed.
 */
export async function resetActivityWithCli(
  client: Client,
  address: string,
  handle: WorkflowHandle,
  activityType: string,
  options: { clearHeartbeatDetails: boolean },
): Promise<string> {
  const cli = findTemporalBinary('dev-server');
  if (!cli) throw new Error('no Temporal CLI: run `npm run setup:temporal`, or set TEMPORAL_SERVER_PATH');
  const pending = (await handle.describe()).raw.pendingActivities ?? [];
  const activity = pending.find((a) => a.activityType?.name === activityType);
  if (!activity?.activityId) throw new Error(`no ${activityType} activity is pending in ${handle.workflowId}`);
  const args = ['activity', 'reset', '--address', address, '--namespace', client.options.namespace];
  args.push('--workflow-id', handle.workflowId, '--activity-id', activity.activityId);
  if (options.clearHeartbeatDetails) args.push('--clear-heartbeat-details');
  const { stdout, stderr } = await promisify(execFile)(cli.path, args);
  return `${stdout}${stderr}`;
}

/** The identities of the workers that started `activityType` attempts, in history order. */
export function activityWorkers(history: History, activityType: string): string[] {
  const events = history.events ?? [];
  const scheduledIds = new Set(
    events
      .filter(
        (e) =>
          e.eventType === EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED &&
          e.activityTaskScheduledEventAttributes?.activityType?.name === activityType,
      )
      .map((e) => Number(e.eventId)),
  );
  return events
    .filter(
      (e) =>
        e.eventType === EventType.EVENT_TYPE_ACTIVITY_TASK_STARTED &&
        scheduledIds.has(Number(e.activityTaskStartedEventAttributes?.scheduledEventId)),
    )
    .map((e) => e.activityTaskStartedEventAttributes?.identity ?? '');
}

/**
 * The ids of the namespace's workflow runs whose history holds `secret`
 * anywhere: the history's protobuf bytes are searched, so payloads (JSON
 * bytes), failure messages and heartbeat details all count.
 */
export async function historiesHolding(client: Client, secret: string): Promise<string[]> {
  const needle = Buffer.from(secret);
  const holding: string[] = [];
  for await (const run of client.workflow.list()) {
    const history = await client.workflow.getHandle(run.workflowId, run.runId).fetchHistory();
    const bytes = Buffer.from(temporal.api.history.v1.History.encode(history).finish());
    if (bytes.includes(needle)) holding.push(`${run.workflowId}/${run.runId}`);
  }
  return holding;
}
