import { describe, expect, it } from 'vitest';
import { basePollDelayMs, DEFAULT_POLL_SCHEDULE_MS, pollDelayMs } from '../../workflows/poll-schedule.js';

describe('poll schedule', () => {
  it('follows the spec: 5 s, 10 s, 20 s, 40 s, then 60 s for every later poll', () => {
    expect([0, 1, 2, 3, 4, 5, 50].map((i) => basePollDelayMs(i))).toEqual([
      5_000, 10_000, 20_000, 40_000, 60_000, 60_000, 60_000,
    ]);
  });

  it('treats a negative or fractional index as the nearest valid poll', () => {
    expect(basePollDelayMs(-3)).toBe(5_000);
    expect(basePollDelayMs(1.9)).toBe(10_000);
  });

  it('only ever lengthens a delay with jitter, so polls stay at most once a minute', () => {
    expect(pollDelayMs(4, DEFAULT_POLL_SCHEDULE_MS, 0.2, () => 0)).toBe(60_000);
    expect(pollDelayMs(4, DEFAULT_POLL_SCHEDULE_MS, 0.2, () => 0.999999)).toBe(72_000);
    expect(pollDelayMs(0, DEFAULT_POLL_SCHEDULE_MS, 0.2, () => 0.5)).toBe(5_500);
  });

  it('refuses an empty schedule with a clear error', () => {
    expect(() => basePollDelayMs(0, [])).toThrow('poll schedule is empty');
  });
});
