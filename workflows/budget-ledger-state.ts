/**
 * The budget ledger's decisions as pure functions over its state: the entity
 * workflow serializes calls to them, and activity tests drive them from an
 * in-memory gate. No Temporal imports here, on purpose.
 *
 * A window's grants never exceed the effective limit: floor(limit * (1 -
 * headroom/100)). A retried reservation (same requestId, same window) gets its
 * first answer back and is not counted twice. A grant whose call never left
 * is given back (`release`). After the service says 429 for a daily limit
 * (`reportDailyLimit`), nothing is granted on that endpoint for a while, even
 * if our count says there is room: its Retry-After when it sent one, else
 * 15 min, then 30, 60 ... on each further 429 in the window, never past the
 * reset. Nothing is granted in the last minutes before the reset either.
 */

import { nextResetMs, windowStartMs } from './budget-window.js';
import type { EndpointUsage } from './contracts/activities.js';
import type {
  AllowanceRequest,
  AllowanceResult,
  AllowanceSettlement,
  BudgetSettings,
  ClearExhaustedSignal,
  DailyLimitReport,
  ExhaustedSignal,
  LedgerState,
  LedgerUsage,
  ReserveRequest,
  ReserveResult,
} from './contracts/budget.js';
import { BUDGETED_ENDPOINT_NAMES, type BudgetedEndpoint, isBudgetedEndpoint } from './contracts/endpoints.js';

/**
 * Grants remembered for idempotency. A reservation is retried within seconds
 * or minutes of the first try, so the most recent grants suffice, and the
 * bound keeps the state carried across continue-as-new far below payload limits.
 */
export const MAX_ANSWERED = 2_000;
const REQUEST_ID_PATTERN = /^\S{1,256}$/u;
/**
 * A grant in the last minutes of a window may reach the service after its
 * reset (a slow connect, clocks apart) and count in a window the ledger starts
 * from zero; five minutes covers the short calls' 30 s timeout and clock skew.
 */
export const DEFAULT_STOP_GRANTING_BEFORE_RESET_MS = 5 * 60_000;
/** The first block after an unexpected daily-limit 429; each further one in the window doubles it. */
const FIRST_DAILY_LIMIT_BLOCK_MS = 15 * 60_000;

export function createState(settings: BudgetSettings, nowMs: number): LedgerState {
  return { windowStartMs: windowStartMs(nowMs, settings.resetMinuteUtc), used: {}, exhaustedUntil: {}, answered: {} };
}

export function effectiveLimit(settings: BudgetSettings, endpoint: BudgetedEndpoint): number {
  return Math.floor(settings.limits[endpoint] * (1 - settings.headroomPercent / 100));
}

/**
 * The state for the window containing `nowMs`. A new window starts from zero
 * and forgets its answers; an exhaustion the service reported past the reset
 * (its reset time is not published) still holds.
 */
export function rollover(state: LedgerState, settings: BudgetSettings, nowMs: number): LedgerState {
  const start = windowStartMs(nowMs, settings.resetMinuteUtc);
  if (start === state.windowStartMs) return state;
  const exhaustedUntil: Record<string, string> = {};
  for (const [endpoint, until] of Object.entries(state.exhaustedUntil)) {
    if (Date.parse(until) > nowMs) exhaustedUntil[endpoint] = until;
  }
  return { windowStartMs: start, used: {}, exhaustedUntil, answered: {} };
}

/**
 * The settings for the rest of a window when a caller configured others: the
 * lower limit, the larger headroom and the longer stop before the reset win at
 * once (the service's limits do not wait for our next window). The reset time
 * stays: a window cannot move half-way; the caller's applies from the next one.
 */
