import { describe, expect, it } from 'vitest';
import {
  clearExhausted,
  createState,
  DEFAULT_STOP_GRANTING_BEFORE_RESET_MS,
  effectiveLimit,
  exhaustedSignalProblem,
  MAX_ANSWERED,
  markExhausted,
  release,
  reportDailyLimit,
  reserve,
  reserveRequestProblem,
  rollover,
  stricterSettings,
  usage,
  windowEndMs,
} from '../../workflows/budget-ledger-state.js';
import type { BudgetSettings, LedgerState } from '../../workflows/contracts/budget.js';

const settings: BudgetSettings = {
  limits: {
    createJob: 3,
    submitData: 1200,
    jobStatus: 3600,
    listJobs: 3600,
    listSources: 3600,
    activityTypes: 3600,
    activityFields: 3600,
  },
  headroomPercent: 0,
  resetMinuteUtc: 0,
};
const T0 = Date.parse('2026-11-22T10:00:00Z');

function reserveMany(state: LedgerState, s: BudgetSettings, n: number, now = T0, prefix = 'r') {
  const results = [];
  let current = state;
  for (let i = 0; i < n; i++) {
    const next = reserve(current, s, { endpoint: 'createJob', requestId: `${prefix}${i}` }, now);
    current = next.state;
    results.push(next.result);
  }
  return { state: current, results };
}

