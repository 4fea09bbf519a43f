/**
 * The shape of a policy input, checked with zod/mini: the policy ships to browsers and React Native, and
 * zod/mini keeps what a bundle pulls in small (functions instead of methods, no default locale) and never
 * compiles code with `new Function`, so it runs under a strict Content-Security-Policy.
 *
 * Every field is optional (`definePolicy` fills in the defaults); every object is strict, so a misspelt option
 * is an error rather than silently ignored. One function, `issueMessage`, writes every message from the zod
 * issue, the way `PolicyError` prints it (`expected a number >= 0, got -1`), so the schema reads the same
 * wherever it is used. Checks between fields (`timeouts.attemptMs <= budgetMs`, ...) are in define-policy.ts.
 */
import * as z from 'zod/mini';
import { HTTP_TOKEN } from './methods.js';
import { neverRetriedStatuses } from './retryable.js';
import { describeValue } from './describe-value.js';
import type { ThrottlePolicy } from './policy.js';

export { describeValue };

/**
 * The longest delay a timer honours: `setTimeout` in browsers and Node fires at once for anything above
 * 2^31 - 1 ms (about 24.8 days), so no duration in a policy may be longer.
 */
export const MAX_TIMER_MS = 2_147_483_647;

/** What an `invalid_type` issue expected, by zod's name for it (a number is told apart in `issueMessage`). */
const expectedType: Readonly<Record<string, string>> = {
  object: 'an object',
  array: 'an array of HTTP statuses',
};

/**
 * What a custom check expects (its `params`). Bounds, choices and header names are custom checks rather than
 * zod's `gt`/`gte`/`lte`, `enum` and `string`/`regex`/`union`/`literal`: the messages are the same, and an
 * app's bundle then holds one zod check kind instead of several (docs/design.md#bundle-budget).
 */
interface Expected {
  /** `value >= min`, or `value > min` when not `inclusive`. */
  min?: number;
  inclusive?: boolean;
  /** `value <= max`. */
  max?: number;
  /** One of these strings. */
  values?: readonly string[];
  /** What to expect of a value that is not a string; a string that fails is "not an HTTP header name". */
  header?: string;
  /** A status that may be retried: each never-retried one is refused with its reason. */
  retryable?: true;
  /** What a value checked as a whole must be, written out. */
  shape?: string;
}

/**
 * The message of every issue the schema raises. A `custom` issue says what it expects in its params; the one
 * without params is the integer check. `unrecognized_keys` is worded by `toPolicyIssues` (`unknown option`).
 */
function issueMessage(issue: z.core.$ZodRawIssue): string {
  const { code, input } = issue;
  const { min, inclusive, max, values, header, retryable, shape }: Expected =
    (code === 'custom' ? (issue.params as Expected | undefined) : undefined) ?? {};
  if (retryable) {
    return input === 401
      ? '401 is never retried as is: it goes to auth.refresh (docs/rules.md, rule 3)'
      : `${input as number} is never retried: sent again unchanged, the request fails the same way`;
  }
  const expected =
    shape !== undefined
      ? shape
      : min !== undefined
        ? `a number >${inclusive ? '=' : ''} ${min}`
        : max !== undefined
          ? `a number <= ${max}${max === MAX_TIMER_MS ? ' (the longest delay a timer can wait)' : ''}`
          : values
            ? values
                .map((value) => JSON.stringify(value))
                .join(', ')
                .replace(/, ([^,]*)$/, ' or $1')
            : header !== undefined
              ? typeof input === 'string'
                ? 'an HTTP header name'
                : header
              : code === 'custom'
                ? 'an integer'
                : (expectedType[issue.expected as string] ??
                  (typeof input === 'number' ? 'a finite number' : 'a number'));
  return `expected ${expected}, got ${describeValue(input)}`;
}

const withMessages = { error: issueMessage };

/** A check of a number that tells `issueMessage` what it expects. */
const numberCheck = (ok: (value: number) => boolean, params: Expected) => z.refine<number>(ok, { params });
const gt = (min: number) => numberCheck((value) => value > min, { min, inclusive: false });
const gte = (min: number) => numberCheck((value) => value >= min, { min, inclusive: true });
const lte = (max: number) => numberCheck((value) => value <= max, { max });

const number = (...checks: z.core.$ZodCheck<number>[]) => z.number(withMessages).check(...checks);

/** An integer from `low` to `max`; stops at a fraction, so 1.5 is reported as "not an integer", not also as out of range. */
const integer = (low: z.core.$ZodCheck<number>, max = MAX_TIMER_MS, ...more: z.core.$ZodCheck<number>[]) =>
  number(z.refine(Number.isInteger, { abort: true }), low, lte(max), ...more);

/** A whole number of milliseconds: `> 0` for timeouts and budgets, `>= 0` for waits. */
const positiveMs = z.optional(integer(gt(0)));
const waitMs = z.optional(integer(gte(0)));
/** How many times something must happen: 1 to 1000. */
const count = z.optional(integer(gte(1), 1000));

/** A value of type T, checked by `ok`, that tells `issueMessage` what it expects. */
const custom = <T>(ok: (value: unknown) => boolean, expected: Expected) =>
  z.custom<T>(ok, { ...withMessages, params: expected });

