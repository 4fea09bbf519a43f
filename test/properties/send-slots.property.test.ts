// What this proves: whatever quota an origin's RateLimit field names (r remaining, reset in t seconds), and
// however many requests of one client ask for a send slot at whatever times before the reset (each with its own
// deadline, asking again for a booked slot or ending first), at most r of their attempts are let go to that
// origin before the reset; none waits past the reset for the quota; and after the reset (no RateLimit-Policy)
// the next attempt goes at once. With a 429 as well, every slot a request is told to wait for is one it can
// come back for: asked again at that time, it goes.
import { fc, test } from '@fast-check/vitest';
import { expect } from 'vitest';
import { createOriginThrottles } from '../../src/runtime/origin-throttles.js';
import { propertyRuns } from '../setup/property-runs.js';

const RUNS = 500;
/** The send rate and the quota alone: no quiet period after a throttle (quiet-period tests have their own). */
const options = { beta: 0.7, minRatePerSecond: 0.5, quietIntervals: 0, maxQuietMs: 30_000 };
/** `retryAfter.maxHoldMs`'s default. */
const MAX_HOLD_MS = 300_000;

const askArb = fc.record({
  request: fc.nat(9),
  afterMs: fc.nat(700),
  deadlineMs: fc.integer({ min: 1, max: 20_000 }),
  ends: fc.boolean(),
});

test.prop([fc.nat(20), fc.integer({ min: 1, max: 30 }), fc.boolean(), fc.array(askArb, { maxLength: 60 })], {
  numRuns: propertyRuns(RUNS),
})('no more attempts than the quota before its reset; a booked slot is kept', (r, t, throttled, asks) => {
  const throttles = createOriginThrottles(options, MAX_HOLD_MS);
  throttles.observe('api', throttled ? 429 : 200, new Headers({ ratelimit: `"q";r=${r};t=${t}` }), 0);
  const resetAt = t * 1000;
  let now = 0;
  let granted = 0;
  const booked = new Map<string, number>();
  for (const ask of asks) {
    now += ask.afterMs;
    if (now >= resetAt) break;
    const id = `r${ask.request}`;
    const wait = throttles.take('api', id, now, now + ask.deadlineMs);
    if (wait === undefined) {
      granted++;
      booked.delete(id);
      continue;
    }
    if (wait.holdBy === 'quota') expect(wait.holdUntil).toBe(resetAt);
    else {
      expect(wait.holdUntil).toBeGreaterThan(now);
      // A slot given before is the same slot when asked again before it.
      const before = booked.get(id);
      if (before !== undefined) expect(wait.holdUntil).toBe(before);
      if (wait.holdUntil < now + ask.deadlineMs) booked.set(id, wait.holdUntil);
    }
    if (ask.ends) {
      throttles.release(id);
      booked.delete(id);
    }
  }
  expect(granted).toBeLessThanOrEqual(r);
  // Past the reset nothing is known of the quota; with no 429, nothing else holds the attempt.
  if (!throttled) expect(throttles.take('api', 'late', resetAt, resetAt + 10_000)).toBeUndefined();
});
