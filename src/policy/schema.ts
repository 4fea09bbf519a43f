/**
 * The shape of a policy input, checked with zod/mini: the policy ships to browsers and React Native, and
 * zod/mini keeps what a bundle pulls in small (functions instead of methods, no default locale) and never
 * compiles code with `new Function`, so it runs under a strict Content-Security-Policy.
 *
 * Every field is optional (`definePolicy` fills in the defaults); every object is strict, so a misspelt option
 * is an error rather than silently ignored. Each check carries its own message, written the way `PolicyError`
 * prints it (`expected a number >= 0, got -1`), so the schema reads the same wherever it is used.
 * Checks between fields (`timeouts.attemptMs <= budgetMs`, ...) are in define-policy.ts.
 */
import * as z from 'zod/mini';
import { neverRetriedStatuses } from './retryable.js';

/**
 * The longest delay a timer honours: `setTimeout` in browsers and Node fires at once for anything above
 * 2^31 - 1 ms (about 24.8 days), so no duration in a policy may be longer.
 */
export const MAX_TIMER_MS = 2_147_483_647;

/** The longest `attempts.max`: a bound on how hard one request may hit an API. */
export const MAX_ATTEMPTS = 100;

/**
 * A value as shown in a message: numbers as written, strings quoted and cut at 40 characters, anything else by
 * its kind. Policy values are not secrets, but a message should stay one short line.
 * @internal
 */
export function describeValue(value: unknown): string {
  switch (typeof value) {
    case 'number':
      return Object.is(value, -0) ? '-0' : String(value);
    case 'string':
      return JSON.stringify(value.length > 40 ? `${value.slice(0, 40)}…` : value);
    case 'boolean':
    case 'undefined':
      return String(value);
    case 'bigint':
      return `${value}n`;
    case 'symbol':
      return 'a symbol';
    case 'function':
      return 'a function';
    default:
      return value === null ? 'null' : Array.isArray(value) ? 'an array' : 'an object';
  }
}

type IssueInput = { readonly input?: unknown };

const got = (issue: IssueInput): string => `, got ${describeValue(issue.input)}`;

/** A finite number (zod's `number()` already refuses NaN and ±Infinity). */
const finiteNumber = () =>
  z.number({
    error: (issue) =>
      typeof issue.input === 'number'
        ? `expected a finite number${got(issue)}`
        : `expected a number${got(issue)}`,
  });

/** Stops at the first failure, so 1.5 is reported as "not an integer" and not also as out of range. */
const integer = () =>
  z.refine<number>(Number.isInteger, { error: (issue) => `expected an integer${got(issue)}`, abort: true });
const atLeast = (minimum: number) =>
  z.gte(minimum, { error: (issue) => `expected a number >= ${minimum}${got(issue)}` });
const above = (minimum: number) =>
  z.gt(minimum, { error: (issue) => `expected a number > ${minimum}${got(issue)}` });
const atMost = (maximum: number, why = '') =>
  z.lte(maximum, { error: (issue) => `expected a number <= ${maximum}${why}${got(issue)}` });

const timerLimit = () => atMost(MAX_TIMER_MS, ' (the longest delay a timer can wait)');

/** A whole number of milliseconds: `> 0` for timeouts and budgets, `>= 0` for waits. */
const durationMs = (bound: 'positive' | 'non-negative') =>
  finiteNumber().check(integer(), bound === 'positive' ? above(0) : atLeast(0), timerLimit());

/** An HTTP field name: an RFC 9110 §5.6.2 token. */
const headerName = () =>
  z.string({ error: (issue) => `expected an HTTP header name${got(issue)}` }).check(
    z.regex(/^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/, {
      error: (issue) => `expected an HTTP header name${got(issue)}`,
    }),
  );

const retryableStatus = () =>
  finiteNumber().check(
    integer(),
    atLeast(400),
    atMost(599),
    z.refine<number>((status) => !neverRetriedStatuses.includes(status), {
      error: (issue) =>
        issue.input === 401
          ? '401 is never retried as is: it goes to auth.refresh (rule 3)'
          : `${describeValue(issue.input)} is never retried: sent again unchanged, the request fails the same way`,
    }),
  );

/** A strict object: an unknown key is reported (define-policy.ts turns it into `path.key: unknown option`). */
const group = <Shape extends z.core.$ZodLooseShape>(shape: Shape) =>
  z.strictObject(shape, {
    error: (issue) =>
      issue.code === 'unrecognized_keys' ? 'unknown option' : `expected an object${got(issue)}`,
  });

/**
 * Any part of a policy (`PolicyInput`), every field optional. Parse it with `safeParse`; `definePolicy` does,
 * then merges the result over the defaults and checks the fields against each other.
 */
export const policyInputSchema = group({
  attempts: z.optional(
    group({
      max: z.optional(finiteNumber().check(integer(), atLeast(1), atMost(MAX_ATTEMPTS))),
    }),
  ),
  budgetMs: z.optional(durationMs('positive')),
  timeouts: z.optional(
    group({
      attemptMs: z.optional(durationMs('positive')),
      connectMs: z.optional(durationMs('positive')),
    }),
  ),
  backoff: z.optional(
    group({
      initialMs: z.optional(durationMs('non-negative')),
      maxMs: z.optional(durationMs('non-negative')),
      multiplier: z.optional(finiteNumber().check(atLeast(1))),
      jitter: z.optional(
        z.enum(['full', 'equal', 'decorrelated', 'none'], {
          error: (issue) => `expected "full", "equal", "decorrelated" or "none"${got(issue)}`,
        }),
      ),
    }),
  ),
  retryableStatuses: z.optional(
    z.readonly(
      z.array(retryableStatus(), { error: (issue) => `expected an array of HTTP statuses${got(issue)}` }),
    ),
  ),
  retryAfter: z.optional(
    group({
      maxMs: z.optional(durationMs('non-negative')),
    }),
  ),
  idempotency: z.optional(
    group({
      header: z.optional(headerName()),
    }),
  ),
  attemptHeader: z.optional(
    z.union([headerName(), z.literal(false)], {
      error: (issue) => `expected an HTTP header name or false${got(issue)}`,
    }),
  ),
});
