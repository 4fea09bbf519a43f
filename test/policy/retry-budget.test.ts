import { describe, expect, it } from 'vitest';
import { retrySlots } from '../../src/policy/retry-budget.js';

describe('retrySlots', () => {
  it.each([
    // percent, minConcurrency, active requests, slots
    [20, 3, 0, 3],
    [20, 3, 10, 3],
    [20, 3, 20, 4],
    [20, 3, 24, 4],
    [20, 3, 25, 5],
    [50, 0, 7, 3],
    [100, 1, 9, 9],
    // (29 / 100) * 100 would floor to 28
    [29, 0, 100, 29],
  ])(
    'gives %d %% with at least %d, for %d active requests, %d slots',
    (percent, minConcurrency, active, slots) => {
      expect(retrySlots({ percent, minConcurrency }, active)).toBe(slots);
    },
  );
});
