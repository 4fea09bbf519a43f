import { describe, expect, it } from 'vitest';
import { defaultPolicy } from '../../src/policy/defaults.js';
import {
  spreadMs,
  deadBeforeSend,
  durableBackoffMs,
  durableExpiresAt,
  durableVerdict,
  nextDurableAttemptAt,
  wakesWhenOnline,
} from '../../src/policy/durable-backoff.js';
import type { Failure, FailureClass } from '../../src/policy/failure.js';
import type { DurablePolicy } from '../../src/policy/policy.js';

const durable = (overrides: Partial<DurablePolicy> = {}): DurablePolicy => ({
  ...defaultPolicy.durable,
  ...overrides,
});

const failure = (failureClass: FailureClass, requestSent: Failure['requestSent'] = 'no'): Failure => ({
  class: failureClass,
  requestSent,
  origin: 'primary',
  message: 'test',
});

describe('durableBackoffMs', () => {
  it.each([
    [1, 10_000],
    [2, 20_000],
    [3, 40_000],
    [4, 80_000],
    [10, 5_120_000],
    [11, 10_240_000],
    [12, 18_000_000],
    [40, 18_000_000],
  ])(
    'waits initialMs * 2^(n-1), up to maxMs, when exponential (attempts %d: %d ms)',
    (attempts, expected) => {
      expect(durableBackoffMs(durable(), attempts)).toBe(expected);
    },
  );

  it.each([
    [1, 10_000],
    [2, 20_000],
    [3, 30_000],
    [10, 100_000],
    [1_800, 18_000_000],
    [5_000, 18_000_000],
  ])('waits initialMs * n, up to maxMs, when linear (attempts %d: %d ms)', (attempts, expected) => {
    expect(durableBackoffMs(durable({ backoff: 'linear' }), attempts)).toBe(expected);
  });

  it('counts fewer than one attempt, or no number, as one', () => {
    for (const attempts of [0, -3, 0.5, Number.NaN])
      expect(durableBackoffMs(durable(), attempts)).toBe(10_000);
  });

  it('caps a power too large for a number at maxMs', () => {
    expect(durableBackoffMs(durable(), 5_000)).toBe(18_000_000);
    expect(durableBackoffMs(durable({ maxMs: 2_147_483_647 }), Number.MAX_SAFE_INTEGER)).toBe(2_147_483_647);
  });

  it('never waits less than initialMs nor more than maxMs', () => {
    const policy = durable({ initialMs: 300, maxMs: 1_000 });
    expect([1, 2, 3, 4, 5].map((n) => durableBackoffMs(policy, n))).toEqual([300, 600, 1_000, 1_000, 1_000]);
  });
});

describe('nextDurableAttemptAt', () => {
  it('is now plus the backoff', () => {
    expect(nextDurableAttemptAt(durable(), 3, 1_000)).toBe(41_000);
  });

  it('is never sooner than a Retry-After', () => {
    expect(nextDurableAttemptAt(durable(), 1, 1_000, 60_000)).toBe(61_000);
    expect(nextDurableAttemptAt(durable(), 1, 1_000, 5_000)).toBe(11_000);
  });

  it('reads a Retry-After that is not a number of ms as none: the backoff alone', () => {
    expect(nextDurableAttemptAt(durable(), 1, 1_000, Number.NaN)).toBe(11_000);
    expect(nextDurableAttemptAt(durable(), 1, 1_000, -5_000)).toBe(11_000);
  });

  it('honours a Retry-After longer than maxMs', () => {
    expect(nextDurableAttemptAt(durable({ maxMs: 20_000 }), 5, 0, 3_600_000)).toBe(3_600_000);
  });

  it('ignores a Retry-After of zero or less', () => {
    expect(nextDurableAttemptAt(durable(), 1, 0, 0)).toBe(10_000);
    expect(nextDurableAttemptAt(durable(), 1, 0, -5)).toBe(10_000);
  });
});

describe('deadBeforeSend', () => {
  it('lets an entry with attempts left and within its age be sent', () => {
    expect(deadBeforeSend(durable(), { attempts: 9, createdAt: 0 }, 604_799_999)).toBeUndefined();
  });

  it('dead-letters an entry that has used maxAttempts attempts', () => {
    expect(deadBeforeSend(durable({ maxAttempts: 10 }), { attempts: 10, createdAt: 0 }, 0)).toBe(
      'attempts-exhausted',
    );
    expect(deadBeforeSend(durable(), { attempts: 999, createdAt: 0 }, 0)).toBeUndefined();
    expect(deadBeforeSend(durable(), { attempts: 1_000, createdAt: 0 }, 0)).toBe('attempts-exhausted');
  });

  it('dead-letters an entry maxAgeMs old', () => {
    expect(deadBeforeSend(durable(), { attempts: 0, createdAt: 5 }, 604_800_005)).toBe('expired');
    expect(durableExpiresAt(durable(), 5)).toBe(604_800_005);
  });
});