export function stricterSettings(current: BudgetSettings, requested: BudgetSettings): BudgetSettings {
  const limits = { ...current.limits };
  for (const endpoint of BUDGETED_ENDPOINT_NAMES) {
    limits[endpoint] = Math.min(current.limits[endpoint], requested.limits[endpoint]);
  }
  return {
    limits,
    headroomPercent: Math.max(current.headroomPercent, requested.headroomPercent),
    resetMinuteUtc: current.resetMinuteUtc,
    stopGrantingBeforeResetMs: Math.max(
      current.stopGrantingBeforeResetMs ?? DEFAULT_STOP_GRANTING_BEFORE_RESET_MS,
      requested.stopGrantingBeforeResetMs ?? DEFAULT_STOP_GRANTING_BEFORE_RESET_MS,
    ),
  };
}

function settingsProblem(s: unknown): string | undefined {
  if (typeof s !== 'object' || s === null) return 'settings must be an object';
  const r = s as Record<string, unknown>;
  const limits = r.limits as Record<string, unknown> | undefined;
  for (const endpoint of BUDGETED_ENDPOINT_NAMES) {
    const n = limits?.[endpoint];
    if (typeof n !== 'number' || !Number.isInteger(n) || n < 0) return `settings.limits.${endpoint} must be a count`;
  }
  const h = r.headroomPercent;
  if (typeof h !== 'number' || h < 0 || h > 100) return 'settings.headroomPercent must be 0-100';
  const m = r.resetMinuteUtc;
  if (typeof m !== 'number' || !Number.isInteger(m) || m < 0 || m >= 1440)
    return 'settings.resetMinuteUtc must be 0-1439';
  const stop = r.stopGrantingBeforeResetMs;
  if (stop !== undefined && (typeof stop !== 'number' || stop < 0)) {
    return 'settings.stopGrantingBeforeResetMs must be a non-negative number';
  }
  return undefined;
}

/** Why a reserve request is malformed, or undefined when it is fine. */
export function reserveRequestProblem(request: unknown): string | undefined {
  if (typeof request !== 'object' || request === null) return 'reserve expects { endpoint, requestId }';
  const r = request as Record<string, unknown>;
  if (r.settings !== undefined) {
    const problem = settingsProblem(r.settings);
    if (problem) return `reserve: ${problem}`;
  }
  if (!isBudgetedEndpoint(r.endpoint)) {
    return `reserve: endpoint must be one of ${BUDGETED_ENDPOINT_NAMES.join(', ')}, got ${JSON.stringify(r.endpoint)}`;
  }
  if (typeof r.requestId !== 'string' || !REQUEST_ID_PATTERN.test(r.requestId)) {
    return 'reserve: requestId must be 1-256 characters without whitespace';
  }
  return undefined;
}

/**
 * The longest an allowance is held: within it a process spends calls the
 * ledger counted without asking again. It bounds how long a block set
 * meanwhile (an operator's, a daily-limit 429) leaves other processes
 * spending what they already hold, and how long held calls show as used.
 */
export const MAX_ALLOWANCE_HOLD_MS = 15 * 60_000;
/**
 * The share of an endpoint's window one allowance may hold. A process that
 * dies or freezes never gives back what it held, so each such loss costs at
 * most this much of the day (1%: 12 creates or uploads, 36 reads at the
 * card's budgets), and never more than was left.
 */
const ALLOWANCE_SHARE = 0.01;
const MAX_SETTLEMENTS = 64;
/**
 * Unsettled allowances remembered: a live process has one or two, a dead one
 * leaves its last; the bound keeps the state carried across continue-as-new
 * small (an allowance is about 200 bytes).
 */
export const MAX_UNSETTLED_ALLOWANCES = 500;

export function allowanceCap(settings: BudgetSettings, endpoint: BudgetedEndpoint): number {
  return Math.max(1, Math.floor(effectiveLimit(settings, endpoint) * ALLOWANCE_SHARE));
}

