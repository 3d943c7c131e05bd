/**
 * How fresh a waiting import's word of its job is, for `import-worker
 * status`: the pending awaitJobCompletion's heartbeat details say when the
 * job was last seen (a status read, or a watcher sweep that listed it in
 * `processing`) and when the next check is due. Heartbeats are hints, held
 * back by the SDK and lost on a kill, so the line says as of when: the
 * server's time of the last heartbeat it stored.
 */
import type { WorkflowExecutionDescription } from '@temporalio/client';
import { defaultPayloadConverter } from '@temporalio/common';
import type { JobSighting, PollProgress } from '../../workflows/contracts/activities.js';

const AWAIT_ACTIVITY = 'awaitJobCompletion';

interface JobFreshness {
  lastSeen?: JobSighting;
  nextCheckAtMs?: number;
  /** When the server stored the heartbeat these come from. */
  asOfMs?: number;
}

/** The pending job wait's latest word of its job, if one is pending and has reported. */
export function jobFreshnessOf(description: Pick<WorkflowExecutionDescription, 'raw'>): JobFreshness | undefined {
  const activity = (description.raw.pendingActivities ?? []).find((a) => a.activityType?.name === AWAIT_ACTIVITY);
  const payload = activity?.heartbeatDetails?.payloads?.[0];
  if (!activity || !payload) return undefined;
  const details = defaultPayloadConverter.fromPayload<Partial<PollProgress>>(payload);
  const freshness: JobFreshness = {};
  const seen = details?.lastSeen;
  if (seen && typeof seen.state === 'string' && !Number.isNaN(Date.parse(seen.at))) freshness.lastSeen = seen;
  const next = Date.parse(details?.nextCheckAt ?? '');
  if (!Number.isNaN(next)) freshness.nextCheckAtMs = next;
  const beatSeconds = activity.lastHeartbeatTime?.seconds;
  if (beatSeconds != null) freshness.asOfMs = Number(beatSeconds) * 1000;
  return freshness;
}

/** e.g. "job processing, last seen 40 s ago by the watcher; next check in ~2 min (as of a heartbeat 3 s ago)". */
export function describeJobFreshness(f: JobFreshness, nowMs: number): string {
  const seen = f.lastSeen
    ? `job ${f.lastSeen.state}, last seen ${ago(nowMs - Date.parse(f.lastSeen.at))} by ${f.lastSeen.by === 'watcher' ? 'the watcher' : 'a status read'}`
    : 'job not seen yet by this wait';
  const parts = [seen];
  if (f.nextCheckAtMs !== undefined) {
    const inMs = f.nextCheckAtMs - nowMs;
    if (inMs >= 1_000) parts.push(`next check in ~${span(inMs)}`);
    // Past due: a sweep under way (its list and ledger calls take a while), or a worker that stopped reporting.
    else parts.push(inMs > -1_000 ? 'next check due now' : `next check due since ${span(-inMs)}`);
  }
  const asOf = f.asOfMs !== undefined ? ` (as of a heartbeat ${ago(nowMs - f.asOfMs)})` : '';
  return `${parts.join('; ')}${asOf}`;
}

function ago(ms: number): string {
  return ms < 1_000 ? 'just now' : `${span(ms)} ago`;
}

/** Seconds under two minutes, then minutes, then hours: a glance, not a stopwatch. */
function span(ms: number): string {
  const s = Math.max(0, Math.round(ms / 1000));
  if (s < 120) return `${s} s`;
  if (s < 2 * 3600) return `${Math.round(s / 60)} min`;
  return `${(s / 3600).toFixed(1)} h`;
}
