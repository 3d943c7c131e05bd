import { describe, expect, it } from 'vitest';
import {
  allowanceCap,
  allowanceRequestProblem,
  createState,
  grantAllowance,
  MAX_ALLOWANCE_HOLD_MS,
  MAX_UNSETTLED_ALLOWANCES,
  markExhausted,
  reserve,
  usage,
} from '../../workflows/budget-ledger-state.js';
import type { AllowanceRequest, BudgetSettings, LedgerState } from '../../workflows/contracts/budget.js';

const settings: BudgetSettings = {
  limits: {
    createJob: 1200,
    submitData: 1200,
    jobStatus: 3600,
    listJobs: 3600,
    listSources: 3600,
    activityTypes: 3600,
    activityFields: 3600,
  },
  headroomPercent: 0,
  resetMinuteUtc: 0,
  stopGrantingBeforeResetMs: 5 * 60_000,
};
const T0 = Date.parse('2026-11-22T10:00:00Z');
const MIN = 60_000;

function ask(state: LedgerState, request: Partial<AllowanceRequest> & { requestId: string }, now = T0, s = settings) {
  return grantAllowance(state, s, { calls: { createJob: 1 }, holdMs: 10 * MIN, ...request }, now);
}

describe('budget ledger allowances', () => {
  it('grants several calls on several endpoints in one answer, counted as used at once', () => {
    const { state, result } = ask(createState(settings, T0), {
      requestId: 'a1',
      calls: { createJob: 2, submitData: 2, jobStatus: 6 },
    });
    expect(result).toEqual({
      granted: { createJob: 2, submitData: 2, jobStatus: 6 },
      refused: {},
      validForMs: 10 * MIN,
      remaining: { createJob: 1198, submitData: 1198, jobStatus: 3594 },
    });
    const u = usage(state, settings, T0);
    expect(u.createJob).toMatchObject({ used: 2, remaining: 1198, held: 2 });
    expect(u.jobStatus).toMatchObject({ used: 6, held: 6 });
    expect(u.listJobs.held).toBeUndefined();
  });

  it('holds at most 1% of a window per endpoint, so a holder that dies loses at most that', () => {
    expect(allowanceCap(settings, 'createJob')).toBe(12);
    expect(allowanceCap(settings, 'jobStatus')).toBe(36);
    const { state, result } = ask(createState(settings, T0), {
      requestId: 'a1',
      calls: { createJob: 500, jobStatus: 500 },
    });
    expect(result.granted).toEqual({ createJob: 12, jobStatus: 36 });
    // The holder never settles: its calls stay used, no more.
    expect(usage(state, settings, T0).createJob.used).toBe(12);
  });

  it('grants what the window has left, then refuses with the reset', () => {
    let state = createState(settings, T0);
    for (let i = 0; i < 1199; i++)
      state = reserve(state, settings, { endpoint: 'createJob', requestId: `r${i}` }, T0).state;
    const first = ask(state, { requestId: 'a1', calls: { createJob: 5, jobStatus: 1 } });
    expect(first.result.granted).toEqual({ createJob: 1, jobStatus: 1 });
    const second = ask(first.state, { requestId: 'a2', calls: { createJob: 5 } });
    expect(second.result).toMatchObject({ granted: {}, refused: { createJob: '2026-11-23T00:00:00.000Z' } });
  });

  it('takes back what a settled allowance left unspent, once, and never more than it granted', () => {
    const first = ask(createState(settings, T0), { requestId: 'a1', calls: { createJob: 4, jobStatus: 8 } });
    const settle = [{ allowanceId: 'a1', unspent: { createJob: 3, jobStatus: 99 } }];
    const second = ask(first.state, { requestId: 'a2', calls: { createJob: 1 }, settle });
    // a1 spent 1 create and all its reads' worth is given back at most: 8; a2 holds 1 create.
    expect(usage(second.state, settings, T0).createJob).toMatchObject({ used: 2, held: 1 });
    expect(usage(second.state, settings, T0).jobStatus.used).toBe(0);
    const again = ask(second.state, { requestId: 'a3', calls: { createJob: 1 }, settle });
    expect(usage(again.state, settings, T0).createJob.used).toBe(3);
  });

  it('answers a retried request with its first answer, without counting or settling again', () => {
    const first = ask(createState(settings, T0), { requestId: 'a1', calls: { createJob: 4 } });
    const settle = [{ allowanceId: 'a1', unspent: { createJob: 4 } }];
    const second = ask(first.state, { requestId: 'a2', calls: { createJob: 2 }, settle });
    const retried = ask(second.state, { requestId: 'a2', calls: { createJob: 2 }, settle });
    expect(retried.result).toEqual(second.result);
    expect(usage(retried.state, settings, T0).createJob.used).toBe(2);
  });

  it('refuses a blocked endpoint with the end of its block and grants the others', () => {
    const blocked = markExhausted(
      createState(settings, T0),
      settings,
      { endpoint: 'submitData', until: '2026-11-22T11:00:00.000Z' },
      T0,
    );
    const { result } = ask(blocked, { requestId: 'a1', calls: { createJob: 1, submitData: 1 } });
    expect(result.granted).toEqual({ createJob: 1 });
    expect(result.refused).toEqual({ submitData: '2026-11-22T11:00:00.000Z' });
  });

  it('holds calls at most 15 minutes and never into the guard band before the reset', () => {
    expect(ask(createState(settings, T0), { requestId: 'a1', holdMs: 60 * MIN }).result.validForMs).toBe(
      MAX_ALLOWANCE_HOLD_MS,
    );
    const late = Date.parse('2026-11-22T23:50:00Z');
    expect(ask(createState(settings, late), { requestId: 'a2' }, late).result.validForMs).toBe(5 * MIN);
    const inBand = Date.parse('2026-11-22T23:56:00Z');
    const refused = ask(createState(settings, inBand), { requestId: 'a3' }, inBand);
    expect(refused.result).toMatchObject({ granted: {}, validForMs: 0, refused: { createJob: expect.any(String) } });
  });

  it('forgets unsettled allowances at the window reset, whose counts start from zero', () => {
    const { state } = ask(createState(settings, T0), { requestId: 'a1', calls: { createJob: 4 } });
    const next = T0 + 24 * 60 * MIN;
    const later = ask(state, { requestId: 'a2', settle: [{ allowanceId: 'a1', unspent: { createJob: 4 } }] }, next);
    expect(usage(later.state, settings, next).createJob).toMatchObject({ used: 1, held: 1 });
  });

  it(`remembers at most ${MAX_UNSETTLED_ALLOWANCES} unsettled allowances; a forgotten one's calls stay used`, () => {
    let state = createState(settings, T0);
    for (let i = 0; i <= MAX_UNSETTLED_ALLOWANCES; i++) {
      state = ask(state, { requestId: `a${i}`, calls: { listJobs: 1 } }).state;
    }
    expect(Object.keys(state.allowances ?? {})).toHaveLength(MAX_UNSETTLED_ALLOWANCES);
    const settled = ask(state, { requestId: 'b', settle: [{ allowanceId: 'a0', unspent: { listJobs: 1 } }] });
    expect(usage(settled.state, settings, T0).listJobs.used).toBe(MAX_UNSETTLED_ALLOWANCES + 1);
  });

  it('rejects malformed allowance requests with clear words', () => {
    const ok = { requestId: 'a1', calls: { createJob: 1 }, holdMs: 1000 };
    expect(allowanceRequestProblem(ok)).toBeUndefined();
    expect(allowanceRequestProblem({ ...ok, calls: {} })).toMatch(/at least one endpoint/);
    expect(allowanceRequestProblem({ ...ok, calls: { deleteAll: 1 } })).toMatch(/endpoint must be one of/);
    expect(allowanceRequestProblem({ ...ok, calls: { createJob: 0 } })).toMatch(/at least 1/);
    expect(allowanceRequestProblem({ ...ok, holdMs: -1 })).toMatch(/holdMs/);
    expect(allowanceRequestProblem({ ...ok, settle: [{ allowanceId: 'x y', unspent: {} }] })).toMatch(/allowanceId/);
    expect(allowanceRequestProblem({ ...ok, settle: [{ allowanceId: 'x', unspent: { createJob: -1 } }] })).toMatch(
      /at least 0/,
    );
  });
});
