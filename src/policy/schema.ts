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

/**
 * The longest delay a timer honours: `setTimeout` in browsers and Node fires at once for anything above
 * 2^31 - 1 ms (about 24.8 days), so no duration in a policy may be longer.
 */
export const MAX_TIMER_MS = 2_147_483_647;

/**
 * A value as shown in a message: numbers as written, strings quoted and cut at 40 characters, anything else by
 * its kind. Policy values are not secrets, but a message should stay one short line.
 * @internal
 */
export function describeValue(value: unknown): string {
  const type = typeof value;
  return type === 'string'
    ? JSON.stringify((value as string).length > 40 ? `${(value as string).slice(0, 40)}…` : value)
    : type === 'function' || type === 'symbol'
      ? `a ${type}`
      : type === 'object' && value !== null
        ? Array.isArray(value)
          ? 'an array'
          : 'an object'
        : Object.is(value, -0)
          ? '-0'
          : String(value) + (type === 'bigint' ? 'n' : '');
}

/** What an `invalid_type` issue expected, by zod's name for it (a number is told apart in `issueMessage`). */
const expectedType: Readonly<Record<string, string>> = {
  object: 'an object',
  array: 'an array of HTTP statuses',
  string: 'an HTTP header name',
};

/**
 * The message of every issue the schema raises. The only `custom` issues are the integer check and the
 * never-retried statuses (an integer, so they are told apart by the input). `unrecognized_keys` is worded by
 * `toPolicyIssues` (`unknown option`).
 */
function issueMessage(issue: z.core.$ZodRawIssue): string {
  const { code, input } = issue;
  if (code === 'custom' && Number.isInteger(input)) {
    return input === 401
      ? '401 is never retried as is: it goes to auth.refresh (docs/rules.md, rule 3)'
      : `${input as number} is never retried: sent again unchanged, the request fails the same way`;
  }
  const expected =
    code === 'too_small'
      ? `a number >${issue.inclusive ? '=' : ''} ${issue.minimum as number}`
      : code === 'too_big'
        ? `a number <= ${issue.maximum as number}${issue.maximum === MAX_TIMER_MS ? ' (the longest delay a timer can wait)' : ''}`
        : code === 'custom'
          ? 'an integer'
          : code === 'invalid_value'
            ? issue.values
                .map((value) => JSON.stringify(value))
                .join(', ')
                .replace(/, ([^,]*)$/, ' or $1')
            : code === 'invalid_union'
              ? 'an HTTP header name or false'
              : code === 'invalid_format'
                ? 'an HTTP header name'
                : (expectedType[issue.expected as string] ??
                  (typeof input === 'number' ? 'a finite number' : 'a number'));
  return `expected ${expected}, got ${describeValue(input)}`;
}

const withMessages = { error: issueMessage };

const number = (...checks: z.core.$ZodCheck<number>[]) => z.number(withMessages).check(...checks);

/** An integer from `low` to `max`; stops at a fraction, so 1.5 is reported as "not an integer", not also as out of range. */
const integer = (low: z.core.$ZodCheck<number>, max = MAX_TIMER_MS, ...more: z.core.$ZodCheck<number>[]) =>
  number(z.refine(Number.isInteger, { abort: true }), low, z.lte(max), ...more);

/** A whole number of milliseconds: `> 0` for timeouts and budgets, `>= 0` for waits. */
const positiveMs = z.optional(integer(z.gt(0)));
const waitMs = z.optional(integer(z.gte(0)));
/** How many times something must happen: 1 to 1000. */
const count = z.optional(integer(z.gte(1), 1000));

/** An HTTP field name: an RFC 9110 §5.6.2 token. */
const headerName = z.string(withMessages).check(z.regex(HTTP_TOKEN));

/** A strict object: an unknown key is reported (define-policy.ts turns it into `path.key: unknown option`). */
const group = <Shape extends z.core.$ZodLooseShape>(shape: Shape) => z.strictObject(shape, withMessages);

/**
 * Any part of a policy (`PolicyInput`), every field optional. Parse it with `safeParse`; `definePolicy` does,
 * then merges the result over the defaults and checks the fields against each other.
 */
export const policyInputSchema = group({
  attempts: z.optional(group({ max: z.optional(integer(z.gte(1), 100)) })),
  budgetMs: positiveMs,
  timeouts: z.optional(group({ attemptMs: positiveMs, connectMs: positiveMs })),
  backoff: z.optional(
    group({
      initialMs: waitMs,
      maxMs: waitMs,
      multiplier: z.optional(number(z.gte(1))),
      jitter: z.optional(z.enum(['full', 'equal', 'decorrelated', 'none'], withMessages)),
    }),
  ),
  retryableStatuses: z.optional(
    z.readonly(
      z.array(
        integer(
          z.gte(400),
          599,
          z.refine((status: number) => !neverRetriedStatuses.includes(status)),
        ),
        withMessages,
      ),
    ),
  ),
  retryAfter: z.optional(group({ maxMs: waitMs })),
  retryBudget: z.optional(
    group({
      percent: z.optional(number(z.gte(0), z.lte(100))),
      minConcurrency: z.optional(integer(z.gte(0), 1000)),
    }),
  ),
  idempotency: z.optional(group({ header: z.optional(headerName) })),
  attemptHeader: z.optional(z.union([headerName, z.literal(false)], withMessages)),
  health: z.optional(
    group({
      suspectAfter: count,
      recoverAfter: count,
      failoverAfter: count,
      failureRatio: z.optional(number(z.gt(0), z.lte(1))),
      windowMs: positiveMs,
      minRequests: count,
      minFailedOverMs: positiveMs,
      maxFailedOverMs: positiveMs,
      probeSuccesses: count,
      probeIntervalMs: positiveMs,
      probeTimeoutMs: positiveMs,
    }),
  ),
  durable: z.optional(
    group({
      backoff: z.optional(z.enum(['exponential', 'linear'], withMessages)),
      initialMs: positiveMs,
      maxMs: positiveMs,
      maxAttempts: z.optional(integer(z.gte(1), 1000)),
      maxAgeMs: positiveMs,
      order: z.optional(z.enum(['fifo', 'per-key'], withMessages)),
      concurrency: z.optional(integer(z.gte(1), 100)),
      flushWaitMs: waitMs,
    }),
  ),
  cache: z.optional(group({ maxAgeMs: positiveMs, maxEntries: z.optional(integer(z.gte(1), 100_000)) })),
});
