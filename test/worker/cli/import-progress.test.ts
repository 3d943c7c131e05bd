import type { WorkflowExecutionDescription } from '@temporalio/client';
import { defaultPayloadConverter } from '@temporalio/common';
import { describe, expect, it } from 'vitest';
import { formatBytes, RateMeter, uploadProgressOf, waitingNote } from '../../../worker/cli/import-progress.js';

function describedWith(pendingActivities: unknown[]): Pick<WorkflowExecutionDescription, 'raw'> {
  return { raw: { pendingActivities } } as unknown as Pick<WorkflowExecutionDescription, 'raw'>;
}

describe('uploadProgressOf', () => {
  it("decodes the pending uploadData activity's last heartbeat", () => {
    const description = describedWith([
      {
        activityType: { name: 'awaitJobCompletion' },
        heartbeatDetails: { payloads: [defaultPayloadConverter.toPayload({ pollIndex: 1 })] },
      },
      {
        activityType: { name: 'uploadData' },
        heartbeatDetails: { payloads: [defaultPayloadConverter.toPayload({ bytesSent: 1024, totalBytes: 4096 })] },
      },
    ]);
    expect(uploadProgressOf(description)).toEqual({ bytesSent: 1024, totalBytes: 4096 });
  });

  it('has nothing to show before the first heartbeat or with no upload pending', () => {
    expect(uploadProgressOf(describedWith([{ activityType: { name: 'uploadData' } }]))).toBeUndefined();
    expect(uploadProgressOf(describedWith([]))).toBeUndefined();
  });
});

describe('waitingNote', () => {
  it('says until when an import waits for the daily budget', () => {
    expect(
      waitingNote({ phase: 'creating-job', tenant: 't', waitingForBudgetUntil: '2026-11-23T00:00:00.000Z' }, 'w1'),
    ).toBe('waiting for the daily budget until 2026-11-23T00:00:00.000Z');
  });

  it('names the guard band when the wait ends at the reset within its last 5 minutes', () => {
    const progress = { phase: 'creating-job' as const, tenant: 't', waitingForBudgetUntil: '2026-11-28T00:00:00.000Z' };
    expect(waitingNote(progress, 'w1', Date.parse('2026-11-27T23:57:00.000Z'))).toBe(
      'waiting for the daily reset at 2026-11-28T00:00:00.000Z: the ledger grants no call in the last 5 min before the daily reset at 2026-11-28T00:00:00.000Z, budget left or not (a call then could count against the next window); imports go on at the reset',
    );
    // Hours before it, the same wait is a spent budget.
    expect(waitingNote(progress, 'w1', Date.parse('2026-11-27T20:00:00.000Z'))).toBe(
      'waiting for the daily budget until 2026-11-28T00:00:00.000Z',
    );
  });

  it('tells the operator which commands answer an import waiting after a failure', () => {
    const note = waitingNote(
      {
        phase: 'failed',
        tenant: 't',
        awaitingRetry: { step: 'createImportJob', failureType: 'Unauthorized', failure: 'x', since: 's', until: 'u' },
      },
      'w1',
    );
    expect(note).toContain('createImportJob failed (Unauthorized)');
    expect(note).toContain('"import-worker retry w1"');
    expect(note).toContain('"import-worker abandon w1"');
  });

  it('is empty while the import works', () => {
    expect(waitingNote({ phase: 'uploading', tenant: 't' }, 'w1')).toBe('');
    expect(waitingNote(undefined, 'w1')).toBe('');
  });
});

describe('formatBytes and RateMeter', () => {
  it('formats sizes in binary units', () => {
    expect(formatBytes(512)).toBe('512 B');
    expect(formatBytes(1536)).toBe('1.5 KiB');
    expect(formatBytes(5 * 1024 ** 3)).toBe('5.0 GiB');
  });

  it('shows a fractional rate under 1 KiB/s in whole bytes', () => {
    expect(formatBytes(9.608455440787893)).toBe('10 B');
    expect(formatBytes(0.4)).toBe('0 B');
  });

  it('measures bytes per second over its recent samples', () => {
    const meter = new RateMeter(5_000);
    expect(meter.add(0, 0)).toBe(0);
    expect(meter.add(1_000, 1_000_000)).toBe(1_000_000);
    expect(meter.add(2_000, 3_000_000)).toBe(1_500_000);
    // Old samples fall out of the window: the rate follows the recent pace.
    meter.add(10_000, 3_000_000);
    expect(meter.add(11_000, 3_000_000)).toBe(0);
  });
});
