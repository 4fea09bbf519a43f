import { describe, expect, it } from 'vitest';
import { seededRandom } from '../../src/drill/seeded-random.js';
import { jitterDraw } from '../../src/policy/jitter-draw.js';

describe('jitterDraw', () => {
  it('draws the same numbers as the seeded generator of the same seed, one step at a time', () => {
    const random = seededRandom(42);
    let state = 42;
    for (let i = 0; i < 100; i++) {
      const { value, next } = jitterDraw(state);
      expect(value).toBe(random());
      state = next;
    }
  });

  it('gives numbers in [0, 1) from any state, and changes its state', () => {
    for (const state of [0, 1, 0x7fffffff, 0xffffffff]) {
      const { value, next } = jitterDraw(state);
      expect(value).toBeGreaterThanOrEqual(0);
      expect(value).toBeLessThan(1);
      expect(next).not.toBe(state);
      expect(Number.isInteger(next) && next >= 0 && next <= 0xffffffff).toBe(true);
    }
  });
});
