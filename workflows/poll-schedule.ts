/**
 * When to poll an import job next. The spec suggests 5 s, 10 s, 20 s, 40 s,
 * then at most once every 60 s, with random jitter: the last delay repeats.
 * Jitter only ever lengthens a delay, so the 60 s ceiling on the poll rate holds.
 */
export const DEFAULT_POLL_SCHEDULE_MS = [5_000, 10_000, 20_000, 40_000, 60_000] as const;

export function basePollDelayMs(pollIndex: number, scheduleMs: readonly number[] = DEFAULT_POLL_SCHEDULE_MS): number {
  if (scheduleMs.length === 0) throw new Error('poll schedule is empty');
  const i = Math.min(Math.max(0, Math.floor(pollIndex)), scheduleMs.length - 1);
  return scheduleMs[i] as number;
}

/** The delay before poll number pollIndex (0-based), with `random()` in [0, 1); schedule and jitter come from configuration. */
export function pollDelayMs(
  pollIndex: number,
  scheduleMs: readonly number[],
  jitterRatio: number,
  random: () => number = Math.random,
): number {
  const base = basePollDelayMs(pollIndex, scheduleMs);
  return Math.round(base * (1 + jitterRatio * random()));
}
