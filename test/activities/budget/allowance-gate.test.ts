/**
 * The worker process's gate over the ledger's allowances, against the
 * ledger's own decisions held in memory (the same functions its workflow
 * runs; budget-ledger.real-server.test.ts runs them in the real workflow).
 */
import { ApplicationFailure } from '@temporalio/common';
import { describe, expect, it } from 'vitest';
import { AllowanceGate } from '../../../activities/budget/allowance-gate.js';
import type { AllowanceRequest, AllowanceResult } from '../../../workflows/contracts/budget.js';
import { InMemoryBudgetGate, SPEC_BUDGET_SETTINGS } from '../../support/in-memory-budget-gate.js';

const MIN = 60_000;

function clock(start = Date.parse('2026-11-22T10:00:00Z')) {
  let now = start;
  return { now: () => now, advance: (ms: number) => (now += ms) };
}

function setup() {
  const time = clock();
  const ledger = new InMemoryBudgetGate(SPEC_BUDGET_SETTINGS, time.now, 'acme');
  const gate = new AllowanceGate(ledger, { holdMs: 10 * MIN, now: time.now });
  return { time, ledger, gate };
}

describe('the allowance gate', () => {
  it('grants ten calls in one hold with four ledger Updates, not ten, and the ledger counted each first', async () => {
    const { ledger, gate } = setup();
    for (let i = 0; i < 10; i++) expect(await gate.reserve('jobStatus', `r${i}`)).toMatchObject({ granted: true });
    // Each allowance follows the calls spent over the last hold: 1, then 2, 4, 8.
    expect(ledger.allowanceRequests.map((a) => a.result.granted.jobStatus)).toEqual([1, 2, 4, 8]);
    expect(ledger.requests).toEqual([]);
    // The spent allowances were settled by the next; the last one's 5 unspent calls are held still.
    expect((await gate.usage()).jobStatus).toMatchObject({ used: 15, held: 8 });
  });

  it('lets calls wanted at once share one Update', async () => {
    const { ledger, gate } = setup();
    const answers = await Promise.all(Array.from({ length: 5 }, (_, i) => gate.reserve('createJob', `c${i}`)));
    expect(answers.every((a) => a.granted)).toBe(true);
    expect(ledger.allowanceRequests).toHaveLength(1);
    expect(ledger.allowanceRequests[0]?.request.calls).toEqual({ createJob: 5 });
  });

  it('asks for what it spent lately on every endpoint in the same Update', async () => {
    const { ledger, gate } = setup();
    await gate.reserve('createJob', 'c1');
    await gate.reserve('submitData', 's1');
    expect(ledger.allowanceRequests.map((a) => a.request.calls)).toEqual([
      { createJob: 1 },
      { createJob: 1, submitData: 1 },
    ]);
    // The create of the next import needs no Update of its own.
    await gate.reserve('createJob', 'c2');
    expect(ledger.allowanceRequests).toHaveLength(2);
  });

  it('reserves the calls a caller names as coming next in the same Update', async () => {
    const { ledger, gate } = setup();
    await gate.reserve('jobStatus', 'pre-read', { submitData: 1 });
    await gate.reserve('submitData', 'upload');
    expect(ledger.allowanceRequests.map((a) => a.request.calls)).toEqual([{ jobStatus: 1, submitData: 1 }]);
  });

  it('gives a call that never left back into its allowance, without an Update', async () => {
    const { ledger, gate } = setup();
    await gate.reserve('createJob', 'c1');
    await gate.release('createJob', 'c1');
    await gate.reserve('createJob', 'c2');
    expect(ledger.allowanceRequests).toHaveLength(1);
    expect(ledger.released).toEqual([]);
  });

  it('spends nothing from an allowance past its hold, and gives its unspent calls back with the next', async () => {
    const { time, ledger, gate } = setup();
    await gate.reserve('jobStatus', 'r1');
    await gate.reserve('jobStatus', 'r2');
    await gate.reserve('jobStatus', 'r3');
    await gate.release('jobStatus', 'r3');
    time.advance(10 * MIN);
    await gate.reserve('jobStatus', 'r4');
    expect(ledger.allowanceRequests).toHaveLength(3);
    const [, second, third] = ledger.allowanceRequests;
    expect(third?.request.settle).toEqual([{ allowanceId: second?.request.requestId, unspent: { jobStatus: 1 } }]);
    // r1, r2 and r4 were spent, exactly what the ledger now counts.
    expect((await gate.usage()).jobStatus.used).toBe(3);
  });

  it("answers a refused endpoint with the ledger's instant", async () => {
    const { time, ledger, gate } = setup();
    const until = new Date(time.now() + 30 * MIN).toISOString();
    await ledger.reportDailyLimit({ endpoint: 'submitData', requestId: 'x', retryAfterMs: 30 * MIN });
    expect(await gate.reserve('submitData', 's1')).toEqual({ granted: false, resetsAt: until });
  });

  it('after a daily-limit 429 gives back what it held for that endpoint with the next allowance', async () => {
    const { ledger, gate } = setup();
    for (let i = 0; i < 2; i++) await gate.reserve('submitData', `s${i}`);
    // Allowances of 1 and 2: s1 was the second's first call, one is left.
    await gate.reportDailyLimit({ endpoint: 'submitData', requestId: 's1' });
    await gate.reserve('createJob', 'c1');
    // The first, spent, was settled by the second already.
    expect(ledger.allowanceRequests.at(-1)?.request.settle).toEqual([
      { allowanceId: ledger.allowanceRequests[1]?.request.requestId, unspent: { submitData: 1 } },
    ]);
    expect((await gate.usage()).submitData.used).toBe(2);
  });

  it('reserves call by call with a ledger that knows no allowances', async () => {
    const time = clock();
    class OlderLedger extends InMemoryBudgetGate {
      override async reserveAllowance(_: AllowanceRequest): Promise<AllowanceResult> {
        throw ApplicationFailure.create({
          type: 'UpdateRefused',
          message:
            'budget-ledger-acme refused Update reserveAllowance: No registered handler for update: reserveAllowance',
        });
      }
    }
    const ledger = new OlderLedger(SPEC_BUDGET_SETTINGS, time.now, 'acme');
    const gate = new AllowanceGate(ledger, { holdMs: 10 * MIN, now: time.now });
    expect(await gate.reserve('createJob', 'c1')).toMatchObject({ granted: true });
    expect(await gate.reserve('createJob', 'c2')).toMatchObject({ granted: true });
    await gate.release('createJob', 'c2');
    expect(ledger.requests.map((r) => r.requestId)).toEqual(['c1', 'c2']);
    expect(ledger.released).toEqual([{ endpoint: 'createJob', requestId: 'c2' }]);
    expect((await gate.usage()).createJob.used).toBe(1);
  });
});
