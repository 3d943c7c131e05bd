/**
 * The budget ledger's decisions as pure functions over its state: the entity
 * workflow serializes calls to them, and activity tests drive them from an
 * in-memory gate. No Temporal imports here, on purpose.
 *
 * A window's grants never exceed the effective limit: floor(limit * (1 -
 * headroom/100)). A retried reservation (same requestId, same window) gets its
 * first answer back and is not counted twice. After the service says 429 for
 * a daily limit (`markExhausted`), nothing is granted on that endpoint until
 * the instant it named, even if our count says there is room.
 */
import type { EndpointUsage } from './activity-contracts.js';
import type {
  BudgetSettings,
  ExhaustedSignal,
  LedgerState,
  LedgerUsage,
  ReserveRequest,
  ReserveResult,
} from './budget-contracts.js';
import { nextResetMs, windowStartMs } from './budget-window.js';
import { BUDGETED_ENDPOINT_NAMES, type BudgetedEndpoint, isBudgetedEndpoint } from './endpoints.js';

/**
 * Grants remembered for idempotency. A reservation is retried within seconds
 * or minutes of the first try, so the most recent grants suffice, and the
 * bound keeps the state carried across continue-as-new far below payload limits.
 */
export const MAX_ANSWERED = 2_000;
const REQUEST_ID_PATTERN = /^\S{1,256}$/u;

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

/** Why a reserve request is malformed, or undefined when it is fine. */
export function reserveRequestProblem(request: unknown): string | undefined {
  if (typeof request !== 'object' || request === null) return 'reserve expects { endpoint, requestId }';
  const r = request as Record<string, unknown>;
  if (!isBudgetedEndpoint(r.endpoint)) {
    return `reserve: endpoint must be one of ${BUDGETED_ENDPOINT_NAMES.join(', ')}, got ${JSON.stringify(r.endpoint)}`;
  }
  if (typeof r.requestId !== 'string' || !REQUEST_ID_PATTERN.test(r.requestId)) {
    return 'reserve: requestId must be 1-256 characters without whitespace';
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

  const resetsAt = new Date(nextResetMs(nowMs, settings.resetMinuteUtc)).toISOString();
  const exhaustedUntil = activeExhaustion(current, request.endpoint, nowMs);
  if (exhaustedUntil) return { state: current, result: { granted: false, resetsAt: exhaustedUntil } };

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

/** Records the service's own "daily limit reached"; an earlier `until` than one already known is ignored. */
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
    const exhaustedUntil = activeExhaustion(current, endpoint, nowMs);
    if (exhaustedUntil) entry.exhaustedUntil = exhaustedUntil;
    out[endpoint] = entry;
  }
  return out;
}

/** The instant the ledger's current window ends: when it must roll over. */
export function windowEndMs(state: LedgerState, settings: BudgetSettings): number {
  return nextResetMs(state.windowStartMs, settings.resetMinuteUtc);
}
