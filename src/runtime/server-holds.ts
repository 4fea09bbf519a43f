import type { Failure } from '../policy/failure.js';
import { holdUntilOf } from '../policy/server-hold.js';

/**
 * One client's server holds: per origin, until when the origin asked (429/503 with Retry-After) not
 * to be sent anything new. Owned by the client, never shared between clients; times come from its clock.
 */
export interface ServerHolds {
  /**
   * Reads a failed attempt's answer; returns the new end of its origin's hold when the answer began or lengthened
   * one, else `undefined` (no Retry-After, or one that ends no later than the hold in force).
   */
  note(failure: Failure, at: number): number | undefined;
  /** When `origin`'s hold ends, if one is in force at `now`. */
  until(origin: string, now: number): number | undefined;
  /** The holds in force at `now`, by origin id (what `client.health().holdUntil` shows). */
  inForce(now: number): Record<string, number>;
}

/** `maxHoldMs` (`policy.retryAfter.maxHoldMs`): the longest any hold lasts. */
export function createServerHolds(maxHoldMs = Infinity): ServerHolds {
  const holds = new Map<string, number>();
  const until = (origin: string, now: number) => {
    const end = holds.get(origin);
    if (end === undefined) return undefined;
    if (end > now) return end;
    holds.delete(origin);
    return undefined;
  };
  return {
    note(failure, at) {
      const end = holdUntilOf(failure, at, maxHoldMs);
      if (end === undefined || end <= (until(failure.origin, at) ?? at)) return undefined;
      holds.set(failure.origin, end);
      return end;
    },
    until,
    inForce(now) {
      const out: Record<string, number> = {};
      for (const origin of [...holds.keys()]) {
        const end = until(origin, now);
        if (end !== undefined) out[origin] = end;
      }
      return out;
    },
  };
}
