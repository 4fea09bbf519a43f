import { describe, expect, it } from 'vitest';
import { intervalAfterStart } from '../../src/policy/request-interval.js';

/** The interval after request starts at `times` (in order), starting at and counting gaps up to `longestGapMs`. */
function after(times: number[], longestGapMs = 7_500): number {
  let intervalMs = longestGapMs;
  let last: number | undefined;
  for (const at of times) {
    intervalMs = intervalAfterStart(intervalMs, last, at, longestGapMs);
    last = last === undefined ? at : Math.max(at, last);
  }
  return intervalMs;
}

describe('intervalAfterStart', () => {
  it('stays where it starts, the longest gap counted, until there is a gap', () => {
    expect(after([])).toBe(7_500);
    expect(after([1_000])).toBe(7_500);
    expect(intervalAfterStart(7_500, undefined, 1_000, 7_500)).toBe(7_500);
  });

  it('moves a quarter of the way to each gap', () => {
    // 7500, then a gap of 3500: 7500 - 4000 / 4 = 6500; then 2500: 6500 - 4000 / 4 = 5500; then 9500 counts 7500:
    // 5500 + 2000 / 4 = 6000.
    expect(after([1_000, 4_500])).toBe(6_500);
    expect(after([1_000, 4_500, 7_000])).toBe(5_500);
    expect(after([1_000, 4_500, 7_000, 16_500])).toBe(6_000);
  });

  it('comes down within a few dozen starts of a heavy client', () => {
    // 21 starts 50 ms apart: 50 + 7450 x 0.75^20 = 73.6...
    const starts = Array.from({ length: 21 }, (_, i) => i * 50);
    expect(after(starts)).toBeCloseTo(73.625, 2);
  });

  it('counts a long idle after a burst as the longest gap, once', () => {
    // 41 starts 10 ms apart bring 7500 down to 10 + 7490 x 0.75^40 = 10.07...; an hour idle then counts 7500:
    // 10.07 + 7489.93 / 4 = 1882.55.
    const burst = Array.from({ length: 41 }, (_, i) => i * 10);
    expect(after(burst)).toBeCloseTo(10.075, 2);
    expect(after([...burst, 3_600_400])).toBeCloseTo(1_882.55, 1);
  });

  it('counts requests started at the same time as a gap of 0, and never a negative one', () => {
    // 7500, then gaps of 0: 5625, 4218.75.
    expect(after([500, 500, 500])).toBe(4_218.75);
    // A start reported before the last is a gap of 0.
    expect(intervalAfterStart(7_500, 500, 400, 7_500)).toBe(5_625);
  });
});
