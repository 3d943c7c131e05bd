/**
 * What an operator sees of a running import: the phase from the workflow's
 * `progress` query, and the bytes uploaded so far from the pending uploadData
 * activity's heartbeat details (the workflow itself never sees heartbeats).
 */
import type { WorkflowExecutionDescription, WorkflowHandle } from '@temporalio/client';
import { defaultPayloadConverter } from '@temporalio/common';
import type { UploadProgress } from '../../workflows/contracts/activities.js';
import type { ImportProgress, RowCounts } from '../../workflows/contracts/import-workflow.js';
import { progressQuery } from '../../workflows/contracts/messages.js';
import { guardBandAt, guardBandText } from './guard-band.js';

const UPLOAD_ACTIVITY = 'uploadData';

/** The latest heartbeat of the pending upload, if one is running and has reported. */
export function uploadProgressOf(description: Pick<WorkflowExecutionDescription, 'raw'>): UploadProgress | undefined {
  for (const activity of description.raw.pendingActivities ?? []) {
    if (activity.activityType?.name !== UPLOAD_ACTIVITY) continue;
    const payload = activity.heartbeatDetails?.payloads?.[0];
    if (!payload) return undefined;
    const details = defaultPayloadConverter.fromPayload<Partial<UploadProgress>>(payload);
    if (typeof details?.bytesSent !== 'number' || typeof details.totalBytes !== 'number') return undefined;
    return { bytesSent: details.bytesSent, totalBytes: details.totalBytes };
  }
  return undefined;
}

/** A pending activity that is being retried: Temporal retries it silently, so the workflow's own progress cannot tell. */
interface RetryingStep {
  activity: string;
  attempt: number;
  lastFailure: string;
  /** ISO instant of the next attempt, when one is scheduled. */
  nextAttemptAt?: string;
}

/** The pending activities past their first attempt, with their last failure. */
export function retryingStepsOf(description: Pick<WorkflowExecutionDescription, 'raw'>): RetryingStep[] {
  const steps: RetryingStep[] = [];
  for (const activity of description.raw.pendingActivities ?? []) {
    const attempt = activity.attempt ?? 1;
    if (attempt <= 1 || !activity.lastFailure) continue;
    const failure = activity.lastFailure;
    const type = failure.applicationFailureInfo?.type;
    const seconds = activity.nextAttemptScheduleTime?.seconds;
    steps.push({
      activity: activity.activityType?.name ?? 'unknown',
      attempt,
      lastFailure: `${type ? `${type}: ` : ''}${failure.message ?? ''}`,
      ...(seconds != null ? { nextAttemptAt: new Date(Number(seconds) * 1000).toISOString() } : {}),
    });
  }
  return steps;
}

/** The progress query's answer, or undefined while no worker answers (not started yet, or none running). */
export async function queryProgress(handle: WorkflowHandle): Promise<ImportProgress | undefined> {
  try {
    return await handle.query(progressQuery);
  } catch {
    return undefined;
  }
}

const UNITS = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];

export function formatBytes(bytes: number): string {
  let value = bytes;
  let unit = 0;
  while (value >= 1024 && unit < UNITS.length - 1) {
    value /= 1024;
    unit += 1;
  }
  // Whole bytes: a rate is a fraction (9.608455440787893 B/s) and bytes come whole anyway.
  return unit === 0 ? `${Math.round(value)} B` : `${value.toFixed(1)} ${UNITS[unit]}`;
}

/** A one-line note for the states in which an import waits rather than works. */
export function waitingNote(progress: ImportProgress | undefined, workflowId: string, nowMs = Date.now()): string {
  if (progress?.waitingForBudgetUntil) {
    const band = guardBandAt(progress.waitingForBudgetUntil, nowMs);
    if (band) return `waiting for the daily reset at ${band.until}: ${guardBandText(band)}`;
    return `waiting for the daily budget until ${progress.waitingForBudgetUntil}`;
  }
  if (progress?.awaitingRetry) {
    const a = progress.awaitingRetry;
    return `waiting for an operator: ${a.step} failed (${a.failureType}); fix it, then run "import-worker retry ${workflowId}" or "import-worker abandon ${workflowId}"`;
  }
  return '';
}

/** Bytes per second over a sliding window of recent samples. */
export class RateMeter {
  private samples: { atMs: number; bytes: number }[] = [];
  constructor(private readonly windowMs = 5_000) {}

  add(atMs: number, bytes: number): number {
    this.samples.push({ atMs, bytes });
    while (this.samples.length > 2 && atMs - (this.samples[0]?.atMs ?? atMs) > this.windowMs) this.samples.shift();
    const first = this.samples[0];
    if (!first || atMs <= first.atMs) return 0;
    return Math.max(0, (bytes - first.bytes) / ((atMs - first.atMs) / 1000));
  }
}

/** The row check's counts, e.g. `rows 4 read, 3 sent, 1 rejected (report s3://b/k.rejects.csv), gzip, utf-8, ",", LF`. */
export function describeRows(rows: RowCounts): string {
  const report = rows.rejectsReport ? ` (report ${rows.rejectsReport})` : '';
  const body = rows.body === 'original' ? 'sent byte for byte' : 'rewritten as UTF-8 comma CSV';
  const parts = rows.parts === undefined ? '' : `, split into ${rows.parts} jobs`;
  return `rows ${rows.read} read, ${rows.sent} sent, ${rows.rejected} rejected${report}; ${rows.dialect}, ${body}${parts}`;
}