describe('durableVerdict', () => {
  const retryable = { retryable: true };

  it('retries at the backoff after a retryable failure', () => {
    expect(durableVerdict(durable(), { attempts: 2, createdAt: 0 }, 1_000, retryable)).toEqual({
      verdict: 'retry',
      nextAttemptAt: 21_000,
      delayMs: 20_000,
    });
  });

  it('retries no sooner than the Retry-After', () => {
    expect(
      durableVerdict(durable(), { attempts: 1, createdAt: 0 }, 0, { retryable: true, retryAfterMs: 120_000 }),
    ).toEqual({ verdict: 'retry', nextAttemptAt: 120_000, delayMs: 120_000 });
  });

  it('dead-letters a failure that is not retryable', () => {
    expect(durableVerdict(durable(), { attempts: 1, createdAt: 0 }, 0, { retryable: false })).toEqual({
      verdict: 'dead',
      reason: 'not-retryable',
    });
  });

  it('dead-letters once attempts reach maxAttempts', () => {
    expect(durableVerdict(durable({ maxAttempts: 3 }), { attempts: 3, createdAt: 0 }, 0, retryable)).toEqual({
      verdict: 'dead',
      reason: 'attempts-exhausted',
    });
    expect(
      durableVerdict(durable({ maxAttempts: 3 }), { attempts: 2, createdAt: 0 }, 0, retryable).verdict,
    ).toBe('retry');
  });

  it('dead-letters once the entry is maxAgeMs old', () => {
    const policy = durable({ maxAgeMs: 60_000 });
    expect(durableVerdict(policy, { attempts: 1, createdAt: 0 }, 60_000, retryable)).toEqual({
      verdict: 'dead',
      reason: 'expired',
    });
    expect(durableVerdict(policy, { attempts: 1, createdAt: 0 }, 59_999, retryable).verdict).toBe('retry');
  });

  it('names not-retryable first, then attempts-exhausted, then expired', () => {
    const policy = durable({ maxAttempts: 1, maxAgeMs: 1 });
    const entry = { attempts: 5, createdAt: 0 };
    expect(durableVerdict(policy, entry, 10, { retryable: false })).toEqual({
      verdict: 'dead',
      reason: 'not-retryable',
    });
    expect(durableVerdict(policy, entry, 10, retryable)).toEqual({
      verdict: 'dead',
      reason: 'attempts-exhausted',
    });
  });
});

describe('wakesWhenOnline', () => {
  it.each(['offline', 'dns', 'connect', 'connect-timeout'] as const)(
    'ends the wait of a %s failure that reached no server',
    (failureClass) => {
      expect(wakesWhenOnline(failure(failureClass))).toBe(true);
    },
  );

  it('keeps the wait of a failure the server answered or may have seen', () => {
    expect(wakesWhenOnline({ ...failure('unavailable', 'yes'), status: 503 })).toBe(false);
    expect(wakesWhenOnline(failure('response-timeout', 'unknown'))).toBe(false);
    expect(wakesWhenOnline(failure('tls'))).toBe(false);
  });

  it('keeps a wait the server asked for', () => {
    expect(wakesWhenOnline(failure('connect'), 5_000)).toBe(false);
    expect(wakesWhenOnline({ ...failure('connect'), retryAfterMs: 5_000 })).toBe(false);
  });

  it('keeps the wait of a network-path failure that may have reached a server', () => {
    // A connect error after bytes went out (the transport says `unknown`): the server may have seen it.
    expect(wakesWhenOnline(failure('connect', 'unknown'))).toBe(false);
    expect(wakesWhenOnline(failure('dns', 'yes'))).toBe(false);
  });

  it('reads a Retry-After of 0 as no wait asked for', () => {
    expect(wakesWhenOnline(failure('offline'), 0)).toBe(true);
    expect(wakesWhenOnline({ ...failure('offline'), retryAfterMs: 0 })).toBe(true);
  });
});

describe('spreadMs (policy.durable.jitter)', () => {
  it('spreads a wait by the draw: full up to it, equal from half of it, none not at all', () => {
    expect([0, 0.25, 0.999].map((r) => spreadMs(40_000, 'full', r))).toEqual([0, 10_000, 39_960]);
    expect([0, 0.25, 0.999].map((r) => spreadMs(40_000, 'equal', r))).toEqual([20_000, 25_000, 39_980]);
    expect(spreadMs(40_000, 'none', 0.25)).toBe(40_000);
  });

  it('waits exactly without a draw in [0, 1), and never less than a Retry-After', () => {
    for (const random of [undefined, -0.1, 1, Number.NaN])
      expect(spreadMs(40_000, 'full', random)).toBe(40_000);
    const policy = durable({ jitter: 'full' });
    expect(nextDurableAttemptAt(policy, 3, 1_000, undefined, 0.5)).toBe(1_000 + 20_000);
    expect(nextDurableAttemptAt(policy, 3, 1_000, 30_000, 0.5)).toBe(1_000 + 30_000);
    expect(
      durableVerdict(policy, { attempts: 3, createdAt: 0 }, 1_000, { retryable: true, random: 0.1 }),
    ).toEqual({
      verdict: 'retry',
      nextAttemptAt: 5_000,
      delayMs: 4_000,
    });
  });
});
