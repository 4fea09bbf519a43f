/*
 * What this proves: for every valid backoff configuration (any jitter, 0 <= initialMs <= maxMs <= 2^31 - 1,
 * multiplier >= 1 up to absurd values), any retry number from 1 up to the largest safe integer, any previous
 * wait and any random() in [0, 1), `nextBackoff` returns an integer in [0, maxMs]. So a delay handed to a
 * timer is never NaN, negative, fractional or longer than the policy allows, however long a request retries.
 * It also proves the shape of each jitter: `none` never shrinks as retries grow, and `decorrelated` never
 * waits less than initialMs. fast-check prints the seed and path of any failure; replay it with
 * `{ seed, path }` in the parameters below.
 */
import { fc, test } from '@fast-check/vitest';
import { describe, expect } from 'vitest';
import { nextBackoff } from '../../src/policy/backoff.js';
import type { Policy } from '../../src/policy/policy.js';
import { MAX_TIMER_MS } from '../../src/policy/schema.js';

const durationMs = fc.oneof(fc.integer({ min: 0, max: 10_000 }), fc.integer({ min: 0, max: MAX_TIMER_MS }));

const backoffArb: fc.Arbitrary<Policy['backoff']> = fc
  .record({
    a: durationMs,
    b: durationMs,
    multiplier: fc.oneof(
      fc.double({ min: 1, max: 10, noNaN: true }),
      fc.double({ min: 1, max: 1e308, noNaN: true }),
    ),
    jitter: fc.constantFrom('full', 'equal', 'decorrelated', 'none'),
  })
  .map(({ a, b, multiplier, jitter }) => ({
    initialMs: Math.min(a, b),
    maxMs: Math.max(a, b),
    multiplier,
    jitter,
  }));

const retryArb = fc.oneof(
  fc.integer({ min: 1, max: 64 }),
  fc.integer({ min: 1, max: Number.MAX_SAFE_INTEGER }),
);
const previousArb = fc.option(fc.integer({ min: 0, max: MAX_TIMER_MS }), { nil: undefined });
const randomArb = fc.double({ min: 0, max: 1, maxExcluded: true, noNaN: true });

describe('nextBackoff', () => {
  test.prop([backoffArb, retryArb, previousArb, randomArb], { numRuns: 1000 })(
    'always returns an integer in [0, maxMs]',
    (backoff, retry, previous, random) => {
      const delay = nextBackoff(backoff, retry, previous, () => random);
      expect(Number.isInteger(delay)).toBe(true);
      expect(delay).toBeGreaterThanOrEqual(0);
      expect(delay).toBeLessThanOrEqual(backoff.maxMs);
    },
  );

  test.prop([backoffArb, retryArb, randomArb], { numRuns: 1000 })(
    'without jitter never waits less for a later retry',
    (backoff, retry, random) => {
      const none = { ...backoff, jitter: 'none' as const };
      expect(nextBackoff(none, retry + 1, undefined, () => random)).toBeGreaterThanOrEqual(
        nextBackoff(none, retry, undefined, () => random),
      );
    },
  );

  test.prop([backoffArb, retryArb, previousArb, randomArb], { numRuns: 1000 })(
    'with decorrelated jitter never waits less than initialMs',
    (backoff, retry, previous, random) => {
      const decorrelated = { ...backoff, jitter: 'decorrelated' as const };
      expect(nextBackoff(decorrelated, retry, previous, () => random)).toBeGreaterThanOrEqual(
        backoff.initialMs,
      );
    },
  );
});
