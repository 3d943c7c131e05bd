import { describe, expect, it } from 'vitest';
import { guardBandAt, guardBandBeforeReset } from '../../../worker/cli/guard-band.js';

const RESET = '2026-11-28T00:00:00.000Z';
const at = (iso: string) => Date.parse(iso);

describe('guardBandAt', () => {
  it('holds in the last 5 minutes before the reset', () => {
    expect(guardBandAt(RESET, at('2026-11-27T23:55:00.000Z'))).toEqual({
      from: '2026-11-27T23:55:00.000Z',
      until: RESET,
    });
    expect(guardBandAt(RESET, at('2026-11-27T23:59:59.999Z'))).toEqual({
      from: '2026-11-27T23:55:00.000Z',
      until: RESET,
    });
  });

  it('does not hold before the band, at the reset, or for an unreadable instant', () => {
    expect(guardBandAt(RESET, at('2026-11-27T23:54:59.999Z'))).toBeUndefined();
    expect(guardBandAt(RESET, at(RESET))).toBeUndefined();
    expect(guardBandAt('soon', at('2026-11-27T23:57:00.000Z'))).toBeUndefined();
  });
});

describe('guardBandBeforeReset (what the demo checks before it starts its import)', () => {
  it('finds the band before a reset configured at 02:30 UTC', () => {
    expect(guardBandBeforeReset(150, at('2026-11-27T02:27:00.000Z'))).toEqual({
      from: '2026-11-27T02:25:00.000Z',
      until: '2026-11-27T02:30:00.000Z',
    });
    expect(guardBandBeforeReset(150, at('2026-11-27T02:31:00.000Z'))).toBeUndefined();
  });
});
