/**
 * The guard band before a budget reset: the ledger grants no call in the last
 * minutes of a window (a call granted then could reach the service after its
 * window turned and count against the next one, which the ledger starts from
 * zero). Every import then waits for the reset with budget left, which looks
 * like a spent budget unless it is named.
 */
import { DEFAULT_STOP_GRANTING_BEFORE_RESET_MS } from '../../workflows/budget-ledger-state.js';
import { nextResetMs } from '../../workflows/budget-window.js';

export interface GuardBand {
  /** ISO instant the ledger stops granting. */
  from: string;
  /** ISO instant of the reset: grants resume. */
  until: string;
}

/** The guard band before the reset at `resetsAt`, when `nowMs` is inside it. */
export function guardBandAt(resetsAt: string, nowMs: number): GuardBand | undefined {
  const resetMs = Date.parse(resetsAt);
  if (Number.isNaN(resetMs)) return undefined;
  const fromMs = resetMs - DEFAULT_STOP_GRANTING_BEFORE_RESET_MS;
  if (nowMs < fromMs || nowMs >= resetMs) return undefined;
  return { from: new Date(fromMs).toISOString(), until: resetsAt };
}

/** The guard band before the next reset of a window that resets `resetMinuteUtc` after midnight UTC, when `nowMs` is in it. */
export function guardBandBeforeReset(resetMinuteUtc: number, nowMs: number): GuardBand | undefined {
  return guardBandAt(new Date(nextResetMs(nowMs, resetMinuteUtc)).toISOString(), nowMs);
}

const GUARD_MINUTES = DEFAULT_STOP_GRANTING_BEFORE_RESET_MS / 60_000;

/** e.g. "the ledger grants no call in the last 5 min before the reset at …, with budget left: …". */
export function guardBandText(band: GuardBand): string {
  return (
    `the ledger grants no call in the last ${GUARD_MINUTES} min before the daily reset at ${band.until}, ` +
    'budget left or not (a call then could count against the next window); imports go on at the reset'
  );
}
