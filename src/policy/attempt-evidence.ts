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
 * while it was in flight (it broke with the old network), or the transport threw (the failure was on the device).
 * Which failure classes then count against the origin is the health machine's rule (`countsAgainstOrigin`).
 */
export function attemptEvidence(end: AttemptEnd): AttemptEvidence | undefined {
  if (end.type === 'attempt-succeeded')
    return { type: 'attempt.succeeded', origin: end.origin, latencyMs: end.latencyMs, at: end.at };
  if (end.cutByBudget === true || end.acrossChange === true || end.crashed === true) return undefined;
  const { failure } = end;
  return {
    type: 'attempt.failed',
    origin: failure.origin,
    failureClass: failure.class,
    status: failure.status,
    requestSent: failure.requestSent,
    at: end.at,
  };
}