function countsProblem(counts: unknown, what: string, least: number): string | undefined {
  if (typeof counts !== 'object' || counts === null) return `${what} must be an object of counts per endpoint`;
  for (const [endpoint, n] of Object.entries(counts)) {
    if (!isBudgetedEndpoint(endpoint)) {
      return `${what}: endpoint must be one of ${BUDGETED_ENDPOINT_NAMES.join(', ')}, got ${JSON.stringify(endpoint)}`;
    }
    if (typeof n !== 'number' || !Number.isInteger(n) || n < least) {
      return `${what}.${endpoint} must be a whole number of at least ${least}, got ${JSON.stringify(n)}`;
    }
  }
  return undefined;
}

/** Why an allowance request is malformed, or undefined when it is fine. */
export function allowanceRequestProblem(request: unknown): string | undefined {
  if (typeof request !== 'object' || request === null) return 'reserveAllowance expects { requestId, calls, holdMs }';
  const r = request as Record<string, unknown>;
  if (typeof r.requestId !== 'string' || !REQUEST_ID_PATTERN.test(r.requestId)) {
    return 'reserveAllowance: requestId must be 1-256 characters without whitespace';
  }
  const calls = countsProblem(r.calls, 'reserveAllowance: calls', 1);
  if (calls) return calls;
  if (Object.keys(r.calls as object).length === 0) return 'reserveAllowance: calls must name at least one endpoint';
  if (typeof r.holdMs !== 'number' || !Number.isFinite(r.holdMs) || r.holdMs < 0) {
    return `reserveAllowance: holdMs must be a non-negative number, got ${JSON.stringify(r.holdMs)}`;
  }
  if (r.settle !== undefined) {
    if (!Array.isArray(r.settle) || r.settle.length > MAX_SETTLEMENTS) {
      return `reserveAllowance: settle must be a list of at most ${MAX_SETTLEMENTS} { allowanceId, unspent }`;
    }
    for (const s of r.settle as unknown[]) {
      const entry = (s ?? {}) as Record<string, unknown>;
      if (typeof entry.allowanceId !== 'string' || !REQUEST_ID_PATTERN.test(entry.allowanceId)) {
        return 'reserveAllowance: settle[].allowanceId must be 1-256 characters without whitespace';
      }
      const unspent = countsProblem(entry.unspent, 'reserveAllowance: settle[].unspent', 0);
      if (unspent) return unspent;
    }
  }
  if (r.settings !== undefined) {
    const problem = settingsProblem(r.settings);
    if (problem) return `reserveAllowance: ${problem}`;
  }
  return undefined;
}

/** Why a daily-limit report is malformed, or undefined when it is fine. */
export function dailyLimitReportProblem(report: unknown): string | undefined {
  const problem = reserveRequestProblem(report);
  if (problem) return problem.replace('reserve', 'dailyLimitReached');
  const ms = (report as Record<string, unknown>).retryAfterMs;
  if (ms !== undefined && (typeof ms !== 'number' || !Number.isFinite(ms) || ms < 0)) {
    return `dailyLimitReached: retryAfterMs must be a non-negative number, got ${JSON.stringify(ms)}`;
  }
  return undefined;
}

function activeExhaustion(state: LedgerState, endpoint: string, nowMs: number): string | undefined {
  const until = state.exhaustedUntil[endpoint];
  return until !== undefined && Date.parse(until) > nowMs ? until : undefined;
}

function rememberGrant(answered: Record<string, ReserveResult>, requestId: string, result: ReserveResult) {
  const next = { ...answered, [requestId]: result };
  const ids = Object.keys(next);
  for (const id of ids.slice(0, Math.max(0, ids.length - MAX_ANSWERED))) delete next[id];
  return next;
}

/**
 * Grants or refuses one call. Only grants are remembered: a refused request
 * retried after an exhaustion ended (within the same window) may be granted.
 */
