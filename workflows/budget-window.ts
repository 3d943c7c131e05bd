/**
 * Daily budget windows. A window starts at the reset time of day (UTC) and
 * lasts 24 hours; the spec resets export limits at midnight UTC and the import
 * reset time is unpublished, so it is configurable (minutes after midnight UTC).
 */
const DAY_MS = 86_400_000;
const MINUTE_MS = 60_000;

/** Start of the window containing `nowMs`. */
export function windowStartMs(nowMs: number, resetMinuteUtc = 0): number {
  const offset = resetMinuteUtc * MINUTE_MS;
  return Math.floor((nowMs - offset) / DAY_MS) * DAY_MS + offset;
}

/** The instant the window containing `nowMs` ends and the next begins. */
export function nextResetMs(nowMs: number, resetMinuteUtc = 0): number {
  return windowStartMs(nowMs, resetMinuteUtc) + DAY_MS;
}

/** A stable name for the window containing `nowMs`, e.g. 2026-11-22T00:00Z. */
export function windowId(nowMs: number, resetMinuteUtc = 0): string {
  return `${new Date(windowStartMs(nowMs, resetMinuteUtc)).toISOString().slice(0, 16)}Z`;
}
