import { describe, expect, it } from 'vitest';
import { PolicyError } from '../../src/errors/policy-error.js';
import { defaultPolicy } from '../../src/policy/defaults.js';
import { definePolicy, type DefinePolicyOptions } from '../../src/policy/define-policy.js';
import type { PolicyInput } from '../../src/policy/policy.js';

/** The PolicyError `definePolicy` throws for `input` (an `unknown`, as a JavaScript caller may pass anything). */
function errorFor(input: unknown, options?: DefinePolicyOptions): PolicyError {
  try {
    definePolicy(input as PolicyInput, options);
  } catch (error) {
    if (error instanceof PolicyError) return error;
    throw error;
  }
  throw new Error(`definePolicy accepted ${JSON.stringify(input)}`);
}

function isDeeplyFrozen(value: unknown): boolean {
  if (typeof value !== 'object' || value === null) return true;
  return Object.isFrozen(value) && Object.values(value).every(isDeeplyFrozen);
}

describe('definePolicy', () => {
  it('gives the defaults when called without a policy', () => {
    expect(definePolicy()).toEqual(defaultPolicy);
    expect(definePolicy({})).toEqual(defaultPolicy);
  });

  it('has the defaults the contract names', () => {
    const policy = definePolicy();
    expect(policy.attempts.max).toBe(3);
    expect(policy.budgetMs).toBe(10_000);
    expect(policy.retryableStatuses).toEqual([408, 429, 502, 503, 504]);
    expect(policy.backoff.jitter).toBe('full');
  });

  it('merges nested options field by field over the defaults', () => {
    const policy = definePolicy({ backoff: { maxMs: 2000 }, timeouts: { connectMs: 1000 } });
    expect(policy.backoff).toEqual({ ...defaultPolicy.backoff, maxMs: 2000 });
    expect(policy.timeouts).toEqual({ attemptMs: 5000, connectMs: 1000, idleMs: 60_000 });
    expect(policy.attempts).toEqual(defaultPolicy.attempts);
  });

  it('replaces arrays and scalars whole', () => {
    const policy = definePolicy({ retryableStatuses: [503], attemptHeader: 'x-attempt', budgetMs: 30_000 });
    expect(policy.retryableStatuses).toEqual([503]);
    expect(policy.attemptHeader).toBe('x-attempt');
    expect(policy.budgetMs).toBe(30_000);
  });

  it('turns the throttle off with false, and fills in the rest of a throttle given in part', () => {
    expect(definePolicy({ throttle: false }).throttle).toBe(false);
    expect(definePolicy({ throttle: { beta: 0.5 } }).throttle).toEqual({
      beta: 0.5,
      minRatePerSecond: 0.5,
      quietIntervals: 4,
      maxQuietMs: 30_000,
    });
    expect(definePolicy().throttle).toEqual({
      beta: 0.7,
      minRatePerSecond: 0.5,
      quietIntervals: 4,
      maxQuietMs: 30_000,
    });
    expect(definePolicy({ throttle: { quietIntervals: 0 } }).throttle).toMatchObject({ quietIntervals: 0 });
    expect(definePolicy().retryAfter).toEqual({ maxMs: 60_000, maxHoldMs: 300_000, releaseSpreadMs: 1_000 });
    // Laid over a base that turned it off: off stays off, and a throttle given is completed from the defaults.
    const off = definePolicy({ throttle: false });
    expect(definePolicy({}, { base: off }).throttle).toBe(false);
    expect(definePolicy({ throttle: { minRatePerSecond: 2 } }, { base: off }).throttle).toEqual({
      beta: 0.7,
      minRatePerSecond: 2,
      quietIntervals: 4,
      maxQuietMs: 30_000,
    });
  });

  it('treats an option set to undefined as left out', () => {
    const input = { budgetMs: undefined, backoff: { jitter: undefined } } as unknown as PolicyInput;
    expect(definePolicy(input)).toEqual(defaultPolicy);
  });

  it('accepts an empty list of retryable statuses', () => {
    expect(definePolicy({ retryableStatuses: [] }).retryableStatuses).toEqual([]);
  });

  it('returns a deeply frozen policy', () => {
    const policy = definePolicy({ backoff: { jitter: 'none' } });
    expect(isDeeplyFrozen(policy)).toBe(true);
    expect(() => {
      (policy.backoff as { maxMs: number }).maxMs = 1;
    }).toThrow(TypeError);
  });

  it('copies arrays rather than keeping or freezing the caller’s', () => {
    const statuses = [429, 503];
    const policy = definePolicy({ retryableStatuses: statuses });
    statuses.push(500);
    expect(policy.retryableStatuses).toEqual([429, 503]);
    expect(Object.isFrozen(statuses)).toBe(false);
  });

  it('does not freeze or change the caller’s objects', () => {
    const input = { backoff: { maxMs: 100 } };
    definePolicy(input);
    expect(input).toEqual({ backoff: { maxMs: 100 } });
    expect(Object.isFrozen(input.backoff)).toBe(false);
  });

  it('gives an equal policy back for a complete policy', () => {
    const policy = definePolicy({ attempts: { max: 5 }, backoff: { jitter: 'decorrelated', maxMs: 800 } });
    expect(definePolicy(policy)).toEqual(policy);
    expect(definePolicy(defaultPolicy)).toEqual(defaultPolicy);
  });

  describe('when a limit is set and the duration under it is left out', () => {
    it.each([
      [{ budgetMs: 2000 }, { budgetMs: 2000, timeouts: { attemptMs: 2000, connectMs: 2000 } }],
      [{ budgetMs: 4000 }, { budgetMs: 4000, timeouts: { attemptMs: 4000, connectMs: 3000 } }],
      [{ timeouts: { attemptMs: 1000 } }, { timeouts: { attemptMs: 1000, connectMs: 1000 } }],
      [{ budgetMs: 2000, timeouts: { connectMs: 500 } }, { timeouts: { attemptMs: 2000, connectMs: 500 } }],
      [{ backoff: { maxMs: 100 } }, { backoff: { initialMs: 100, maxMs: 100 } }],
      [{ backoff: { maxMs: 0 } }, { backoff: { initialMs: 0, maxMs: 0 } }],
    ])('shrinks the default to fit (%j)', (input, expected) => {
      expect(definePolicy(input)).toMatchObject(expected);
    });

    it('never loosens a limit to fit a value you set', () => {
      expect(errorFor({ timeouts: { attemptMs: 20_000 } }).message).toBe(
        'policy.timeouts.attemptMs: must not exceed policy.budgetMs (10000), got 20000',
      );
    });
  });

  describe('refusing a bad field', () => {
    it.each<[string, unknown, string]>([
      ['attempts.max', { attempts: { max: 0 } }, 'policy.attempts.max: expected a number >= 1, got 0'],
      ['attempts.max', { attempts: { max: 101 } }, 'policy.attempts.max: expected a number <= 100, got 101'],
      ['attempts.max', { attempts: { max: 2.5 } }, 'policy.attempts.max: expected an integer, got 2.5'],
      ['attempts.max', { attempts: { max: '3' } }, 'policy.attempts.max: expected a number, got "3"'],
      ['attempts', { attempts: 3 }, 'policy.attempts: expected an object, got 3'],
      ['budgetMs', { budgetMs: 0 }, 'policy.budgetMs: expected a number > 0, got 0'],
      ['budgetMs', { budgetMs: -5 }, 'policy.budgetMs: expected a number > 0, got -5'],
      ['budgetMs', { budgetMs: Number.NaN }, 'policy.budgetMs: expected a finite number, got NaN'],
      ['budgetMs', { budgetMs: Infinity }, 'policy.budgetMs: expected a finite number, got Infinity'],
      [
        'budgetMs',
        { budgetMs: 3_000_000_000 },
        'policy.budgetMs: expected a number <= 2147483647 (the longest delay a timer can wait), got 3000000000',
      ],
      ['budgetMs', { budgetMs: null }, 'policy.budgetMs: expected a number, got null'],
      ['budgetMs', { budgetMs: 10n }, 'policy.budgetMs: expected a number, got 10n'],
      [
        'timeouts.attemptMs',
        { timeouts: { attemptMs: 0 } },
        'policy.timeouts.attemptMs: expected a number > 0, got 0',
      ],
      [
        'timeouts.connectMs',
        { timeouts: { connectMs: 1.5 } },
        'policy.timeouts.connectMs: expected an integer, got 1.5',
      ],
      [
        'timeouts.idleMs',
        { timeouts: { idleMs: 0 } },
        'policy.timeouts.idleMs: expected a number > 0, got 0',
      ],
      [
        'timeouts.idleMs',
        { timeouts: { idleMs: '30s' } },
        'policy.timeouts.idleMs: expected a number, got "30s"',
      ],
      ['timeouts', { timeouts: [] }, 'policy.timeouts: expected an object, got an array'],
      [
        'backoff.initialMs',
        { backoff: { initialMs: -1 } },
        'policy.backoff.initialMs: expected a number >= 0, got -1',
      ],
      [
        'backoff.maxMs',
        { backoff: { maxMs: 'long' } },
        'policy.backoff.maxMs: expected a number, got "long"',
      ],
      [
        'backoff.multiplier',
        { backoff: { multiplier: 0.5 } },
        'policy.backoff.multiplier: expected a number >= 1, got 0.5',
      ],
      [
        'backoff.jitter',
        { backoff: { jitter: 'random' } },
        'policy.backoff.jitter: expected "full", "equal", "decorrelated" or "none", got "random"',
      ],
      [
        'retryableStatuses',
        { retryableStatuses: 503 },
        'policy.retryableStatuses: expected an array of HTTP statuses, got 503',
      ],
      [
        'retryableStatuses[1]',
        { retryableStatuses: [503, 399] },
        'policy.retryableStatuses[1]: expected a number >= 400, got 399',
      ],
      [
        'retryableStatuses[0]',
        { retryableStatuses: [600] },
        'policy.retryableStatuses[0]: expected a number <= 599, got 600',
      ],
      [
        'retryableStatuses[0]',
        { retryableStatuses: [503.5] },
        'policy.retryableStatuses[0]: expected an integer, got 503.5',
      ],
      [
        'retryableStatuses[2]',
        { retryableStatuses: [429, 503, 401] },
        'policy.retryableStatuses[2]: 401 is never retried as is: it goes to auth.refresh (docs/rules.md, rule 3)',
      ],
      [
        'retryableStatuses[0]',
        { retryableStatuses: [400] },
        'policy.retryableStatuses[0]: 400 is never retried: sent again unchanged, the request fails the same way',
      ],
      [
        'retryableStatuses[0]',
        { retryableStatuses: [422] },
        'policy.retryableStatuses[0]: 422 is never retried: sent again unchanged, the request fails the same way',
      ],
      [
        'retryAfter.maxMs',
        { retryAfter: { maxMs: -1 } },
        'policy.retryAfter.maxMs: expected a number >= 0, got -1',
      ],
      [
        'retryAfter.maxHoldMs',
        { retryAfter: { maxHoldMs: 1.5 } },
        'policy.retryAfter.maxHoldMs: expected an integer, got 1.5',
      ],
      [
        'retryAfter.releaseSpreadMs',
        { retryAfter: { releaseSpreadMs: -1 } },
        'policy.retryAfter.releaseSpreadMs: expected a number >= 0, got -1',
      ],
      [
        'throttle',
        { throttle: { beta: 1 } },
        'policy.throttle: expected false or { beta: a number > 0 and < 1, minRatePerSecond: a number > 0, quietIntervals: a number >= 0, maxQuietMs: a number >= 0 }, got an object',
      ],
      [
        'throttle',
        { throttle: true },
        'policy.throttle: expected false or { beta: a number > 0 and < 1, minRatePerSecond: a number > 0, quietIntervals: a number >= 0, maxQuietMs: a number >= 0 }, got true',
      ],
      [
        'throttle',
        { throttle: { quietIntervals: -1 } },
        'policy.throttle: expected false or { beta: a number > 0 and < 1, minRatePerSecond: a number > 0, quietIntervals: a number >= 0, maxQuietMs: a number >= 0 }, got an object',
      ],
      [
        'throttle',
        { throttle: { maxQuietMs: Infinity } },
        'policy.throttle: expected false or { beta: a number > 0 and < 1, minRatePerSecond: a number > 0, quietIntervals: a number >= 0, maxQuietMs: a number >= 0 }, got an object',
      ],
      [
        'throttle',
        { throttle: { maxQuietMs: '30s' } },
        'policy.throttle: expected false or { beta: a number > 0 and < 1, minRatePerSecond: a number > 0, quietIntervals: a number >= 0, maxQuietMs: a number >= 0 }, got an object',
      ],
      [
        'retryBudget.percent',
        { retryBudget: { percent: 101 } },
        'policy.retryBudget.percent: expected a number <= 100, got 101',
      ],
      [
        'retryBudget.minConcurrency',
        { retryBudget: { minConcurrency: 1.5 } },
        'policy.retryBudget.minConcurrency: expected an integer, got 1.5',
      ],
      [
        'idempotency.header',
        { idempotency: { header: 'Idempotency Key' } },
        'policy.idempotency.header: expected an HTTP header name, got "Idempotency Key"',
      ],
      [
        'idempotency.header',
        { idempotency: { header: '' } },
        'policy.idempotency.header: expected an HTTP header name, got ""',
      ],
      [
        'idempotency.header',
        { idempotency: { header: 7 } },
        'policy.idempotency.header: expected an HTTP header name, got 7',
      ],
      [
        'attemptHeader',
        { attemptHeader: true },
        'policy.attemptHeader: expected an HTTP header name or false, got true',
      ],
      [
        'attemptHeader',
        { attemptHeader: 'x attempt' },
        'policy.attemptHeader: expected an HTTP header name, got "x attempt"',
      ],
      [
        'attemptHeader',
        { attemptHeader: `${'a'.repeat(50)} ` },
        `policy.attemptHeader: expected an HTTP header name, got "${'a'.repeat(40)}…"`,
      ],
    ])('names %s and the value (case %#)', (_, input, message) => {
      expect(errorFor(input).message).toBe(message);
    });
  });

  it('lists every issue in one error, one line each', () => {
    const error = errorFor({
      attempts: { max: 0 },
      budgetMs: -1,
      backoff: { jitter: 'fast', multiplier: 0 },
      retryableStatuses: [503, 200],
    });
    expect(error.message.split('\n')).toEqual([
      'policy.attempts.max: expected a number >= 1, got 0',
      'policy.budgetMs: expected a number > 0, got -1',
      'policy.backoff.multiplier: expected a number >= 1, got 0',
      'policy.backoff.jitter: expected "full", "equal", "decorrelated" or "none", got "fast"',
      'policy.retryableStatuses[1]: expected a number >= 400, got 200',
    ]);
    expect(error.issues.map((issue) => issue.path)).toEqual([
      'policy.attempts.max',
      'policy.budgetMs',
      'policy.backoff.multiplier',
      'policy.backoff.jitter',
      'policy.retryableStatuses[1]',
    ]);
  });

  it('reports schema and cross-field issues together', () => {
    expect(errorFor({ attempts: { max: 0 }, timeouts: { attemptMs: 20_000 } }).message).toBe(
      [
        'policy.attempts.max: expected a number >= 1, got 0',
        'policy.timeouts.attemptMs: must not exceed policy.budgetMs (10000), got 20000',
      ].join('\n'),
    );
  });

  describe('refusing an unknown option', () => {
    it.each<[unknown, string]>([
      [{ backof: {} }, 'policy.backof: unknown option'],
      [{ budgetms: 1000 }, 'policy.budgetms: unknown option'],
      [{ backoff: { intialMs: 10 } }, 'policy.backoff.intialMs: unknown option'],
      [{ maxAttempts: 5 }, 'policy.maxAttempts: unknown option'],
      [{ retries: 5 }, 'policy.retries: unknown option'],
      [{ timeout: 5 }, 'policy.timeout: unknown option'],
      [{ deadlineMs: 5 }, 'policy.deadlineMs: unknown option'],
      [{ jitter: 'none' }, 'policy.jitter: unknown option'],
      [{ colour: 'blue' }, 'policy.colour: unknown option'],
      [{ 'x-y': 1 }, 'policy["x-y"]: unknown option'],
      [{ timeouts: { readMs: 1 } }, 'policy.timeouts.readMs: unknown option'],
    ])('names it (%j)', (input, message) => {
      expect(errorFor(input).message).toBe(message);
    });

    it('names every unknown option alongside the other issues', () => {
      expect(errorFor({ foo: 1, bar: 2, budgetMs: 0 }).issues).toEqual([
        { path: 'policy.budgetMs', message: 'expected a number > 0, got 0' },
        { path: 'policy.foo', message: 'unknown option' },
        { path: 'policy.bar', message: 'unknown option' },
      ]);
    });
  });

  describe('checking fields against each other', () => {
    it.each<[unknown, string]>([
      [
        { budgetMs: 10_000, timeouts: { attemptMs: 20_000 } },
        'policy.timeouts.attemptMs: must not exceed policy.budgetMs (10000), got 20000',
      ],
      [
        { timeouts: { attemptMs: 2000, connectMs: 3000 } },
        'policy.timeouts.connectMs: must not exceed policy.timeouts.attemptMs (2000), got 3000',
      ],
      [
        { timeouts: { connectMs: 6000 } },
        'policy.timeouts.connectMs: must not exceed policy.timeouts.attemptMs (5000), got 6000',
      ],
      [
        { backoff: { initialMs: 1000, maxMs: 500 } },
        'policy.backoff.initialMs: must not exceed policy.backoff.maxMs (500), got 1000',
      ],
      [
        { backoff: { initialMs: 10_000 } },
        'policy.backoff.initialMs: must not exceed policy.backoff.maxMs (5000), got 10000',
      ],
      [
        { attemptHeader: 'idempotency-key' },
        'policy.attemptHeader: must differ from policy.idempotency.header ("Idempotency-Key"), got "idempotency-key"',
      ],
    ])('names both fields and values (%j)', (input, message) => {
      expect(errorFor(input).message).toBe(message);
    });

    it('still checks the fields of a group that only has an unknown key too', () => {
      // The unknown key is an error of its own; initialMs and maxMs are valid, so their rule still applies.
      expect(errorFor({ backoff: { initialMs: 1000, maxMs: 500, jiter: 'full' } }).message).toContain(
        'policy.backoff.initialMs: must not exceed policy.backoff.maxMs (500), got 1000',
      );
    });

    it('reports every broken pair at once', () => {
      const error = errorFor({
        budgetMs: 1000,
        timeouts: { attemptMs: 2000, connectMs: 3000 },
        backoff: { initialMs: 2, maxMs: 1 },
      });
      expect(error.issues.map((issue) => issue.path)).toEqual([
        'policy.timeouts.attemptMs',
        'policy.timeouts.connectMs',
        'policy.backoff.initialMs',
      ]);
    });

    it('skips a pair whose other field is already reported as invalid', () => {
      expect(errorFor({ budgetMs: 'ten', timeouts: { attemptMs: 20_000 } }).message).toBe(
        'policy.budgetMs: expected a number, got "ten"',
      );
      expect(errorFor({ timeouts: 5, budgetMs: 1 }).message).toBe(
        'policy.timeouts: expected an object, got 5',
      );
    });

    it('reports a header clash alongside other issues', () => {
      expect(errorFor({ budgetMs: 0, attemptHeader: 'IDEMPOTENCY-KEY' }).message.split('\n')).toEqual([
        'policy.budgetMs: expected a number > 0, got 0',
        'policy.attemptHeader: must differ from policy.idempotency.header ("Idempotency-Key"), got "IDEMPOTENCY-KEY"',
      ]);
    });

    it('accepts equal values', () => {
      const policy = definePolicy({ budgetMs: 1000, timeouts: { attemptMs: 1000, connectMs: 1000 } });
      expect(policy.timeouts).toEqual({ attemptMs: 1000, connectMs: 1000, idleMs: 60_000 });
    });
  });

  it.each<[unknown, string]>([
    [5, 'policy: expected an object, got 5'],
    ['fast', 'policy: expected an object, got "fast"'],
    [null, 'policy: expected an object, got null'],
    [[], 'policy: expected an object, got an array'],
    [() => ({}), 'policy: expected an object, got a function'],
  ])('refuses a policy that is not an object (%s)', (input, message) => {
    expect(errorFor(input).message).toBe(message);
  });

  describe('with a custom path', () => {
    it('starts every issue path with it, also inside messages', () => {
      const error = errorFor(
        { budgetMs: 1000, timeouts: { attemptMs: 2000 }, retryableStatuses: [1], backof: 1 },
        { path: 'options.policy' },
      );
      expect(error.message.split('\n')).toEqual([
        'options.policy.retryableStatuses[0]: expected a number >= 400, got 1',
        'options.policy.backof: unknown option',
        'options.policy.timeouts.attemptMs: must not exceed options.policy.budgetMs (1000), got 2000',
      ]);
    });

    it('uses it for a policy that is not an object', () => {
      expect(errorFor(0, { path: 'options.policy' }).message).toBe(
        'options.policy: expected an object, got 0',
      );
    });

    it('leaves paths relative when it is empty', () => {
      expect(errorFor({ retryableStatuses: [1] }, { path: '' }).message).toBe(
        'retryableStatuses[0]: expected a number >= 400, got 1',
      );
      expect(errorFor(0, { path: '' }).message).toBe('expected an object, got 0');
    });
  });

  it('throws a PolicyError whose issues hold each path and message apart', () => {
    const error = errorFor({ backoff: { initialMs: -1 } });
    expect(error).toBeInstanceOf(PolicyError);
    expect(error.name).toBe('PolicyError');
    expect(error.issues).toEqual([
      { path: 'policy.backoff.initialMs', message: 'expected a number >= 0, got -1' },
    ]);
  });
});

describe('definePolicy given a typed array of statuses', () => {
  it('refuses it as not an array, with a PolicyError rather than a TypeError from freezing it', () => {
    expect(() =>
      definePolicy({ retryableStatuses: Float64Array.from([503]) as unknown as number[] }),
    ).toThrow(
      new PolicyError([
        { path: 'policy.retryableStatuses', message: 'expected an array of HTTP statuses, got an object' },
      ]),
    );
  });
});