export function reserve(
  state: LedgerState,
  settings: BudgetSettings,
  request: ReserveRequest,
  nowMs: number,
): { state: LedgerState; result: ReserveResult } {
  const current = rollover(state, settings, nowMs);
  const previous = current.answered[request.requestId];
  if (previous) return { state: current, result: previous };

  const resetMs = nextResetMs(nowMs, settings.resetMinuteUtc);
  const resetsAt = new Date(resetMs).toISOString();
  const exhaustedUntil = activeExhaustion(current, request.endpoint, nowMs);
  if (exhaustedUntil) return { state: current, result: { granted: false, resetsAt: exhaustedUntil } };
  const stopBeforeMs = settings.stopGrantingBeforeResetMs ?? DEFAULT_STOP_GRANTING_BEFORE_RESET_MS;
  if (resetMs - nowMs <= stopBeforeMs) return { state: current, result: { granted: false, resetsAt } };

  const used = current.used[request.endpoint] ?? 0;
  const limit = effectiveLimit(settings, request.endpoint);
  if (used >= limit) return { state: current, result: { granted: false, resetsAt } };

  const result: ReserveResult = { granted: true, remaining: limit - used - 1 };
  return {
    state: {
      ...current,
      used: { ...current.used, [request.endpoint]: used + 1 },
      answered: rememberGrant(current.answered, request.requestId, result),
    },
    result,
  };
}

/**
 * Takes back what ended allowances left unspent: each is settled once (it is
 * forgotten then), for no more than it was granted, and only in its own
 * window (an earlier window's counts are gone anyway).
 */
function settleAllowances(state: LedgerState, settlements: readonly AllowanceSettlement[]): LedgerState {
  if (settlements.length === 0 || !state.allowances) return state;
  const allowances = { ...state.allowances };
  const used = { ...state.used };
  for (const { allowanceId, unspent } of settlements) {
    const grant = allowances[allowanceId];
    if (!grant) continue;
    delete allowances[allowanceId];
    for (const [endpoint, granted] of Object.entries(grant.granted)) {
      const back = Math.min(granted ?? 0, Math.max(0, unspent[endpoint as BudgetedEndpoint] ?? 0));
      used[endpoint] = Math.max(0, (used[endpoint] ?? 0) - back);
    }
  }
  return { ...state, used, allowances };
}

/**
 * Grants an allowance: per endpoint asked for, as many calls as wanted, up to
 * the allowance cap and what the window has left; an endpoint that is blocked
 * or spent is refused with the instant to wait for. Granted calls count as
 * used at once. The calls are valid for the hold asked for, at most
 * MAX_ALLOWANCE_HOLD_MS and never into the guard band before the reset. A
 * retried request gets its first answer back; the settlements it carries are
 * applied once.
 */
export function grantAllowance(
  state: LedgerState,
  settings: BudgetSettings,
  request: AllowanceRequest,
  nowMs: number,
): { state: LedgerState; result: AllowanceResult } {
  const rolled = rollover(state, settings, nowMs);
  const previous = rolled.allowances?.[request.requestId];
  if (previous) return { state: rolled, result: previous };
  const current = settleAllowances(rolled, request.settle ?? []);

  const resetMs = nextResetMs(nowMs, settings.resetMinuteUtc);
  const resetsAt = new Date(resetMs).toISOString();
  const stopBeforeMs = settings.stopGrantingBeforeResetMs ?? DEFAULT_STOP_GRANTING_BEFORE_RESET_MS;
  const validForMs = Math.max(0, Math.min(request.holdMs, MAX_ALLOWANCE_HOLD_MS, resetMs - stopBeforeMs - nowMs));
  const used = { ...current.used };
  const result: AllowanceResult = { granted: {}, refused: {}, validForMs, remaining: {} };
  for (const [endpoint, wanted] of Object.entries(request.calls) as [BudgetedEndpoint, number][]) {
    const blockedUntil = activeExhaustion(current, endpoint, nowMs);
    const left = effectiveLimit(settings, endpoint) - (used[endpoint] ?? 0);
    const n = Math.min(wanted, allowanceCap(settings, endpoint), left);
    if (blockedUntil || validForMs === 0 || n < 1) {
      result.refused[endpoint] = blockedUntil ?? resetsAt;
      continue;
    }
    used[endpoint] = (used[endpoint] ?? 0) + n;
    result.granted[endpoint] = n;
    result.remaining[endpoint] = left - n;
  }
  if (Object.keys(result.granted).length === 0) return { state: current, result };
  const allowances = { ...current.allowances, [request.requestId]: result };
  // The oldest unsettled allowances are forgotten past the bound: their calls simply stay used.
  const ids = Object.keys(allowances);
  for (const id of ids.slice(0, Math.max(0, ids.length - MAX_UNSETTLED_ALLOWANCES))) delete allowances[id];
  return { state: { ...current, used, allowances }, result };
}

