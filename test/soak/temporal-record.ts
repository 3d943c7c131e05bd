/**
 * What Temporal recorded of every workflow the soak caused: each execution's
 * type, status, input, result or failure, the `progress` of an open import,
 * its pending activities, and its whole history as text (payloads decoded),
 * for the secrets check.
 */
import type { Client } from '@temporalio/client';
import { defaultPayloadConverter } from '@temporalio/common';
import type { temporal } from '@temporalio/proto';
import type { ImportProgress } from '../../workflows/contracts/import-workflow.js';
import { progressQuery } from '../../workflows/contracts/messages.js';

export interface ExecutionView {
  workflowId: string;
  runId: string;
  type: string;
  status: string;
  input?: { source?: { bucket: string; key: string }; dataImportName?: string };
  result?: { jobId?: string; bytes?: number; parts?: { jobId: string }[] };
  failure?: { type: string; message: string };
  progress?: ImportProgress;
  pending: string[];
  historyText: string;
}

type Payload = temporal.api.common.v1.IPayload;
type Failure = temporal.api.failure.v1.IFailure;

export async function readExecutions(client: Client): Promise<ExecutionView[]> {
  const views: ExecutionView[] = [];
  for await (const info of client.workflow.list()) {
    const handle = client.workflow.getHandle(info.workflowId, info.runId);
    const history = await handle.fetchHistory();
    const events = history.events ?? [];
    const view: ExecutionView = {
      workflowId: info.workflowId,
      runId: info.runId,
      type: info.type,
      status: info.status.name,
      input: decode(events[0]?.workflowExecutionStartedEventAttributes?.input?.payloads?.[0]),
      pending: [],
      historyText: textOf(history),
    };
    const last = events.at(-1);
    const completed = last?.workflowExecutionCompletedEventAttributes;
    if (completed) view.result = decode(completed.result?.payloads?.[0]);
    const failed = last?.workflowExecutionFailedEventAttributes?.failure;
    if (failed) view.failure = innermost(failed);
    if (info.status.name === 'RUNNING') await describeOpen(client, view);
    views.push(view);
  }
  return views;
}

async function describeOpen(client: Client, view: ExecutionView): Promise<void> {
  const handle = client.workflow.getHandle(view.workflowId, view.runId);
  const description = await handle.describe();
  view.pending = (description.raw.pendingActivities ?? []).map(
    (a) =>
      `${a.activityType?.name} attempt ${a.attempt}${a.lastFailure?.message ? ` last failure: ${a.lastFailure.message}` : ''}`,
  );
  if (view.type !== 'importFile') return;
  view.progress = await Promise.race([
    handle.query(progressQuery),
    new Promise<undefined>((resolve) => setTimeout(() => resolve(undefined), 10_000)),
  ]).catch(() => undefined);
}

function decode<T>(payload: Payload | undefined): T | undefined {
  if (!payload) return undefined;
  try {
    return defaultPayloadConverter.fromPayload(payload as Parameters<typeof defaultPayloadConverter.fromPayload>[0]);
  } catch {
    return undefined;
  }
}

/** The failure type deepest in the cause chain (the activity's ApplicationFailure), with its message. */
function innermost(failure: Failure): { type: string; message: string } {
  let found = { type: failure.applicationFailureInfo?.type ?? 'unknown', message: failure.message ?? '' };
  for (let f = failure.cause; f; f = f.cause) {
    if (f.applicationFailureInfo?.type) found = { type: f.applicationFailureInfo.type, message: f.message ?? '' };
  }
  return found;
}

/** Every string and every byte field of the history (payloads as UTF-8), one per line. */
function textOf(value: unknown): string {
  const parts: string[] = [];
  const walk = (v: unknown, depth: number) => {
    if (depth > 64 || v === null || v === undefined) return;
    if (typeof v === 'string') parts.push(v);
    else if (v instanceof Uint8Array) parts.push(Buffer.from(v).toString('utf8'));
    else if (Array.isArray(v)) for (const item of v) walk(item, depth + 1);
    else if (typeof v === 'object') for (const item of Object.values(v)) walk(item, depth + 1);
  };
  walk(value, 0);
  return parts.join('\n');
}