/** One of `values`. */
const oneOf = <const T extends readonly string[]>(values: T) =>
  custom<T[number]>((value) => values.includes(value as string), { values });

/** An HTTP field name: an RFC 9110 §5.6.2 token. */
const isHeaderName = (value: unknown): boolean => typeof value === 'string' && HTTP_TOKEN.test(value);
const headerName = custom<string>(isHeaderName, { header: 'an HTTP header name' });

/**
 * `policy.throttle`: `false`, or an object of its known keys (each optional), `beta` in (0, 1),
 * `minRatePerSecond` above 0, `quietIntervals` and `maxQuietMs` finite and at least 0. Checked as a whole, with
 * one message, so that `false | object` needs no union.
 */
function isThrottleInput(value: unknown): boolean {
  if (value === false) return true;
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const { beta, minRatePerSecond, quietIntervals, maxQuietMs, ...rest } = value as Record<string, unknown>;
  const within = (v: unknown, low: number, high: number) =>
    v === undefined || (typeof v === 'number' && v > low && v < high);
  const atLeastZero = (v: unknown) => v === undefined || (typeof v === 'number' && v >= 0 && v < Infinity);
  return (
    Object.keys(rest).length === 0 &&
    within(beta, 0, 1) &&
    within(minRatePerSecond, 0, Infinity) &&
    atLeastZero(quietIntervals) &&
    atLeastZero(maxQuietMs)
  );
}

/** A strict object: an unknown key is reported (define-policy.ts turns it into `path.key: unknown option`). */
const group = <Shape extends z.core.$ZodLooseShape>(shape: Shape) => z.strictObject(shape, withMessages);

/**
 * Any part of a policy (`PolicyInput`), every field optional. Parse it with `safeParse`; `definePolicy` does,
 * then merges the result over the defaults and checks the fields against each other.
 */
export const policyInputSchema = group({
  attempts: z.optional(group({ max: z.optional(integer(gte(1), 100)) })),
  budgetMs: positiveMs,
  timeouts: z.optional(group({ attemptMs: positiveMs, connectMs: positiveMs, idleMs: positiveMs })),
  backoff: z.optional(
    group({
      initialMs: waitMs,
      maxMs: waitMs,
      multiplier: z.optional(number(gte(1))),
      jitter: z.optional(oneOf(['full', 'equal', 'decorrelated', 'none'])),
    }),
  ),
  // Not z.readonly: it freezes what it is given even when that is not an array, and freezing a typed array
  // throws a TypeError instead of the issue. Read-only in type only (definePolicy freezes its own copy).
  retryableStatuses: z.optional(
    z.array(
      integer(
        gte(400),
        599,
        numberCheck((status) => !neverRetriedStatuses.includes(status), { retryable: true }),
      ),
      withMessages,
    ) as unknown as z.ZodMiniType<readonly number[], readonly number[]>,
  ),
  retryAfter: z.optional(group({ maxMs: waitMs, maxHoldMs: waitMs, releaseSpreadMs: waitMs })),
  throttle: z.optional(
    custom<Partial<ThrottlePolicy> | false>(isThrottleInput, {
      shape:
        'false or { beta: a number > 0 and < 1, minRatePerSecond: a number > 0, quietIntervals: a number >= 0, maxQuietMs: a number >= 0 }',
    }),
  ),
  retryBudget: z.optional(
    group({
      percent: z.optional(number(gte(0), lte(100))),
      minConcurrency: z.optional(integer(gte(0), 1000)),
    }),
  ),
  idempotency: z.optional(group({ header: z.optional(headerName) })),
  attemptHeader: z.optional(
    custom<string | false>((value) => value === false || isHeaderName(value), {
      header: 'an HTTP header name or false',
    }),
  ),
  health: z.optional(
    group({
      suspectAfter: count,
      recoverAfter: count,
      failoverAfter: count,
      failureRatio: z.optional(number(gt(0), lte(1))),
      windowMs: positiveMs,
      minRequests: count,
      minFailedOverMs: positiveMs,
      maxFailedOverMs: positiveMs,
      probeSuccesses: count,
      probeIntervalMs: positiveMs,
      probeTimeoutMs: positiveMs,
      reprobeAfterMs: positiveMs,
      reprobeJitter: z.optional(oneOf(['equal', 'full', 'none'])),
      failbackDwellMs: waitMs,
      dwellFailoverAfter: count,
    }),
  ),
  durable: z.optional(
    group({
      backoff: z.optional(oneOf(['exponential', 'linear'])),
      initialMs: positiveMs,
      maxMs: positiveMs,
      jitter: z.optional(oneOf(['full', 'equal', 'none'])),
      maxAttempts: z.optional(integer(gte(1), 1000)),
      maxAgeMs: positiveMs,
      order: z.optional(oneOf(['fifo', 'per-key'])),
      concurrency: z.optional(integer(gte(1), 100)),
      flushWaitMs: waitMs,
    }),
  ),
  cache: z.optional(group({ maxAgeMs: positiveMs, maxEntries: z.optional(integer(gte(1), 100_000)) })),
});
