import type { Failure, FailureClass, RequestSent } from './failure.js';

/** How an attempt ended, as the request machine tells it (the fields the evidence rule reads). */
export type AttemptEnd =
  | { type: 'attempt-succeeded'; origin: string; latencyMs: number; at: number }
  | {
      type: 'attempt-failed';
      failure: Failure;
      at: number;
      cutByBudget?: true;
      acrossChange?: true;
      crashed?: true;
    };

/** What an attempt tells of its origin's health: the origin set's health machine hears it. */
export type AttemptEvidence =
  | { type: 'attempt.succeeded'; origin: string; latencyMs: number; at: number }
  | {
      type: 'attempt.failed';
      origin: string;
      failureClass: FailureClass;
      status: number | undefined;
      requestSent: RequestSent;
      at: number;
    };

/**
 * The evidence an attempt's end gives about its origin, or none. A success reports its latency. A failure does,
 * unless the request's own budget cut the attempt short (it was given less than `attemptMs`), the network changed
 * while it was in flight (it broke with the old network), the transport threw (the failure was on the device), or
 * it is a 503 with a Retry-After (docs/failover.md#a-503-with-retry-after).
 * Which failure classes then count against the origin is the health machine's rule (`countsAgainstOrigin`).
 */
export function attemptEvidence(end: AttemptEnd): AttemptEvidence | undefined {
  if (end.type === 'attempt-succeeded')
    return { type: 'attempt.succeeded', origin: end.origin, latencyMs: end.latencyMs, at: end.at };
  if (end.cutByBudget === true || end.acrossChange === true || end.crashed === true) return undefined;
  const { failure } = end;
  // A 503 that names when to come back is an origin alive enough to say so: its hold keeps the client away
  // (server-hold.ts), and counting it would fail the client over and move the overload onto the backup.
  if (failure.status === 503 && failure.retryAfterMs !== undefined && failure.retryAfterMs > 0)
    return undefined;
  return {
    type: 'attempt.failed',
    origin: failure.origin,
    failureClass: failure.class,
    status: failure.status,
    requestSent: failure.requestSent,
    at: end.at,
  };
}
