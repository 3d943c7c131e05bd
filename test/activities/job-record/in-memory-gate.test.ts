import { describe, expect, it } from 'vitest';
import type { Attempt } from '../../../workflows/contracts/job-record.js';
import { InMemoryJobRecordGate } from '../../support/in-memory-job-record-gate.js';

const version = { tenant: 't', bucket: 'b', key: 'k.csv', etag: 'e1' };
const attempt = (workflowId: string, scheduledMs: number): Attempt => ({
  workflowId,
  runId: `${workflowId}-run`,
  activityId: '3',
  scheduledMs,
});

describe('in-memory job record gate', () => {
  it('measures a lease from before the confirm, on its clock', async () => {
    let clockMs = 100;
    const gate = new InMemoryJobRecordGate(
      { leaseMs: 5_000 },
      () => 1_000,
      () => clockMs,
    );
    const session = gate.session(version, attempt('a', 1));
    const claim = await session.claimCreate();
    if (claim.kind !== 'create') throw new Error('no create');
    const lease = await session.confirm('create', claim.seq);
    clockMs = 100 + 5_000 - 1_001;
    expect(lease?.valid()).toBe(true);
    expect(lease?.valid(0)).toBe(true);
    clockMs = 100 + 5_000;
    expect(lease?.valid(0)).toBe(false);
    expect(lease?.remainingMs()).toBe(0);
  });

  it('claims again with ownerClosed when the owner’s run is closed', async () => {
    const gate = new InMemoryJobRecordGate();
    const owner = gate.session(version, attempt('a', 1));
    const follower = gate.session(version, attempt('b', 2));
    await owner.claimCreate();
    expect(await follower.claimCreate()).toMatchObject({ kind: 'wait' });
    gate.closedRuns.add('a/a-run');
    expect(await follower.claimCreate()).toMatchObject({ kind: 'create', seq: 1 });
    expect(gate.messages.map((m) => m.step)).toEqual(['claimCreate', 'claimCreate', 'claimCreate', 'claimCreate']);
  });
});
