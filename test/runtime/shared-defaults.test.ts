/*
 * `defaultPolicy` and `systemClock` are exported and shared by every client: an app that
 * assigns to them must change nothing, not every client made afterwards.
 */
import { describe, expect, it } from 'vitest';
import { defaultPolicy, systemClock } from '../../src/index.js';
import { createFailoverClient } from '../../src/runtime/create-failover-client.js';

const origins = [{ id: 'primary', url: 'https://api.example.test' }];

describe('shared defaults', () => {
  it('defaultPolicy refuses assignments at every depth, and later clients keep the documented defaults', () => {
    expect(() => {
      (defaultPolicy as { budgetMs: number }).budgetMs = 1;
    }).toThrow(TypeError);
    expect(() => {
      (defaultPolicy.backoff as { maxMs: number }).maxMs = 1;
    }).toThrow(TypeError);
    expect(() => {
      (defaultPolicy.retryableStatuses as number[]).push(500);
    }).toThrow(TypeError);
    expect(() => {
      (defaultPolicy.health as { failoverAfter: number }).failoverAfter = 1;
    }).toThrow(TypeError);
    const { policy } = createFailoverClient({ origins });
    expect(policy.budgetMs).toBe(10_000);
    expect(policy.backoff.maxMs).toBe(5_000);
    expect(policy.retryableStatuses).toEqual([408, 429, 502, 503, 504]);
    expect(policy.health.failoverAfter).toBe(5);
  });

  it('systemClock refuses having its functions replaced', () => {
    const now = systemClock.now;
    expect(() => {
      (systemClock as { now: () => number }).now = () => 0;
    }).toThrow(TypeError);
    expect(() => {
      (systemClock as { setTimeout: unknown }).setTimeout = () => 0;
    }).toThrow(TypeError);
    expect(systemClock.now).toBe(now);
    expect(Object.isFrozen(systemClock)).toBe(true);
  });
});
