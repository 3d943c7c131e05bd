import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { makeApplyFieldMappings } from '../../activities/apply-field-mappings.js';
import type { ApplyFieldMappingsResult } from '../../workflows/contracts/activities.js';
import type { FieldMappingSet } from '../../workflows/contracts/import-input.js';
import { failureOf, runActivity } from '../support/activities.js';
import type { InMemoryBudgetGate } from '../support/in-memory-budget-gate.js';
import { budgetWith, type ServiceWorld, startServiceWorld } from './environment.js';

const WANTED: FieldMappingSet = {
  sourceId: '1001',
  objectType: 'account',
  mappings: [
    { sourceFieldLabel: 'Company', serviceFieldName: 'name', dataType: 'string' },
    { sourceFieldLabel: 'Staff', serviceFieldName: 'employeeCount', dataType: 'number' },
  ],
};

describe('applyFieldMappings', () => {
  let w: ServiceWorld;
  let budget: InMemoryBudgetGate;
  let apply: ReturnType<typeof makeApplyFieldMappings>;
  beforeAll(async () => {
    w = await startServiceWorld();
  });
  afterAll(() => w.close());
  beforeEach(() => {
    w.sim.clearFaults();
    w.sim.seedFieldMappings('1001', 'account', []);
    budget = budgetWith();
    // No input here names a lock holder: the lock is tested on the real server (mapping-lock.real-server.test.ts).
    const locks = { acquire: () => Promise.reject(new Error('no mapping lock is taken in this test')) };
    apply = makeApplyFieldMappings({ service: w.service, budget, locks });
  });

  const run = (set: FieldMappingSet = WANTED) =>
    runActivity<{ tenant: string; set: FieldMappingSet }, ApplyFieldMappingsResult>(apply, { tenant: 't1', set });
  const putCount = () => w.sim.requests().filter((r) => r.endpoint === 'putFieldMappings').length;

  it('writes the set when the service has none, and reads it back', async () => {
    const result = await run().result;
    expect(result).toEqual({ changed: true, apiCalls: { getFieldMappings: 2, putFieldMappings: 1 } });
    expect(w.sim.fieldMappings('1001', 'account')).toEqual(WANTED.mappings);
  });

  it('logs whether it applied the set or found it in place', async () => {
    const applied = run();
    await applied.result;
    const again = run();
    await again.result;
    const info = (logs: typeof applied.logs) => logs.filter((l) => l.level === 'INFO').map((l) => l.message);
    expect(info(applied.logs)).toEqual(['Field mappings applied']);
    expect(info(again.logs)).toEqual(['Field mappings already in place']);
    expect(applied.logs[0]?.meta).toMatchObject({ sourceId: WANTED.sourceId, workflowId: expect.any(String) });
  });

  it('writes nothing when the service holds the same set in another order', async () => {
    w.sim.seedFieldMappings('1001', 'account', [...WANTED.mappings].reverse());
    const before = putCount();
    const result = await run().result;
    expect(result).toEqual({ changed: false, apiCalls: { getFieldMappings: 1 } });
    expect(putCount()).toBe(before);
  });

  it('replaces a different set whole', async () => {
    w.sim.seedFieldMappings('1001', 'account', [
      WANTED.mappings[0],
      { sourceFieldLabel: 'Old', serviceFieldName: 'legacy', dataType: 'string' },
    ]);
    expect((await run().result).changed).toBe(true);
    expect(w.sim.fieldMappings('1001', 'account')).toEqual(WANTED.mappings);
  });

  it('a set the service answered 201 to but does not hold fails MappingNotApplied, not retryable', async () => {
    w.sim.failNext('putFieldMappings', 201, { body: '' });
    const f = await failureOf(run().result);
    expect(f.type).toBe('MappingNotApplied');
    expect(f.nonRetryable).toBe(true);
    expect(f.message).toContain('custom source 1001 (account)');
    expect(f.details?.[0]).toMatchObject({ missing: WANTED.mappings, unexpected: [] });
  });

  it('an unknown custom source fails NotFound naming the source id, not retryable', async () => {
    const f = await failureOf(run({ ...WANTED, sourceId: '4242' }).result);
    expect(f.type).toBe('NotFound');
    expect(f.nonRetryable).toBe(true);
    expect(f.message).toMatch(/^custom source 4242 \(account\) was not found/);
  });

  it('a 500 from the service fails retryably as ServerError', async () => {
    w.sim.failNext('getFieldMappings', 500);
    const f = await failureOf(run().result);
    expect(f.type).toBe('ServerError');
    expect(f.nonRetryable).toBe(false);
  });

  it('a mapping read it cannot use is retried twice, then fails UnusableResponse like any other endpoint', async () => {
    const before = putCount();
    const flags: boolean[] = [];
    for (const attempt of [1, 2, 3]) {
      w.sim.failNext('getFieldMappings', 200, { body: { fieldMappings: 'none' } });
      const f = await failureOf(runActivity(apply, { tenant: 't1', set: WANTED }, { attempt }).result);
      expect(f.type).toBe('UnusableResponse');
      expect(f.message).toContain('fieldMappings');
      flags.push(f.nonRetryable === true);
    }
    expect(flags).toEqual([false, false, true]);
    expect(putCount()).toBe(before);
  });

  it('spends no import budget: the mapping endpoints have no published limit', async () => {
    await run().result;
    expect(budget.requests).toEqual([]);
  });
});
