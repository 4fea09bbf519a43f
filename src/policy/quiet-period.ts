import type { RateLimitFields } from './rate-limit-fields.js';

/**
 * The quiet period after a throttle: when an origin throttles (a 429, or an answer whose rate-limit fields say
 * nothing remains), the client sends nothing new to it for `quietIntervals` times its own smoothed interval
 * between request starts (request-interval.ts), at most `maxQuietMs` and never longer than
 * `retryAfter.maxHoldMs`. A heavy client's interval is short, so its quiet period is too; a light client's is
 * long enough that its next request, and its retry of a bare 429, wait past their budget and end `throttled`
 * with nothing sent instead of meeting the saturated origin again. Its owner (origin-throttles.ts) starts none
 * on one throttle before the client has a pace (two starts, a gap between), and does not hold a request whose
 * own answer named a Retry-After (the server said when that one may come back) unless the origin has throttled
 * twice running. Pure.
 *
 * No jitter: each client's quiet period ends at its own time already (its own throttle, its own interval), and
 * the requests one client held are released over `retryAfter.releaseSpreadMs` (hold-release.ts).
 */

/** `policy.throttle`'s quiet period. */
export interface QuietPeriodOptions {
  /** The quiet period as a multiple of the client's interval between request starts; 0 turns it off. */
  quietIntervals: number;
  /** The longest quiet period, ms. */
  maxQuietMs: number;
}

/** The longest quiet period: `maxQuietMs`, never above the longest hold (`retryAfter.maxHoldMs`). */
export function quietCeilingMs(options: QuietPeriodOptions, maxHoldMs: number): number {
  return Math.max(0, Math.min(options.maxQuietMs, maxHoldMs));
}

/**
 * The longest gap between request starts worth counting (request-interval.ts): past it the quiet period is at
 * its ceiling anyway. Also where the interval starts, so a client's early throttles give nearly the longest quiet
 * period.
 * `Infinity` when the quiet period is off.
 */
export function longestCountedGapMs(options: QuietPeriodOptions, ceilingMs: number): number {
  return options.quietIntervals > 0 ? ceilingMs / options.quietIntervals : Infinity;
}

/**
 * The quiet period after a throttle, ms, whole and rounded up: `quietIntervals` x `intervalMs`, within
 * [0, `ceilingMs`].
 */
export function quietPeriodMs(intervalMs: number, options: QuietPeriodOptions, ceilingMs: number): number {
  if (!(options.quietIntervals > 0)) return 0;
  return Math.max(0, Math.min(ceilingMs, Math.ceil(options.quietIntervals * intervalMs)));
}

/**
 * When the quiet period after the origin's last throttle (at `throttledAt`) ends, by the client's interval as it
 * is now (its owner recomputes it as requests start and the interval moves); 0 (none) before any throttle.
 */
export function quietUntil(
  throttledAt: number | undefined,
  intervalMs: number,
  options: QuietPeriodOptions,
  ceilingMs: number,
): number {
  return throttledAt === undefined ? 0 : throttledAt + quietPeriodMs(intervalMs, options, ceilingMs);
}

/** Whether an answer is a throttle: a 429, or rate-limit fields (read from it) that leave nothing remaining. */
export function isThrottle(status: number, fields: RateLimitFields | undefined): boolean {
  return status === 429 || (fields !== undefined && fields.remaining < 1);
}
