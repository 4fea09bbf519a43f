import { describe, expect, it } from 'vitest';
import { definePolicy } from '../../src/policy/define-policy.js';
import { defaultPolicy } from '../../src/policy/defaults.js';
import { PolicyError } from '../../src/errors/policy-error.js';

const messageFor = (input: unknown) => {
  try {
    definePolicy(input as never);
  } catch (error) {
    expect(error).toBeInstanceOf(PolicyError);
    return (error as Error).message;
  }
  throw new Error('expected a PolicyError');
};

describe('policy.health and policy.durable', () => {
  it('have the documented defaults', () => {
    expect(definePolicy().health).toEqual({
      suspectAfter: 2,
      recoverAfter: 1,
      failoverAfter: 5,
      failureRatio: 0.5,
      windowMs: 30_000,
      minRequests: 10,
      minFailedOverMs: 30_000,
      maxFailedOverMs: 300_000,
      probeSuccesses: 3,
      probeIntervalMs: 5_000,
      probeTimeoutMs: 5_000,
      reprobeAfterMs: 5_000,
      reprobeJitter: 'equal',
      failbackDwellMs: 30_000,
      dwellFailoverAfter: 10,
    });
    expect(definePolicy().durable).toEqual({
      backoff: 'exponential',
      initialMs: 10_000,
      maxMs: 18_000_000,
      jitter: 'full',
      maxAttempts: 1_000,
      maxAgeMs: 604_800_000,
      order: 'fifo',
      concurrency: 1,
      flushWaitMs: 5_000,
    });
    expect(Object.isFrozen(definePolicy().health)).toBe(true);
    expect(definePolicy(defaultPolicy)).toEqual(defaultPolicy);
  });

  it('merge field by field', () => {
    const policy = definePolicy({ health: { failoverAfter: 3 }, durable: { order: 'per-key' } });
    expect(policy.health).toMatchObject({ failoverAfter: 3, suspectAfter: 2, minFailedOverMs: 30_000 });
    expect(policy.durable).toMatchObject({ order: 'per-key', backoff: 'exponential' });
  });

  it.each<[unknown, string]>([
    [{ health: { failoverAfter: 0 } }, 'policy.health.failoverAfter: expected a number >= 1, got 0'],
    [{ health: { failureRatio: 0 } }, 'policy.health.failureRatio: expected a number > 0, got 0'],
    [{ health: { failureRatio: 1.5 } }, 'policy.health.failureRatio: expected a number <= 1, got 1.5'],
    [{ health: { minRequests: 2.5 } }, 'policy.health.minRequests: expected an integer, got 2.5'],
    [{ health: { probeTimeoutMs: 0 } }, 'policy.health.probeTimeoutMs: expected a number > 0, got 0'],
    [{ health: { probes: 3 } }, 'policy.health.probes: unknown option'],
    [{ health: { reprobeAfterMs: 0 } }, 'policy.health.reprobeAfterMs: expected a number > 0, got 0'],
    [
      { health: { reprobeJitter: 'decorrelated' } },
      'policy.health.reprobeJitter: expected "equal", "full" or "none", got "decorrelated"',
    ],
    [{ health: { failbackDwellMs: -1 } }, 'policy.health.failbackDwellMs: expected a number >= 0, got -1'],
    [{ health: { failbackDwellMs: 1.5 } }, 'policy.health.failbackDwellMs: expected an integer, got 1.5'],
    [
      { health: { dwellFailoverAfter: 0 } },
      'policy.health.dwellFailoverAfter: expected a number >= 1, got 0',
    ],
    [
      { health: { failoverAfter: 5, dwellFailoverAfter: 4 } },
      'policy.health.dwellFailoverAfter: must not be below policy.health.failoverAfter (5), got 4',
    ],
    [
      { health: { reprobeAfterMs: 60_000, maxFailedOverMs: 30_000 } },
      'policy.health.reprobeAfterMs: must not exceed policy.health.maxFailedOverMs (30000), got 60000',
    ],
    [
      { durable: { backoff: 'fibonacci' } },
      'policy.durable.backoff: expected "exponential" or "linear", got "fibonacci"',
    ],
    [{ durable: { order: 'lifo' } }, 'policy.durable.order: expected "fifo" or "per-key", got "lifo"'],
    [{ durable: { maxAttempts: 0 } }, 'policy.durable.maxAttempts: expected a number >= 1, got 0'],
    [{ durable: { concurrency: 101 } }, 'policy.durable.concurrency: expected a number <= 100, got 101'],
    [{ durable: { flushWaitMs: -1 } }, 'policy.durable.flushWaitMs: expected a number >= 0, got -1'],
    [{ durable: { flushWaitMs: '5000' } }, 'policy.durable.flushWaitMs: expected a number, got "5000"'],
    [
      { health: { suspectAfter: 6, failoverAfter: 5 } },
      'policy.health.suspectAfter: must not exceed policy.health.failoverAfter (5), got 6',
    ],
    [
      { health: { minFailedOverMs: 60_000, maxFailedOverMs: 30_000 } },
      'policy.health.minFailedOverMs: must not exceed policy.health.maxFailedOverMs (30000), got 60000',
    ],
    [
      { durable: { initialMs: 60_000, maxMs: 30_000 } },
      'policy.durable.initialMs: must not exceed policy.durable.maxMs (30000), got 60000',
    ],
  ])('refuses %j', (input, message) => {
    expect(messageFor(input)).toBe(message);
  });

  it('shrinks a default to fit under a limit you set', () => {
    expect(definePolicy({ health: { failoverAfter: 1 } }).health.suspectAfter).toBe(1);
    expect(definePolicy({ health: { maxFailedOverMs: 10_000 } }).health.minFailedOverMs).toBe(10_000);
    expect(definePolicy({ durable: { maxMs: 5_000 } }).durable.initialMs).toBe(5_000);
    expect(definePolicy({ health: { maxFailedOverMs: 3_000 } }).health.reprobeAfterMs).toBe(3_000);
  });

  it('raises dwellFailoverAfter, left out, to a failoverAfter you set above it', () => {
    expect(definePolicy({ health: { failoverAfter: 20 } }).health.dwellFailoverAfter).toBe(20);
    expect(definePolicy({ health: { failoverAfter: 3 } }).health.dwellFailoverAfter).toBe(10);
    expect(
      definePolicy({ health: { failoverAfter: 3, dwellFailoverAfter: 3 } }).health.dwellFailoverAfter,
    ).toBe(3);
  });

  it('accepts failbackDwellMs 0, which turns the dwell off', () => {
    expect(definePolicy({ health: { failbackDwellMs: 0 } }).health.failbackDwellMs).toBe(0);
  });

  it('still words the jitter choices as before', () => {
    expect(messageFor({ backoff: { jitter: 'some' } })).toBe(
      'policy.backoff.jitter: expected "full", "equal", "decorrelated" or "none", got "some"',
    );
  });
});
