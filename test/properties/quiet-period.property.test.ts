// What this proves: whatever the quiet-period options (quietIntervals, maxQuietMs, retryAfter.maxHoldMs), and
// whatever one client's request starts, answers (429s, 2xx with or without `r=0`) and asks for send slots to
// an origin, in any order over time: a quiet period is never negative and never longer than its ceiling,
// min(maxQuietMs, maxHoldMs), after the latest throttle; an attempt is held for it only after a throttle and
// before that ceiling; and once the ceiling has passed after the latest throttle, it holds no attempt. Before the
// client has a pace (two starts with a gap between), only a second throttle running starts one; and the request a
// Retry-After told when is held by one only once the origin has throttled twice running.
import { fc, test } from '@fast-check/vitest';
import { expect } from 'vitest';
import { quietPeriodMs } from '../../src/policy/quiet-period.js';
import { createOriginThrottles } from '../../src/runtime/origin-throttles.js';
import { propertyRuns } from '../setup/property-runs.js';

const RUNS = 500;

const optionsArb = fc.record({
  quietIntervals: fc.oneof(fc.constant(0), fc.double({ min: 0, max: 20, noNaN: true })),
  maxQuietMs: fc.integer({ min: 0, max: 120_000 }),
});

test.prop([fc.double({ min: 0, max: 1e9, noNaN: true }), optionsArb, fc.integer({ min: 0, max: 120_000 })], {
  numRuns: propertyRuns(RUNS),
})('the quiet period is never negative and never past its ceiling', (intervalMs, options, ceilingMs) => {
  const quiet = quietPeriodMs(intervalMs, options, ceilingMs);
  expect(quiet).toBeGreaterThanOrEqual(0);
  expect(quiet).toBeLessThanOrEqual(ceilingMs);
  expect(Number.isInteger(quiet)).toBe(true);
});

const stepArb = fc.record({
  afterMs: fc.nat(3_000),
  kind: fc.constantFrom('start', 'throttle', 'ok', 'spent', 'take'),
  request: fc.nat(5),
});

test.prop([optionsArb, fc.integer({ min: 0, max: 120_000 }), fc.array(stepArb, { maxLength: 80 })], {
  numRuns: propertyRuns(RUNS),
})(
  'an attempt is held quiet only after a throttle, and never past the ceiling',
  (options, maxHoldMs, steps) => {
    const ceiling = Math.min(options.maxQuietMs, maxHoldMs);
    const throttles = createOriginThrottles({ beta: 0.7, minRatePerSecond: 0.5, ...options }, maxHoldMs);
    let now = 0;
    let throttledAt: number | undefined;
    for (const step of steps) {
      now += step.afterMs;
      if (step.kind === 'start') throttles.start('api', now);
      else if (step.kind === 'throttle') {
        throttles.observe('api', 429, new Headers(), now);
        throttledAt = now;
      } else if (step.kind === 'spent') {
        throttles.observe('api', 200, new Headers({ ratelimit: '"q";r=0;t=1' }), now);
        throttledAt = now;
      } else if (step.kind === 'ok') throttles.observe('api', 200, new Headers(), now);
      else {
        const wait = throttles.take('api', `r${step.request}`, now, now + 60_000);
        if (wait?.holdBy !== 'quiet') continue;
        expect(throttledAt).toBeDefined();
        expect(wait.holdUntil).toBeGreaterThan(now);
        expect(wait.holdUntil).toBeLessThanOrEqual(throttledAt! + ceiling);
      }
    }
    // Past the ceiling after the latest throttle, nothing is quiet.
    if (throttledAt !== undefined) {
      const late = throttledAt + ceiling;
      expect(
        throttles.take('api', 'late', Math.max(late, now), Math.max(late, now) + 60_000)?.holdBy,
      ).not.toBe('quiet');
    }
  },
);

const paceStepArb = fc.record({
  // Often 0: starts at the same instant (a burst) are no pace.
  afterMs: fc.oneof(fc.constant(0), fc.nat(3_000)),
  kind: fc.constantFrom('start', 'throttle', 'ok', 'take', 'take-told'),
  request: fc.nat(5),
});

test.prop([fc.array(paceStepArb, { maxLength: 60 })], { numRuns: propertyRuns(RUNS) })(
  'before a pace one throttle holds nothing quiet, two running do; a request told when is held only after two running',
  (steps) => {
    const throttles = createOriginThrottles(
      { beta: 0.7, minRatePerSecond: 0.5, quietIntervals: 4, maxQuietMs: 30_000 },
      300_000,
    );
    let now = 0;
    /** The latest start, and whether two starts came with a gap of more than 0 ms between them (a pace). */
    let lastStartAt: number | undefined;
    let paced = false;
    /** 429s since the last other answer, and whether any throttle so far could start a quiet period. */
    let running = 0;
    let quietStarted = false;
    for (const [i, step] of steps.entries()) {
      now += step.afterMs;
      if (step.kind === 'start') {
        if (lastStartAt !== undefined && now > lastStartAt) paced = true;
        lastStartAt = now;
        throttles.start('api', now);
      } else if (step.kind === 'throttle') {
        running++;
        throttles.observe('api', 429, new Headers(), now);
        if (paced || running >= 2) {
          quietStarted = true;
          // It holds at once: a new request, and a request told when once two have come running.
          expect(throttles.take('api', `new${i}`, now, now + 60_000)?.holdBy).toBe('quiet');
          if (running >= 2)
            expect(throttles.take('api', `told${i}`, now, now + 60_000, true)?.holdBy).toBe('quiet');
        }
      } else if (step.kind === 'ok') {
        running = 0;
        throttles.observe('api', 200, new Headers(), now);
      } else {
        const told = step.kind === 'take-told';
        const wait = throttles.take('api', `r${step.request}`, now, now + 60_000, told);
        if (wait?.holdBy !== 'quiet') continue;
        expect(quietStarted).toBe(true);
        if (told) expect(running).toBeGreaterThanOrEqual(2);
      }
    }
  },
);
