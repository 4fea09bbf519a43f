import { describe, expect, it } from 'vitest';
import { holdReleaseAt } from '../../src/policy/hold-release.js';

describe('holdReleaseAt', () => {
  it('releases a shared hold at a jittered time within the spread after it ends', () => {
    expect(holdReleaseAt(3_000, undefined, 1_000, () => 0, 10_000)).toBe(3_000);
    expect(holdReleaseAt(3_000, undefined, 1_000, () => 0.5, 10_000)).toBe(3_500);
    expect(holdReleaseAt(3_000, 'quota', 1_000, () => 0.9999, 10_000)).toBe(3_999);
    // A client's quiet period after a throttle holds all its requests to the origin alike.
    expect(holdReleaseAt(3_000, 'quiet', 1_000, () => 0.5, 10_000)).toBe(3_500);
  });

  it('keeps a send slot of the request’s own, and a spread of 0', () => {
    expect(holdReleaseAt(3_000, 'rate', 1_000, () => 0.5, 10_000)).toBe(3_000);
    expect(holdReleaseAt(3_000, undefined, 0, () => 0.5, 10_000)).toBe(3_000);
  });

  it('never pushes a hold that ends within the budget past it', () => {
    // 400 ms left before the deadline: the spread shrinks to 399.
    expect(holdReleaseAt(9_600, undefined, 1_000, () => 0.9999, 10_000)).toBe(9_998);
    expect(holdReleaseAt(9_999, undefined, 1_000, () => 0.9999, 10_000)).toBe(9_999);
  });
});
