/**
 * Time and attempt arithmetic for one request. Pure: times are `clock.now()` values passed in.
 */

/** What is left of a request's time budget at `now`, never negative. */
export function timeLeftMs(startedAt: number, budgetMs: number, now: number): number {
  return Math.max(0, startedAt + budgetMs - now);
}

/** How many attempts a request may still make, never negative. */
export function attemptsLeft(max: number, used: number): number {
  return Math.max(0, max - used);
}

/** Options of `planRetryWait`. */
export interface PlanRetryWaitOptions {
  /** The jittered backoff for this retry (`nextBackoff`). */
  backoffMs: number;
  /** The server's Retry-After for the failure, as parsed (`Failure.retryAfterMs`); `undefined` if none. */
  retryAfterMs: number | undefined;
  /** `policy.retryAfter.maxMs`: the longest Retry-After this client will wait for. */
  retryAfterMaxMs: number;
  /** What is left of the request's budget now (`timeLeftMs`). */
  timeLeftMs: number;
}

/** What to do before the next attempt: wait `delayMs`, or end the request for the reason given. */
export type RetryPlan =
  { kind: 'wait'; delayMs: number } | { kind: 'retry-after-exceeds-budget' } | { kind: 'budget-exhausted' };

/**
 * Decides the wait before the next attempt, or that there is none.
 *
 * The wait is the longer of the backoff and the server's Retry-After: failwise never comes back sooner than
 * the server asked (rule 5). In order:
 *
 * 1. A Retry-After above `retryAfterMaxMs` ends the request: `retry-after-exceeds-budget`.
 * 2. No time left at all: `budget-exhausted`.
 * 3. A Retry-After that reaches the end of the budget ends the request: `retry-after-exceeds-budget`
 *    (a durable request is deferred instead; that is the engine's choice).
 * 4. A wait that reaches the end of the budget would leave no time for the attempt: `budget-exhausted`.
 * 5. Otherwise: `wait`.
 */
export function planRetryWait({
  backoffMs,
  retryAfterMs = 0,
  retryAfterMaxMs,
  timeLeftMs,
}: PlanRetryWaitOptions): RetryPlan {
  // No Retry-After reads as 0: never above the cap, and never reaching the end of a budget with time left.
  const delayMs = Math.max(backoffMs, retryAfterMs);
  return retryAfterMs > retryAfterMaxMs
    ? { kind: 'retry-after-exceeds-budget' }
    : timeLeftMs <= 0
      ? { kind: 'budget-exhausted' }
      : retryAfterMs >= timeLeftMs
        ? { kind: 'retry-after-exceeds-budget' }
        : delayMs >= timeLeftMs
          ? { kind: 'budget-exhausted' }
          : { kind: 'wait', delayMs };
}
