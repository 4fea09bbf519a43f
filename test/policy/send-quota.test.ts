import { describe, expect, it } from 'vitest';
import { mergeQuota, quotaAt, takeFromQuota } from '../../src/policy/send-quota.js';

describe('send quota (RateLimit fields)', () => {
  it('lets r attempts go before the reset, then none until it', () => {
    let quota = mergeQuota(undefined, { remaining: 2, resetAt: 5_000 }, 1_000);
    const first = takeFromQuota(quota, 1_000);
    expect(first).toEqual({ quota: { remaining: 1, resetAt: 5_000, policy: undefined } });
    quota = takeFromQuota(first.quota, 1_100).quota!;
    expect(quota.remaining).toBe(0);
    expect(takeFromQuota(quota, 4_999)).toEqual({ quota, waitUntil: 5_000 });
    // Past the reset, with no RateLimit-Policy, nothing is known: the attempt goes.
    expect(takeFromQuota(quota, 5_000)).toEqual({ quota: undefined });
  });

  it('starts a new window of q past the reset when RateLimit-Policy names one', () => {
    const quota = { remaining: 0, resetAt: 5_000, policy: { limit: 10, windowMs: 60_000 } };
    expect(quotaAt(quota, 5_000)).toEqual({ remaining: 10, resetAt: 65_000, policy: quota.policy });
    // Two windows on: 5000 + 2 * 60000.
    expect(quotaAt(quota, 70_000)).toEqual({ remaining: 10, resetAt: 125_000, policy: quota.policy });
    expect(takeFromQuota(quota, 5_000).quota).toEqual({
      remaining: 9,
      resetAt: 65_000,
      policy: quota.policy,
    });
  });

  it('keeps the smaller count within one window, and takes the server’s in a new one', () => {
    const ours = { remaining: 3, resetAt: 30_000 };
    // The same window (resets 400 ms apart): min(3, 8).
    expect(mergeQuota(ours, { remaining: 8, resetAt: 30_400 }, 1_000).remaining).toBe(3);
    expect(mergeQuota(ours, { remaining: 1, resetAt: 29_800 }, 1_000).remaining).toBe(1);
    // A new window: the server's count.
    expect(mergeQuota(ours, { remaining: 8, resetAt: 60_000 }, 1_000)).toEqual({
      remaining: 8,
      resetAt: 60_000,
      policy: undefined,
    });
  });
});
