import { describe, expect, it } from 'vitest';
import type { Failure } from '../../src/policy/failure.js';
import { holdEndsWithinBudget, holdUntilOf } from '../../src/policy/server-hold.js';

const failure = (status: number | undefined, retryAfterMs: number | undefined): Failure => ({
  class: status === 429 ? 'rate-limited' : status === undefined ? 'connect' : 'unavailable',
  requestSent: status === undefined ? 'no' : 'yes',
  origin: 'primary',
  ...(status === undefined ? {} : { status }),
  ...(retryAfterMs === undefined ? {} : { retryAfterMs }),
  message: 'test failure',
});

describe('holdUntilOf', () => {
  // A 429 or 503 with a Retry-After holds its origin until `at + Retry-After`, the whole wait.
  it.each([
    [429, 2_000, 1_000, 3_000],
    [503, 1, 5_000, 5_001],
    [503, 600_000, 0, 600_000],
  ])(
    'holds the origin after a %d with Retry-After %d ms heard at %d until %d',
    (status, retryAfterMs, at, until) => {
      expect(holdUntilOf(failure(status, retryAfterMs), at)).toBe(until);
    },
  );

  it.each([
    ['a 500, whose Retry-After speaks for one request only', 500, 2_000],
    ['a 502', 502, 2_000],
    ['a 404', 404, 2_000],
    ['a failure without a response', undefined, 2_000],
  ])('does not hold for %s', (_, status, retryAfterMs) => {
    expect(holdUntilOf(failure(status, retryAfterMs), 1_000)).toBeUndefined();
  });

  it.each([
    ['no Retry-After', undefined],
    ['a Retry-After of 0 ms', 0],
    ['a negative Retry-After', -5],
    ['a NaN Retry-After', Number.NaN],
  ])('does not hold for a 503 with %s', (_, retryAfterMs) => {
    expect(holdUntilOf(failure(503, retryAfterMs), 1_000)).toBeUndefined();
  });
});

describe('holdEndsWithinBudget', () => {
  // A request started at 1000 with a budget of 1000 ms ends at 2000: the hold must end strictly before that.
  it.each([
    [1_000, true],
    [1_500, true],
    [1_999, true],
    [2_000, false],
    [2_001, false],
  ])('for a request from 1000 ms with 1000 ms of budget, a hold until %d ms fits: %s', (holdUntil, fits) => {
    expect(holdEndsWithinBudget(holdUntil, 1_000, 1_000)).toBe(fits);
  });
});
