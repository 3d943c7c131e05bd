import type { WorkflowExecutionDescription } from '@temporalio/client';
import { defaultPayloadConverter } from '@temporalio/common';
import { describe, expect, it } from 'vitest';
import { describeJobFreshness, jobFreshnessOf } from '../../../worker/cli/job-freshness.js';

const NOW = Date.parse('2026-11-22T12:00:00.000Z');
const iso = (msFromNow: number) => new Date(NOW + msFromNow).toISOString();

function pendingWait(details: unknown, heartbeatAtMs?: number): Pick<WorkflowExecutionDescription, 'raw'> {
  const activity = {
    activityType: { name: 'awaitJobCompletion' },
    heartbeatDetails: { payloads: [defaultPayloadConverter.toPayload(details)] },
    ...(heartbeatAtMs !== undefined ? { lastHeartbeatTime: { seconds: heartbeatAtMs / 1000 } } : {}),
  };
  return { raw: { pendingActivities: [activity] } } as unknown as Pick<WorkflowExecutionDescription, 'raw'>;
}

const waiting = { pollIndex: 0, lastState: 'unknown', waitingSince: iso(-600_000) };

describe('status: how fresh a waiting import knows its job', () => {
  it('says when the watcher last listed the job processing and when it sweeps next, as of the heartbeat', () => {
    const f = jobFreshnessOf(
      pendingWait(
        { ...waiting, lastSeen: { state: 'processing', at: iso(-40_000), by: 'watcher' }, nextCheckAt: iso(125_000) },
        NOW - 3_000,
      ),
    );
    expect(f && describeJobFreshness(f, NOW)).toBe(
      'job processing, last seen 40 s ago by the watcher; next check in ~2 min (as of a heartbeat 3 s ago)',
    );
  });

  it('names a status read, and a check the stale heartbeat says was due', () => {
    const f = jobFreshnessOf(
      pendingWait(
        {
          ...waiting,
          lastSeen: { state: 'new', at: iso(-3 * 3_600_000), by: 'status read' },
          nextCheckAt: iso(-30_000),
        },
        NOW - 90_000,
      ),
    );
    expect(f && describeJobFreshness(f, NOW)).toBe(
      'job new, last seen 3.0 h ago by a status read; next check due since 30 s (as of a heartbeat 90 s ago)',
    );
  });

  it('says the job was not seen yet before the first sweep or read', () => {
    const f = jobFreshnessOf(pendingWait({ ...waiting, nextCheckAt: iso(500) }, NOW));
    expect(f && describeJobFreshness(f, NOW)).toBe(
      'job not seen yet by this wait; next check due now (as of a heartbeat just now)',
    );
  });

  it('has nothing to say without a pending job wait or before its first heartbeat', () => {
    const upload = {
      raw: { pendingActivities: [{ activityType: { name: 'uploadData' } }] },
    } as unknown as Pick<WorkflowExecutionDescription, 'raw'>;
    expect(jobFreshnessOf(upload)).toBeUndefined();
    const silent = {
      raw: { pendingActivities: [{ activityType: { name: 'awaitJobCompletion' } }] },
    } as unknown as Pick<WorkflowExecutionDescription, 'raw'>;
    expect(jobFreshnessOf(silent)).toBeUndefined();
  });
});