describe('budget ledger state', () => {
  it('grants up to the limit and then refuses until the next reset', () => {
    const { results } = reserveMany(createState(settings, T0), settings, 4);
    expect(results.slice(0, 3)).toEqual([
      { granted: true, remaining: 2 },
      { granted: true, remaining: 1 },
      { granted: true, remaining: 0 },
    ]);
    expect(results[3]).toEqual({ granted: false, resetsAt: '2026-11-23T00:00:00.000Z' });
  });

  it('keeps headroom: the effective limit is floor(limit * (1 - headroom/100))', () => {
    const withHeadroom = { ...settings, headroomPercent: 10 };
    expect(effectiveLimit(withHeadroom, 'submitData')).toBe(1080);
    expect(effectiveLimit(withHeadroom, 'createJob')).toBe(2);
    const { results } = reserveMany(createState(withHeadroom, T0), withHeadroom, 3);
    expect(results.map((r) => r.granted)).toEqual([true, true, false]);
  });

  it('answers a retried requestId with its first answer and does not count it again', () => {
    const first = reserve(createState(settings, T0), settings, { endpoint: 'createJob', requestId: 'same' }, T0);
    const again = reserve(first.state, settings, { endpoint: 'createJob', requestId: 'same' }, T0 + 1000);
    expect(again.result).toEqual(first.result);
    expect(again.state.used.createJob).toBe(1);
  });

  it('grants a new request that a spent window refused once the window has rolled over', () => {
    const spent = reserveMany(createState(settings, T0), settings, 3).state;
    expect(reserve(spent, settings, { endpoint: 'createJob', requestId: 'late' }, T0).result.granted).toBe(false);
    const nextDay = Date.parse('2026-11-23T00:00:00Z');
    const after = reserve(spent, settings, { endpoint: 'createJob', requestId: 'late' }, nextDay);
    expect(after.result).toEqual({ granted: true, remaining: 2 });
    expect(after.state.windowStartMs).toBe(nextDay);
  });

  it('forgets answers at rollover, so the same requestId counts again in the new window', () => {
    const first = reserve(createState(settings, T0), settings, { endpoint: 'createJob', requestId: 'x' }, T0);
    const rolled = rollover(first.state, settings, Date.parse('2026-11-23T00:00:01Z'));
    expect(rolled.answered).toEqual({});
    expect(rolled.used).toEqual({});
  });

  it('refuses everything on an endpoint the service said is exhausted, until the instant it named', () => {
    const until = '2026-11-22T12:00:00.000Z';
    const state = markExhausted(createState(settings, T0), settings, { endpoint: 'jobStatus', until }, T0);
    expect(reserve(state, settings, { endpoint: 'jobStatus', requestId: 'a' }, T0).result).toEqual({
      granted: false,
      resetsAt: until,
    });
    expect(reserve(state, settings, { endpoint: 'listJobs', requestId: 'b' }, T0).result.granted).toBe(true);
    expect(reserve(state, settings, { endpoint: 'jobStatus', requestId: 'a' }, Date.parse(until)).result.granted).toBe(
      true,
    );
  });

  it('ignores an exhaustion that ended already or is earlier than one known', () => {
    const base = createState(settings, T0);
    expect(markExhausted(base, settings, { endpoint: 'jobStatus', until: '2026-11-22T09:00:00Z' }, T0)).toEqual(base);
    const later = markExhausted(base, settings, { endpoint: 'jobStatus', until: '2026-11-22T20:00:00Z' }, T0);
    const earlier = markExhausted(later, settings, { endpoint: 'jobStatus', until: '2026-11-22T15:00:00Z' }, T0);
    expect(earlier.exhaustedUntil.jobStatus).toBe('2026-11-22T20:00:00.000Z');
  });

  it('keeps an exhaustion reaching past the reset across rollover', () => {
    const state = markExhausted(
      createState(settings, T0),
      settings,
      { endpoint: 'submitData', until: '2026-11-23T02:00:00Z' },
      T0,
    );
    const rolled = rollover(state, settings, Date.parse('2026-11-23T00:30:00Z'));
    expect(rolled.exhaustedUntil).toEqual({ submitData: '2026-11-23T02:00:00.000Z' });
  });

  it('reports usage of every budgeted endpoint with its effective limit and reset', () => {
    const state = reserveMany(createState(settings, T0), settings, 2).state;
    const u = usage(state, { ...settings }, T0);
    expect(u.createJob).toEqual({ used: 2, limit: 3, remaining: 1, resetsAt: '2026-11-23T00:00:00.000Z' });
    expect(Object.keys(u).sort()).toEqual(Object.keys(settings.limits).sort());
    expect(usage(state, settings, Date.parse('2026-11-23T01:00:00Z')).createJob.used).toBe(0);
  });

  it('honours a non-midnight reset', () => {
    const s = { ...settings, resetMinuteUtc: 7 * 60 + 30 };
    const state = createState(s, Date.parse('2026-11-22T03:00:00Z'));
    expect(new Date(state.windowStartMs).toISOString()).toBe('2026-11-21T07:30:00.000Z');
    expect(new Date(windowEndMs(state, s)).toISOString()).toBe('2026-11-22T07:30:00.000Z');
  });

  it(`remembers only the most recent ${MAX_ANSWERED} grants`, () => {
    const big = { ...settings, limits: { ...settings.limits, createJob: MAX_ANSWERED + 10 } };
    const { state } = reserveMany(createState(big, T0), big, MAX_ANSWERED + 5);
    expect(Object.keys(state.answered)).toHaveLength(MAX_ANSWERED);
    expect(state.answered.r0).toBeUndefined();
    expect(state.answered[`r${MAX_ANSWERED + 4}`]).toBeDefined();
  });

  it('rejects malformed reserve requests and exhausted signals with clear words', () => {
    expect(reserveRequestProblem({ endpoint: 'createJob', requestId: 'wf/1/2' })).toBeUndefined();
    expect(reserveRequestProblem({ endpoint: 'getFieldMappings', requestId: 'x' })).toMatch(
      /^reserve: endpoint must be one of createJob, .*got "getFieldMappings"$/,
    );
    expect(reserveRequestProblem({ endpoint: 'createJob', requestId: '' })).toBe(
      'reserve: requestId must be 1-256 characters without whitespace',
    );
    expect(reserveRequestProblem({ endpoint: 'createJob', requestId: 'a b' })).toBeDefined();
    expect(reserveRequestProblem(null)).toBe('reserve expects { endpoint, requestId }');
    expect(exhaustedSignalProblem({ endpoint: 'createJob', until: 'tomorrow' })).toBe(
      'exhausted: until must be an ISO timestamp, got "tomorrow"',
    );
  });

  it('gives back a grant whose call never left, once, so the limit is reachable again', () => {
    const { state } = reserveMany(createState(settings, T0), settings, 3);
    const released = release(state, settings, { endpoint: 'createJob', requestId: 'r1' }, T0);
    expect(released.used.createJob).toBe(2);
    expect(release(released, settings, { endpoint: 'createJob', requestId: 'r1' }, T0).used.createJob).toBe(2);
    expect(reserve(released, settings, { endpoint: 'createJob', requestId: 'again' }, T0).result.granted).toBe(true);
  });

  it('gives back nothing for a grant of an earlier window', () => {
    const { state } = reserveMany(createState(settings, T0), settings, 1);
    const tomorrow = T0 + 86_400_000;
    expect(release(state, settings, { endpoint: 'createJob', requestId: 'r0' }, tomorrow).used).toEqual({});
  });

  it('grants nothing in the last minutes before the reset, and grants again after it', () => {
    const reset = Date.parse('2026-11-23T00:00:00Z');
    const late = reset - DEFAULT_STOP_GRANTING_BEFORE_RESET_MS + 1_000;
    const state = createState(settings, late);
    const refused = reserve(state, settings, { endpoint: 'submitData', requestId: 'late' }, late).result;
    expect(refused).toEqual({ granted: false, resetsAt: '2026-11-23T00:00:00.000Z' });
    expect(reserve(state, settings, { endpoint: 'submitData', requestId: 'late' }, reset).result.granted).toBe(true);
    const early = reset - DEFAULT_STOP_GRANTING_BEFORE_RESET_MS - 1_000;
    expect(reserve(state, settings, { endpoint: 'submitData', requestId: 'early' }, early).result.granted).toBe(true);
  });

  it('blocks after an unexpected daily 429 for 15, then 30, then 60 minutes, never past the reset', () => {
    const justAfterReset = Date.parse('2026-11-22T00:01:00Z');
    let state = createState(settings, justAfterReset);
    let now = justAfterReset;
    const blocks: number[] = [];
    for (let i = 0; i < 3; i++) {
      const next = reportDailyLimit(state, settings, { endpoint: 'createJob', requestId: `q${i}` }, now);
      state = next.state;
      blocks.push((Date.parse(next.blockedUntil) - now) / 60_000);
      now = Date.parse(next.blockedUntil);
    }
    expect(blocks).toEqual([15, 30, 60]);
    const lateInDay = Date.parse('2026-11-22T23:50:00Z');
    const capped = reportDailyLimit(state, settings, { endpoint: 'createJob', requestId: 'q9' }, lateInDay);
    expect(capped.blockedUntil).toBe('2026-11-23T00:00:00.000Z');
  });

  it("keeps a block while it holds (workers refused at the same moment), and honours the service's Retry-After", () => {
    const first = reportDailyLimit(createState(settings, T0), settings, { endpoint: 'jobStatus', requestId: 'a' }, T0);
    const again = reportDailyLimit(first.state, settings, { endpoint: 'jobStatus', requestId: 'b' }, T0 + 1_000);
    expect(again.blockedUntil).toBe(first.blockedUntil);
    const told = reportDailyLimit(
      createState(settings, T0),
      settings,
      { endpoint: 'jobStatus', requestId: 'c', retryAfterMs: 7_200_000 },
      T0,
    );
    expect(Date.parse(told.blockedUntil) - T0).toBe(7_200_000);
  });

  it('clears a block an operator set by mistake, for one endpoint or all', () => {
    let state = markExhausted(
      createState(settings, T0),
      settings,
      { endpoint: 'createJob', until: '2026-11-23T00:00:00Z' },
      T0,
    );
    state = markExhausted(state, settings, { endpoint: 'submitData', until: '2026-11-23T00:00:00Z' }, T0);
    const one = clearExhausted(state, settings, { endpoint: 'createJob' }, T0);
    expect(Object.keys(one.exhaustedUntil)).toEqual(['submitData']);
    expect(reserve(one, settings, { endpoint: 'createJob', requestId: 'x' }, T0).result.granted).toBe(true);
    expect(clearExhausted(state, settings, {}, T0).exhaustedUntil).toEqual({});
  });

  it('takes the stricter of two settings for the window in progress, keeping its reset time', () => {
    const other: BudgetSettings = {
      ...settings,
      limits: { ...settings.limits, createJob: 10, submitData: 100 },
      headroomPercent: 20,
      resetMinuteUtc: 360,
    };
    const merged = stricterSettings(settings, other);
    expect(merged.limits).toMatchObject({ createJob: 3, submitData: 100, jobStatus: 3600 });
    expect(merged.headroomPercent).toBe(20);
    expect(merged.resetMinuteUtc).toBe(0);
  });

  it('rejects a reservation carrying malformed settings', () => {
    const request = { endpoint: 'createJob', requestId: 'x', settings: { ...settings, headroomPercent: 'lots' } };
    expect(reserveRequestProblem(request)).toBe('reserve: settings.headroomPercent must be 0-100');
  });
});
