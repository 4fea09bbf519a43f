import type { RateLimitFields } from './rate-limit-fields.js';

/**
 * An origin's quota as its rate-limit fields last named it: with `remaining` left, at most that many new
 * attempts of the client (all its requests together) go to the origin before `resetAt`; with none left, none
 * does. Pure: each function returns a new quota, times are `clock.now()` values passed in.
 */
export interface SendQuota {
  remaining: number;
  resetAt: number;
  /** The quota after each reset (`RateLimit-Policy`); without it nothing is known past `resetAt`. */
  policy?: { limit: number; windowMs: number } | undefined;
}

/**
 * The quota after a response's fields were read at `at`. Within the same window (resets less than a second
 * apart: `t` is whole seconds) the smaller count holds: the server's `r` does not yet count the attempts sent
 * since it answered, and the client's count does not know of other clients. A new window takes the server's.
 */
export function mergeQuota(quota: SendQuota | undefined, fields: RateLimitFields, at: number): SendQuota {
  const current = quotaAt(quota, at);
  const sameWindow = current !== undefined && Math.abs(current.resetAt - fields.resetAt) < 1000;
  return {
    remaining: sameWindow ? Math.min(current.remaining, fields.remaining) : fields.remaining,
    resetAt: fields.resetAt,
    policy: fields.policy ?? current?.policy,
  };
}

/**
 * The quota in force at `now`, or `undefined` when none is known: past `resetAt` a `RateLimit-Policy` quota
 * starts a new window (as many windows on as have passed), and without one nothing limits the origin until a
 * response names a quota again.
 */
export function quotaAt(quota: SendQuota | undefined, now: number): SendQuota | undefined {
  if (quota === undefined || now < quota.resetAt) return quota;
  const { policy } = quota;
  if (policy === undefined) return undefined;
  const windows = Math.floor((now - quota.resetAt) / policy.windowMs) + 1;
  return { remaining: policy.limit, resetAt: quota.resetAt + windows * policy.windowMs, policy };
}

/**
 * Whether an attempt may start at `now` under the quota: `{ quota }` with one taken from it when it may, or
 * `{ waitUntil }` (the reset) when nothing is left. No quota known: the attempt may start.
 */
export function takeFromQuota(
  quota: SendQuota | undefined,
  now: number,
): { quota: SendQuota | undefined; waitUntil?: undefined } | { quota: SendQuota; waitUntil: number } {
  const current = quotaAt(quota, now);
  if (current === undefined) return { quota: undefined };
  if (current.remaining < 1) return { quota: current, waitUntil: current.resetAt };
  return { quota: { ...current, remaining: current.remaining - 1 } };
}
