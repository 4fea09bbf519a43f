import type { Failure } from './failure.js';

/**
 * A server's "wait", heard by the whole client: a 429 or 503 with a Retry-After holds back every new
 * attempt of the client to that origin until the time it names, not only the retry of the request that got it.
 * Pure: times are `clock.now()` values passed in.
 */

/** The statuses whose Retry-After speaks for the origin as a whole: "too many requests", "unavailable". */
const HOLDING_STATUSES: ReadonlySet<number> = new Set([429, 503]);

/**
 * Until when this failure holds its origin back, or `undefined` when it does not: a 429 or 503 answered at `at`
 * with a Retry-After of more than 0 ms. The hold lasts the Retry-After, as the server asked (rule 5, for
 * every request of the client), up to `maxHoldMs` (`policy.retryAfter.maxHoldMs`): a Retry-After of a day, or a
 * server's clock far off, must not leave an origin unused that long. It is not cut to `policy.retryAfter.maxMs`,
 * which only says how long one request will wait. A request that cannot wait for a hold goes to another origin
 * or ends at once, without sending anything to the held one.
 */
export function holdUntilOf(failure: Failure, at: number, maxHoldMs = Infinity): number | undefined {
  const { status, retryAfterMs } = failure;
  if (status === undefined || !HOLDING_STATUSES.has(status)) return undefined;
  if (retryAfterMs === undefined || !(retryAfterMs > 0) || !(maxHoldMs > 0)) return undefined;
  return at + Math.min(retryAfterMs, maxHoldMs);
}

/**
 * Whether a request that started at `startedAt` with `budgetMs` can wait for a hold ending at `holdUntil` and
 * still have time for its attempt: the hold must end strictly before the budget does (as a Retry-After must,
 * `planRetryWait`).
 */
export function holdEndsWithinBudget(holdUntil: number, startedAt: number, budgetMs: number): boolean {
  return holdUntil < startedAt + budgetMs;
}
