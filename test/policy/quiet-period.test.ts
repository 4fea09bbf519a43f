import { describe, expect, it } from 'vitest';
import {
  isThrottle,
  longestCountedGapMs,
  quietCeilingMs,
  quietPeriodMs,
  quietUntil,
} from '../../src/policy/quiet-period.js';

const options = { quietIntervals: 4, maxQuietMs: 30_000 };

describe('quiet period', () => {
  it('lasts quietIntervals times the interval, whole ms rounded up', () => {
    expect(quietPeriodMs(5_000, options, 30_000)).toBe(20_000);
    expect(quietPeriodMs(50, options, 30_000)).toBe(200);
    expect(quietPeriodMs(0.1, options, 30_000)).toBe(1);
    expect(quietPeriodMs(1_250.2, { quietIntervals: 2.5, maxQuietMs: 30_000 }, 30_000)).toBe(3_126);
  });

  it('is cut to its ceiling, the smaller of maxQuietMs and retryAfter.maxHoldMs', () => {
    expect(quietCeilingMs(options, 300_000)).toBe(30_000);
    expect(quietCeilingMs(options, 10_000)).toBe(10_000);
    expect(quietPeriodMs(9_000, options, 30_000)).toBe(30_000);
    expect(quietPeriodMs(9_000, options, 10_000)).toBe(10_000);
  });

  it('is none with quietIntervals 0', () => {
    expect(quietPeriodMs(5_000, { quietIntervals: 0, maxQuietMs: 30_000 }, 30_000)).toBe(0);
  });

  it('ends that long after the last throttle, and is none before any', () => {
    expect(quietUntil(1_000, 5_000, options, 30_000)).toBe(21_000);
    expect(quietUntil(1_000, 50, options, 30_000)).toBe(1_200);
    expect(quietUntil(undefined, 5_000, options, 30_000)).toBe(0);
  });

  it('counts gaps up to the ceiling over the multiple, and every gap with the quiet period off', () => {
    expect(longestCountedGapMs(options, 30_000)).toBe(7_500);
    expect(longestCountedGapMs(options, 10_000)).toBe(2_500);
    expect(longestCountedGapMs({ quietIntervals: 0, maxQuietMs: 30_000 }, 30_000)).toBe(Infinity);
  });

  it('starts at a 429, and at any answer whose fields leave nothing remaining', () => {
    expect(isThrottle(429, undefined)).toBe(true);
    expect(isThrottle(200, { remaining: 0, resetAt: 5_000 })).toBe(true);
    expect(isThrottle(503, { remaining: 0, resetAt: 5_000 })).toBe(true);
    expect(isThrottle(200, { remaining: 1, resetAt: 5_000 })).toBe(false);
    expect(isThrottle(200, undefined)).toBe(false);
    // A 503, with or without Retry-After, is the server hold's (server-hold.ts), not a throttle of the send rate.
    expect(isThrottle(503, undefined)).toBe(false);
  });
});
