import { describe, expect, it } from 'vitest';
import { nextBackoff } from '../../src/policy/backoff.js';
import type { Policy } from '../../src/policy/policy.js';

const backoff = (
  jitter: Policy['backoff']['jitter'],
  overrides: Partial<Policy['backoff']> = {},
): Policy['backoff'] => ({
  initialMs: 200,
  maxMs: 5000,
  multiplier: 2,
  jitter,
  ...overrides,
});

describe('nextBackoff', () => {
  it.each([
    // retry, random, expected
    [1, 0, 0],
    [1, 0.5, 100],
    [1, 0.999, 199],
    [2, 0.5, 200],
    [3, 0.5, 400],
    [3, 0.999, 799],
    [10, 0.5, 2500],
    [10, 0.999, 4995],
  ])('with full jitter waits random * base (retry %d, random %d: %d ms)', (retry, random, expected) => {
    expect(nextBackoff(backoff('full'), retry, undefined, () => random)).toBe(expected);
  });

  it.each([
    [1, 0, 100],
    [1, 0.5, 150],
    [1, 0.999, 199],
    [3, 0, 400],
    [3, 0.5, 600],
    [10, 0, 2500],
    [10, 0.999, 4997],
  ])(
    'with equal jitter waits base / 2 + random * base / 2 (retry %d, random %d: %d ms)',
    (retry, random, expected) => {
      expect(nextBackoff(backoff('equal'), retry, undefined, () => random)).toBe(expected);
    },
  );

  it.each([
    [1, 200],
    [2, 400],
    [3, 800],
    [5, 3200],
    [6, 5000],
    [50, 5000],
  ])('without jitter waits the base (retry %d: %d ms)', (retry, expected) => {
    expect(nextBackoff(backoff('none'), retry, undefined, () => 0.5)).toBe(expected);
  });

  it.each([
    // previous, random, expected
    [undefined, 0, 200],
    [undefined, 0.5, 400],
    [undefined, 0.999, 599],
    [1000, 0, 200],
    [1000, 0.5, 1600],
    [1000, 0.999, 2997],
    [4000, 0.999, 5000],
    [0, 0.5, 200],
    [50, 0.999, 200],
  ])(
    'with decorrelated jitter waits min(maxMs, initialMs + random * (3 * previous - initialMs)) (previous %s, random %d: %d ms)',
    (previous, random, expected) => {
      expect(nextBackoff(backoff('decorrelated'), 7, previous, () => random)).toBe(expected);
    },
  );

  it('with decorrelated jitter ignores the retry number', () => {
    const waits = [1, 2, 30].map((retry) => nextBackoff(backoff('decorrelated'), retry, 1000, () => 0.25));
    expect(waits).toEqual([900, 900, 900]);
  });

  it.each(['full', 'equal', 'none', 'decorrelated'] as const)(
    'with %s jitter never waits longer than maxMs',
    (jitter) => {
      const capped = backoff(jitter, { initialMs: 1000, maxMs: 1500, multiplier: 10 });
      for (const retry of [1, 2, 3, 20]) {
        for (const random of [0, 0.5, 0.999]) {
          expect(nextBackoff(capped, retry, 1500, () => random)).toBeLessThanOrEqual(1500);
        }
      }
    },
  );

  it.each([
    ['a retry past the float range', backoff('none'), 1e6, 5000],
    ['the largest number as retry', backoff('none'), Number.MAX_VALUE, 5000],
    ['an infinite retry', backoff('none'), Infinity, 5000],
    ['a huge multiplier', backoff('none', { multiplier: 1e300 }), 3, 5000],
    ['a multiplier of 1 and an infinite retry', backoff('none', { multiplier: 1 }), Infinity, 200],
    ['an initialMs of 0 and an infinite retry', backoff('none', { initialMs: 0 }), Infinity, 0],
    ['full jitter and a huge retry', backoff('full'), 1e6, 2500],
    ['equal jitter and a huge retry', backoff('equal'), 1e6, 3750],
  ])('with %s still gives a finite wait within maxMs', (_, config, retry, expected) => {
    expect(nextBackoff(config, retry, undefined, () => 0.5)).toBe(expected);
  });

  it.each([
    [0, 'a retry of 0'],
    [-3, 'a negative retry'],
    [Number.NaN, 'a NaN retry'],
  ])('treats %s (%s) as the first retry', (retry) => {
    expect(nextBackoff(backoff('none'), retry, undefined, () => 0)).toBe(200);
  });

  it.each([
    [1, 200],
    [7, 200],
    [-0.5, 0],
    [Number.NaN, 0],
  ])('clamps a random() of %d outside [0, 1) into [0, 1] (%d ms)', (random, expected) => {
    expect(nextBackoff(backoff('full'), 1, undefined, () => random)).toBe(expected);
  });

  it('waits 0 ms when maxMs is 0', () => {
    for (const jitter of ['full', 'equal', 'none', 'decorrelated'] as const) {
      expect(nextBackoff(backoff(jitter, { initialMs: 0, maxMs: 0 }), 3, undefined, () => 0.7)).toBe(0);
    }
  });

  it('rounds down to a whole number of ms', () => {
    expect(nextBackoff(backoff('none', { initialMs: 3, multiplier: 1.5 }), 2, undefined, () => 0)).toBe(4);
  });

  it('calls random once per wait', () => {
    let calls = 0;
    nextBackoff(backoff('full'), 2, undefined, () => {
      calls++;
      return 0.3;
    });
    expect(calls).toBe(1);
  });
});
