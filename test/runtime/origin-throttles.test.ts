import { describe, expect, it } from 'vitest';
import { createOriginThrottles } from '../../src/runtime/origin-throttles.js';

/** The send rate and the quota alone: no quiet period after a throttle (quiet-period tests have their own). */
const options = { beta: 0.7, minRatePerSecond: 0.5, quietIntervals: 0, maxQuietMs: 30_000 };
/** `retryAfter.maxHoldMs`'s default. */
const MAX_HOLD_MS = 300_000;
const headers = (values: Record<string, string> = {}) => new Headers(values);

describe('createOriginThrottles', () => {
  it('sends at once until an origin throttles or names a quota', () => {
    const throttles = createOriginThrottles(options, MAX_HOLD_MS);
    expect(throttles.take('api', 'r1', 0, 10_000)).toBeUndefined();
    throttles.observe('api', 200, headers(), 10);
    expect(throttles.take('api', 'r2', 20, 10_000)).toBeUndefined();
  });

  it('books a slot for a request that can wait, hands it over when it comes back, and takes it back when it ends', () => {
    const throttles = createOriginThrottles(options, MAX_HOLD_MS);
    // The first answer is a 429: the bucket fills at 0.5 a second and starts with one token.
    throttles.observe('api', 429, headers(), 0);
    expect(throttles.take('api', 'r1', 0, 10_000)).toBeUndefined();
    // No token left: the next is 2 s away, booked for r2; r3's is 2 s after it.
    expect(throttles.take('api', 'r2', 0, 10_000)).toEqual({ holdUntil: 2_000, holdBy: 'rate' });
    expect(throttles.take('api', 'r3', 0, 10_000)).toEqual({ holdUntil: 4_000, holdBy: 'rate' });
    // r2 asks again before its slot: the same slot; at it, it goes.
    expect(throttles.take('api', 'r2', 1_000, 10_000)).toEqual({ holdUntil: 2_000, holdBy: 'rate' });
    expect(throttles.take('api', 'r2', 2_000, 10_000)).toBeUndefined();
    // r3 ends before its slot: its token goes back, so r4 at 2000 gets the slot r3 had (4000).
    throttles.release('r3');
    expect(throttles.take('api', 'r4', 2_000, 10_000)).toEqual({ holdUntil: 4_000, holdBy: 'rate' });
  });

  it('books nothing for a request whose slot comes after its deadline', () => {
    const throttles = createOriginThrottles(options, MAX_HOLD_MS);
    throttles.observe('api', 429, headers(), 0);
    throttles.take('api', 'r1', 0, 10_000);
    // Its slot (2000) is not before its deadline (2000): nothing booked, so r2 gets the same slot.
    expect(throttles.take('api', 'r1b', 0, 2_000)).toEqual({ holdUntil: 2_000, holdBy: 'rate' });
    expect(throttles.take('api', 'r2', 0, 10_000)).toEqual({ holdUntil: 2_000, holdBy: 'rate' });
  });

  it('holds every attempt until the reset once the RateLimit quota is spent, booked slot or not', () => {
    const throttles = createOriginThrottles(options, MAX_HOLD_MS);
    throttles.observe('api', 200, headers({ ratelimit: '"default";r=1;t=5' }), 0);
    expect(throttles.take('api', 'r1', 10, 10_000)).toBeUndefined();
    expect(throttles.take('api', 'r2', 20, 10_000)).toEqual({ holdUntil: 5_000, holdBy: 'quota' });
    // Past the reset, with no RateLimit-Policy, nothing is known: it goes.
    expect(throttles.take('api', 'r2', 5_000, 10_000)).toBeUndefined();
    // Another origin's quota is its own.
    expect(throttles.take('backup', 'r3', 20, 10_000)).toBeUndefined();
  });

  it('reads the fields of an origin that never sends them only on its throttles and one answer in sixteen', () => {
    const throttles = createOriginThrottles(options, MAX_HOLD_MS);
    // Sixteen answers with no field, read in full; the seventeenth is read as the one in sixteen.
    for (let i = 0; i < 17; i++) throttles.observe('api', 200, headers(), i);
    // The eighteenth is not read: its r=0 goes unseen.
    throttles.observe('api', 200, headers({ ratelimit: '"default";r=0;t=5' }), 100);
    expect(throttles.take('api', 'r1', 200, 10_000)).toBeUndefined();
    // A 429 is always read: its r=0 holds the origin until the reset, 5 s after it.
    throttles.observe('api', 429, headers({ ratelimit: '"default";r=0;t=5' }), 1_000);
    expect(throttles.take('api', 'r2', 1_000, 10_000)).toEqual({ holdUntil: 6_000, holdBy: 'quota' });
    // Once an answer had a field, every answer is read in full again.
    throttles.observe('api', 200, headers({ ratelimit: '"default";r=0;t=9' }), 7_000);
    expect(throttles.take('api', 'r3', 7_000, 20_000)).toEqual({ holdUntil: 16_000, holdBy: 'quota' });
  });

  it('reads every answer of the first sixteen, so a quota named on an early 200 is kept', () => {
    const throttles = createOriginThrottles(options, MAX_HOLD_MS);
    for (let i = 0; i < 15; i++) throttles.observe('api', 200, headers(), i);
    throttles.observe('api', 200, headers({ 'x-ratelimit-remaining': '0', 'x-ratelimit-reset': '3' }), 1_000);
    expect(throttles.take('api', 'r1', 1_000, 10_000)).toEqual({ holdUntil: 4_000, holdBy: 'quota' });
  });

  describe('the quiet period after a throttle (quietIntervals 4, at most 30 s: intervals start at 7.5 s)', () => {
    const quiet = { ...options, quietIntervals: 4 };

    it('holds every attempt until it ends, shortened by starts that show the client heavier, never lengthened', () => {
      const throttles = createOriginThrottles(quiet, MAX_HOLD_MS);
      // Starts at 0 and 5000: 7500, then 7500 - 2500 / 4 = 6875. A 429 at 5010: quiet 27500 ms, until 32510.
      throttles.start('api', 0);
      throttles.start('api', 5_000);
      throttles.observe('api', 429, headers(), 5_010);
      expect(throttles.take('api', 'r1', 5_020, 60_000)).toEqual({ holdUntil: 32_510, holdBy: 'quiet' });
      // A start 1000 ms later: 6875 - 5875 / 4 = 5406.25, so 21625 ms: until 26635.
      throttles.start('api', 6_000);
      expect(throttles.take('api', 'r2', 6_000, 60_000)).toEqual({ holdUntil: 26_635, holdBy: 'quiet' });
      // A gap of 14000 counts 7500: 5929.6875, 23719 ms, until 28729: later, so the end stays at 26635.
      throttles.start('api', 20_000);
      expect(throttles.take('api', 'r3', 20_000, 60_000)).toEqual({ holdUntil: 26_635, holdBy: 'quiet' });
      // At its end the attempt goes: the send rate's bucket, switched on by the 429, has its token.
      expect(throttles.take('api', 'r1', 26_635, 60_000)).toBeUndefined();
      // A new throttle starts a new one, by the interval then: 26700 + 23719.
      throttles.observe('api', 429, headers(), 26_700);
      expect(throttles.take('api', 'r2', 26_710, 60_000)).toEqual({ holdUntil: 50_419, holdBy: 'quiet' });
    });

    it('starts at an answer whose fields leave nothing remaining, after the quota’s own hold', () => {
      const throttles = createOriginThrottles(quiet, MAX_HOLD_MS);
      // Starts at 0 and 100: 7500 - 7400 / 4 = 5650, so the quiet period is 22600 ms, until 22710.
      throttles.start('api', 0);
      throttles.start('api', 100);
      throttles.observe('api', 200, headers({ ratelimit: '"default";r=0;t=1' }), 110);
      expect(throttles.take('api', 'r1', 120, 60_000)).toEqual({ holdUntil: 1_110, holdBy: 'quota' });
      expect(throttles.take('api', 'r1', 1_110, 60_000)).toEqual({ holdUntil: 22_710, holdBy: 'quiet' });
      expect(throttles.take('api', 'r1', 22_710, 60_000)).toBeUndefined();
    });

    it('is not started by one throttle before the client has a pace: a gap between two of its starts', () => {
      const throttles = createOriginThrottles(quiet, MAX_HOLD_MS);
      throttles.start('api', 0);
      throttles.observe('api', 200, headers({ ratelimit: '"default";r=0;t=1' }), 10);
      // Only the quota's own hold: none after its reset.
      expect(throttles.take('api', 'r1', 20, 60_000)).toEqual({ holdUntil: 1_010, holdBy: 'quota' });
      expect(throttles.take('api', 'r1', 1_010, 60_000)).toBeUndefined();
      // The second start gives it a pace (gap 2000: 7500 - 5500 / 4 = 6125); the next throttle starts one.
      throttles.start('api', 2_000);
      throttles.observe('api', 429, headers(), 2_010);
      expect(throttles.take('api', 'r2', 2_020, 60_000)).toEqual({ holdUntil: 26_510, holdBy: 'quiet' });
    });

    it('is started before the client has a pace by two throttles running, not by two with an answer between', () => {
      const throttles = createOriginThrottles(quiet, MAX_HOLD_MS);
      throttles.start('api', 0);
      throttles.observe('api', 429, headers(), 10);
      throttles.observe('api', 200, headers(), 300);
      throttles.observe('api', 429, headers(), 400);
      // Two throttles, a 200 between: none running twice, so no quiet period; the send rate's token is there.
      expect(throttles.take('api', 'r1', 500, 60_000)).toBeUndefined();
      // A second running (the 2xx's r=0 counts as one): quiet from 600 for 4 x 7500 ms, the interval it starts at.
      throttles.observe('api', 200, headers({ ratelimit: '"default";r=0;t=1' }), 600);
      expect(throttles.take('api', 'r2', 1_600, 60_000)).toEqual({ holdUntil: 30_600, holdBy: 'quiet' });
    });

    it('takes starts at the same instant (a burst at launch) for no pace: one throttle after them starts none', () => {
      const throttles = createOriginThrottles(quiet, MAX_HOLD_MS);
      for (let i = 0; i < 3; i++) throttles.start('api', 0);
      throttles.observe('api', 429, headers(), 10);
      // No quiet period; the 429 switched the send rate on, and its bucket has a token.
      expect(throttles.take('api', 'r1', 20, 60_000)).toBeUndefined();
      // The next start, 1 ms on, is a pace: the next throttle, one alone after a 200, starts one. Gaps 0, 0, 1:
      // 7500 -> 5625 -> 4218.75 -> 3164.3125, so 4 x that, 12658 ms, from 30.
      throttles.start('api', 1);
      throttles.observe('api', 200, headers(), 25);
      throttles.observe('api', 429, headers(), 30);
      expect(throttles.take('api', 'r2', 40, 60_000)).toEqual({ holdUntil: 12_688, holdBy: 'quiet' });
    });

    it('holds the request told when too, once the origin has throttled twice running', () => {
      const throttles = createOriginThrottles(quiet, MAX_HOLD_MS);
      throttles.start('api', 0);
      throttles.start('api', 5_000);
      // A 429 at 5010 starts quiet until 32510 (4 x 6875); the request it told when is not held by it.
      throttles.observe('api', 429, headers({ 'retry-after': '1' }), 5_010);
      expect(throttles.take('api', 'told', 6_010, 60_000, true)).toBeUndefined();
      // Its retry is refused again at 6020: now it waits for the quiet period like the client's other requests.
      throttles.observe('api', 429, headers({ 'retry-after': '1' }), 6_020);
      expect(throttles.take('api', 'told', 7_020, 60_000, true)).toEqual({
        holdUntil: 33_520,
        holdBy: 'quiet',
      });
    });

    it('does not hold a request the server told when to come back (its last answer named a Retry-After)', () => {
      const throttles = createOriginThrottles(quiet, MAX_HOLD_MS);
      throttles.start('api', 0);
      throttles.start('api', 5_000);
      // A 429 at 5010: quiet for 4 x 6875, until 32510, for every request but the one told when.
      throttles.observe('api', 429, headers(), 5_010);
      expect(throttles.take('api', 'other', 7_010, 60_000)).toEqual({ holdUntil: 32_510, holdBy: 'quiet' });
      // The 429 switched the send rate on: its bucket's one token goes to the request told when.
      expect(throttles.take('api', 'told', 7_010, 60_000, true)).toBeUndefined();
    });

    it('is never longer than retryAfter.maxHoldMs, and off with quietIntervals 0', () => {
      const short = createOriginThrottles(quiet, 2_000);
      // The ceiling is 2000 ms, so no gap counts over 500 and the interval stays at 500: quiet for 2000 ms.
      short.start('api', 0);
      short.start('api', 1_000);
      short.observe('api', 429, headers(), 1_010);
      expect(short.take('api', 'r1', 1_020, 60_000)).toEqual({ holdUntil: 3_010, holdBy: 'quiet' });
      const off = createOriginThrottles(options, MAX_HOLD_MS);
      off.start('api', 0);
      off.start('api', 100);
      off.observe('api', 200, headers({ ratelimit: '"default";r=0;t=1' }), 110);
      expect(off.take('api', 'r1', 1_110, 60_000)).toBeUndefined();
    });
  });
});
