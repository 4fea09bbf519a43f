import { describe, expect, it } from 'vitest';

import { readsRateLimitFields } from '../../src/policy/rate-limit-reading.js';

describe('readsRateLimitFields', () => {
  it('reads every answer of the first sixteen without a field', () => {
    for (let n = 0; n < 16; n++) expect(readsRateLimitFields(n, 200)).toBe(true);
  });

  it('then reads one answer in sixteen, and every 429 and 503', () => {
    const read = [];
    for (let n = 16; n < 50; n++) if (readsRateLimitFields(n, 200)) read.push(n);
    expect(read).toEqual([16, 32, 48]);
    expect(readsRateLimitFields(17, 429)).toBe(true);
    expect(readsRateLimitFields(17, 503)).toBe(true);
    expect(readsRateLimitFields(17, 500)).toBe(false);
    expect(readsRateLimitFields(17, 204)).toBe(false);
  });
});
