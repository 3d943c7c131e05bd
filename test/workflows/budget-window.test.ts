import { describe, expect, it } from 'vitest';
import { nextResetMs, windowId, windowStartMs } from '../../workflows/budget-window.js';

const at = (iso: string) => Date.parse(iso);
const iso = (ms: number) => new Date(ms).toISOString();

describe('budget windows (UTC)', () => {
  it('starts a midnight window at 00:00 UTC and ends it at the next midnight', () => {
    const now = at('2026-11-22T13:45:00Z');
    expect(iso(windowStartMs(now))).toBe('2026-11-22T00:00:00.000Z');
    expect(iso(nextResetMs(now))).toBe('2026-11-23T00:00:00.000Z');
    expect(windowId(now)).toBe('2026-11-22T00:00Z');
  });

  it('puts the last millisecond before midnight in the old window and midnight itself in the new one', () => {
    expect(windowId(at('2026-11-22T23:59:59.999Z'))).toBe('2026-11-22T00:00Z');
    expect(windowId(at('2026-11-23T00:00:00.000Z'))).toBe('2026-11-23T00:00Z');
  });

  it('crosses a month end', () => {
    expect(iso(nextResetMs(at('2026-11-30T18:00:00Z')))).toBe('2026-12-01T00:00:00.000Z');
    expect(iso(nextResetMs(at('2028-02-28T18:00:00Z')))).toBe('2028-02-29T00:00:00.000Z');
  });

  it('crosses a year end', () => {
    const now = at('2026-12-31T23:30:00Z');
    expect(windowId(now)).toBe('2026-12-31T00:00Z');
    expect(iso(nextResetMs(now))).toBe('2027-01-01T00:00:00.000Z');
  });

  it('with a 07:30 UTC reset, 03:00 belongs to the window that began yesterday at 07:30', () => {
    const reset = 7 * 60 + 30;
    const now = at('2027-01-01T03:00:00Z');
    expect(iso(windowStartMs(now, reset))).toBe('2026-12-31T07:30:00.000Z');
    expect(iso(nextResetMs(now, reset))).toBe('2027-01-01T07:30:00.000Z');
    expect(windowId(at('2027-01-01T07:30:00Z'), reset)).toBe('2027-01-01T07:30Z');
  });
});