/**
 * Gives back the grant of a call that never reached the service. Only a grant
 * of the current window is given back (the next window starts from zero
 * anyway), and only once: it is forgotten, so a second release finds nothing.
 */
export function release(
  state: LedgerState,
  settings: BudgetSettings,
  request: ReserveRequest,
  nowMs: number,
): LedgerState {
  const current = rollover(state, settings, nowMs);
  const grant = current.answered[request.requestId];
  if (!grant?.granted) return current;
  const { [request.requestId]: _, ...answered } = current.answered;
  const used = Math.max(0, (current.used[request.endpoint] ?? 0) - 1);
  return { ...current, used: { ...current.used, [request.endpoint]: used }, answered };
}

/**
 * The service refused a call with its daily-limit 429 although our count had
 * room: another client shares the tenant, or its window turned later than
 * ours (its reset time is unpublished). Block the endpoint for the service's
 * Retry-After when it gave one; else for 15 min, doubling with each further
 * 429 in this window, never past the reset, so a service that resets a little
 * late costs minutes, not a day. A report while a block holds (workers
 * refused at the same moment) keeps that block.
 */
export function reportDailyLimit(
  state: LedgerState,
  settings: BudgetSettings,
  report: DailyLimitReport,
  nowMs: number,
): { state: LedgerState; blockedUntil: string } {
  const current = rollover(state, settings, nowMs);
  const active = activeExhaustion(current, report.endpoint, nowMs);
  if (active) return { state: current, blockedUntil: active };
  const strikes = (current.dailyLimitStrikes?.[report.endpoint] ?? 0) + 1;
  const untilMs =
    report.retryAfterMs !== undefined
      ? nowMs + report.retryAfterMs
      : Math.min(
          nowMs + FIRST_DAILY_LIMIT_BLOCK_MS * 2 ** Math.min(strikes - 1, 16),
          nextResetMs(nowMs, settings.resetMinuteUtc),
        );
  const blockedUntil = new Date(untilMs).toISOString();
  return {
    state: {
      ...current,
      exhaustedUntil: { ...current.exhaustedUntil, [report.endpoint]: blockedUntil },
      dailyLimitStrikes: { ...current.dailyLimitStrikes, [report.endpoint]: strikes },
    },
    blockedUntil,
  };
}

/** An operator lifts a block (one endpoint, or all): the next reservation is counted again. */
export function clearExhausted(
  state: LedgerState,
  settings: BudgetSettings,
  signal: ClearExhaustedSignal,
  nowMs: number,
): LedgerState {
  const current = rollover(state, settings, nowMs);
  if (signal.endpoint === undefined) return { ...current, exhaustedUntil: {}, dailyLimitStrikes: {} };
  const { [signal.endpoint]: _, ...exhaustedUntil } = current.exhaustedUntil;
  const { [signal.endpoint]: __, ...dailyLimitStrikes } = current.dailyLimitStrikes ?? {};
  return { ...current, exhaustedUntil, dailyLimitStrikes };
}

/** Why a clearExhausted signal is malformed, or undefined when it is fine. */
export function clearExhaustedSignalProblem(signal: unknown): string | undefined {
  if (typeof signal !== 'object' || signal === null) return 'clearExhausted expects { endpoint } or {}';
  const endpoint = (signal as Record<string, unknown>).endpoint;
  if (endpoint !== undefined && !isBudgetedEndpoint(endpoint)) {
    return `clearExhausted: endpoint must be one of ${BUDGETED_ENDPOINT_NAMES.join(', ')}, got ${JSON.stringify(endpoint)}`;
  }
  return undefined;
}

