import { describe, expect, it } from 'vitest';
import { attemptsLeft, planRetryWait, timeLeftMs } from '../../src/policy/budget.js';

describe('timeLeftMs', () => {
  it.each([
    [1000, 10_000, 1000, 10_000],
    [1000, 10_000, 4000, 7000],
    [1000, 10_000, 11_000, 0],
    [1000, 10_000, 50_000, 0],
    [0, 0, 0, 0],
  ])('from %d with a budget of %d, at %d gives %d ms', (startedAt, budgetMs, now, expected) => {
    expect(timeLeftMs(startedAt, budgetMs, now)).toBe(expected);
  });
});

describe('attemptsLeft', () => {
  it.each([
    [3, 0, 3],
    [3, 2, 1],
    [3, 3, 0],
    [3, 5, 0],
  ])('with a max of %d after %d attempts gives %d', (max, used, expected) => {
    expect(attemptsLeft(max, used)).toBe(expected);
  });
});

describe('planRetryWait', () => {
  const plan = (
    backoffMs: number,
    retryAfterMs: number | undefined,
    timeLeftMs: number,
    retryAfterMaxMs = 60_000,
  ) => planRetryWait({ backoffMs, retryAfterMs, retryAfterMaxMs, timeLeftMs });

  it.each([
    ['the backoff when there is no Retry-After', 200, undefined, 5000, 200],
    ['the Retry-After when it is longer than the backoff', 200, 3000, 5000, 3000],
    ['the backoff when it is longer than the Retry-After', 800, 500, 5000, 800],
    ['the backoff for a Retry-After of 0', 200, 0, 5000, 200],
    ['no time for a zero backoff and no Retry-After', 0, undefined, 1, 0],
    ['just under the time left', 4999, undefined, 5000, 4999],
    ['a Retry-After equal to retryAfter.maxMs', 0, 60_000, 100_000, 60_000],
  ])('waits %s', (_, backoffMs, retryAfterMs, timeLeftMs, delayMs) => {
    expect(plan(backoffMs, retryAfterMs, timeLeftMs)).toEqual({ kind: 'wait', delayMs });
  });

  it.each([
    ['a Retry-After above retryAfter.maxMs', 200, 60_001, 100_000],
    ['a Retry-After above retryAfter.maxMs, even with no time left', 200, 60_001, 0],
    ['a Retry-After as long as the time left', 200, 5000, 5000],
    ['a Retry-After longer than the time left', 200, 6000, 5000],
    ['a Retry-After longer than the time left, with a longer backoff', 8000, 6000, 5000],
  ])('ends the request with retry-after-exceeds-budget for %s', (_, backoffMs, retryAfterMs, timeLeftMs) => {
    expect(plan(backoffMs, retryAfterMs, timeLeftMs)).toEqual({ kind: 'retry-after-exceeds-budget' });
  });

  it.each([
    ['a backoff as long as the time left', 5000, undefined, 5000],
    ['a backoff longer than the time left', 6000, undefined, 5000],
    ['a backoff longer than the time left and a short Retry-After', 6000, 100, 5000],
    ['no time left', 0, undefined, 0],
    ['no time left and a Retry-After of 0', 0, 0, 0],
  ])('ends the request with budget-exhausted for %s', (_, backoffMs, retryAfterMs, timeLeftMs) => {
    expect(plan(backoffMs, retryAfterMs, timeLeftMs)).toEqual({ kind: 'budget-exhausted' });
  });

  it('ends the request for any Retry-After when retryAfter.maxMs is 0', () => {
    expect(plan(0, 1, 10_000, 0)).toEqual({ kind: 'retry-after-exceeds-budget' });
    expect(plan(0, 0, 10_000, 0)).toEqual({ kind: 'wait', delayMs: 0 });
  });
});
