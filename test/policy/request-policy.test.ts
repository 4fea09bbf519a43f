import { describe, expect, it } from 'vitest';
import { PolicyError } from '../../src/errors/policy-error.js';
import { defaultPolicy } from '../../src/policy/defaults.js';
import { definePolicy } from '../../src/policy/define-policy.js';
import { CLIENT_WIDE_FIELDS, layPolicy, REQUEST_POLICY_FIELDS } from '../../src/policy/request-policy.js';

/** The message `layPolicy` throws for `input` over `base`. */
const messageOf = (input: unknown, base = defaultPolicy, path = 'request.policy'): string => {
  try {
    layPolicy(base, input, path);
  } catch (error) {
    expect(error).toBeInstanceOf(PolicyError);
    return (error as Error).message;
  }
  throw new Error('no error');
};

describe('layPolicy: a route or request policy over a complete one', () => {
  it('the request policy is the six call-level parts; every other part of the policy is client-wide', () => {
    expect([...REQUEST_POLICY_FIELDS]).toEqual([
      'attempts',
      'budgetMs',
      'timeouts',
      'backoff',
      'retryableStatuses',
      'retryAfter',
    ]);
    expect(CLIENT_WIDE_FIELDS).toEqual([
      'retryBudget',
      'throttle',
      'idempotency',
      'attemptHeader',
      'health',
      'durable',
      'cache',
    ]);
  });

  it('takes what it leaves out from the base, field by field, and freezes the result', () => {
    const base = definePolicy({ attempts: { max: 5 }, backoff: { initialMs: 50, jitter: 'none' } });
    const laid = layPolicy(base, { backoff: { maxMs: 900 } }, 'policy');
    expect(laid).toEqual({ ...base, backoff: { ...base.backoff, maxMs: 900 } });
    expect(Object.isFrozen(laid) && Object.isFrozen(laid.backoff)).toBe(true);
    // The client-wide parts are the base's, unchanged.
    expect(laid.health).toEqual(base.health);
  });

  it('an empty policy gives a policy equal to the base', () => {
    const base = definePolicy({ budgetMs: 4_000, health: { failoverAfter: 9 } });
    expect(layPolicy(base, {}, 'policy')).toEqual(base);
  });

  it('a duration left out shrinks to fit a limit the request sets, as in definePolicy', () => {
    const laid = layPolicy(defaultPolicy, { budgetMs: 1_000 }, 'policy');
    expect(laid.timeouts).toMatchObject({ attemptMs: 1_000, connectMs: 1_000 });
  });

  it('a list replaces the base list whole', () => {
    expect(layPolicy(defaultPolicy, { retryableStatuses: [503] }, 'policy').retryableStatuses).toEqual([503]);
  });
});

describe('layPolicy: messages (request.policy.<path>)', () => {
  it('a value of the wrong kind', () => {
    expect(messageOf({ attempts: { max: 'three' } })).toBe(
      'request.policy.attempts.max: expected a number, got "three"',
    );
  });
  it('a number out of range', () => {
    expect(messageOf({ attempts: { max: 0 } })).toBe(
      'request.policy.attempts.max: expected a number >= 1, got 0',
    );
  });
  it('a fraction', () => {
    expect(messageOf({ budgetMs: 1.5 })).toBe('request.policy.budgetMs: expected an integer, got 1.5');
  });
  it('a status that is never retried', () => {
    expect(messageOf({ retryableStatuses: [503, 400] })).toBe(
      'request.policy.retryableStatuses[1]: 400 is never retried: sent again unchanged, the request fails the same way',
    );
  });
  it('a choice out of its list', () => {
    expect(messageOf({ backoff: { jitter: 'some' } })).toBe(
      'request.policy.backoff.jitter: expected "full", "equal", "decorrelated" or "none", got "some"',
    );
  });
  it('an unknown option', () => {
    expect(messageOf({ backof: {} })).toBe('request.policy.backof: unknown option');
  });
  it('an unknown option inside a group', () => {
    expect(messageOf({ timeouts: { readMs: 5 } })).toBe('request.policy.timeouts.readMs: unknown option');
  });
  it('a client-wide part, refused by name', () => {
    expect(messageOf({ health: { failoverAfter: 1 } })).toBe(
      "request.policy.health: client-wide: every request shares it, so only the client's policy sets it",
    );
  });
  it('a limit broken against the base', () => {
    expect(messageOf({ timeouts: { attemptMs: 20_000 } })).toBe(
      'request.policy.timeouts.attemptMs: must not exceed request.policy.budgetMs (10000), got 20000',
    );
  });
  it('not an object', () => {
    expect(messageOf(5)).toBe('request.policy: expected an object, got 5');
  });
  it('every problem at once, the client-wide ones first', () => {
    expect(messageOf({ attempts: { max: 0 }, retryBudget: {}, durable: {} })).toBe(
      [
        "request.policy.retryBudget: client-wide: every request shares it, so only the client's policy sets it",
        "request.policy.durable: client-wide: every request shares it, so only the client's policy sets it",
        'request.policy.attempts.max: expected a number >= 1, got 0',
      ].join('\n'),
    );
  });
  it('does not change the caller’s object', () => {
    const input = { health: {}, attempts: { max: 2 } };
    messageOf(input);
    expect(input).toEqual({ health: {}, attempts: { max: 2 } });
  });
});