/** An operator's block; an earlier `until` than one already known is ignored (clear it first to shorten it). */
export function markExhausted(
  state: LedgerState,
  settings: BudgetSettings,
  signal: ExhaustedSignal,
  nowMs: number,
): LedgerState {
  const current = rollover(state, settings, nowMs);
  const untilMs = Date.parse(signal.until);
  if (Number.isNaN(untilMs) || untilMs <= nowMs) return current;
  const known = current.exhaustedUntil[signal.endpoint];
  if (known !== undefined && Date.parse(known) >= untilMs) return current;
  return {
    ...current,
    exhaustedUntil: { ...current.exhaustedUntil, [signal.endpoint]: new Date(untilMs).toISOString() },
  };
}

/** Why an exhausted signal is malformed, or undefined when it is fine. */
export function exhaustedSignalProblem(signal: unknown): string | undefined {
  if (typeof signal !== 'object' || signal === null) return 'exhausted expects { endpoint, until }';
  const s = signal as Record<string, unknown>;
  if (!isBudgetedEndpoint(s.endpoint)) {
    return `exhausted: endpoint must be one of ${BUDGETED_ENDPOINT_NAMES.join(', ')}, got ${JSON.stringify(s.endpoint)}`;
  }
  if (typeof s.until !== 'string' || Number.isNaN(Date.parse(s.until))) {
    return `exhausted: until must be an ISO timestamp, got ${JSON.stringify(s.until)}`;
  }
  return undefined;
}

export function usage(state: LedgerState, settings: BudgetSettings, nowMs: number): LedgerUsage {
  const current = rollover(state, settings, nowMs);
  const resetsAt = new Date(nextResetMs(nowMs, settings.resetMinuteUtc)).toISOString();
  const out = {} as LedgerUsage;
  for (const endpoint of BUDGETED_ENDPOINT_NAMES) {
    const used = current.used[endpoint] ?? 0;
    const limit = effectiveLimit(settings, endpoint);
    const entry: EndpointUsage = { used, limit, remaining: Math.max(0, limit - used), resetsAt };
    const held = heldInAllowances(current, endpoint);
    if (held > 0) entry.held = held;
    const exhaustedUntil = activeExhaustion(current, endpoint, nowMs);
    if (exhaustedUntil) entry.exhaustedUntil = exhaustedUntil;
    out[endpoint] = entry;
  }
  return out;
}

/** Of the calls counted as used, those granted to allowances not yet settled (spent or not). */
function heldInAllowances(state: LedgerState, endpoint: BudgetedEndpoint): number {
  let held = 0;
  for (const grant of Object.values(state.allowances ?? {})) held += grant.granted[endpoint] ?? 0;
  return held;
}

/**
 * A ledger that starts without counts takes what the service's own record
 * shows spent in its window, where that is more than it counted meanwhile.
 */
export function seedUsed(state: LedgerState, spent: Partial<Record<BudgetedEndpoint, number>>): LedgerState {
  const used = { ...state.used };
  for (const [endpoint, n] of Object.entries(spent)) used[endpoint] = Math.max(used[endpoint] ?? 0, n ?? 0);
  return { ...state, used };
}

/** The soonest instant after `nowMs` at which a block ends, if any block holds. */
export function nextBlockEndMs(state: LedgerState, nowMs: number): number | undefined {
  const ends = Object.values(state.exhaustedUntil)
    .map((until) => Date.parse(until))
    .filter((ms) => ms > nowMs);
  return ends.length > 0 ? Math.min(...ends) : undefined;
}

/** The instant the ledger's current window ends: when it must roll over. */
export function windowEndMs(state: LedgerState, settings: BudgetSettings): number {
  return nextResetMs(state.windowStartMs, settings.resetMinuteUtc);
}
