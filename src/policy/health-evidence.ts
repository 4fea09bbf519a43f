import type { FailureClass, RequestSent } from './failure.js';
import { recordOutcome, windowCounts, type FailureWindow } from './failure-window.js';
import type { HealthPolicy } from './policy.js';

/**
 * Failure classes that say the origin itself is unwell. Not here: `offline` (the device, not the origin),
 * `rate-limited` (429 is the origin protecting itself, and it tells when to come back), `unauthorized` and
 * `client-error` (the request, not the origin), `cancelled` (the caller). `unexpected` counts only without a
 * status: an opaque network error, not an odd status from a server that answered.
 */
const COUNTED: ReadonlySet<FailureClass> = new Set<FailureClass>([
  'dns',
  'connect',
  'connect-timeout',
  'tls',
  'response-timeout',
  'connection-lost',
  'unavailable',
  'server-error',
  'unexpected',
]);

/**
 * Whether a failure counts against its origin's health. Nothing counts while the device is offline (rule 6),
 * nor an `unexpected` failure known to have sent nothing: it happened on the device (`auth.headers()` threw).
 */
export function countsAgainstOrigin(
  failureClass: FailureClass,
  status: number | undefined,
  online: boolean,
  requestSent?: RequestSent,
) {
  if (failureClass === 'unexpected' && (status !== undefined || requestSent === 'no')) return false;
  return online && COUNTED.has(failureClass);
}

/** Which health criterion moved an origin set from one state to another (`health-changed` events carry it). */
export type HealthCriterion =
  | 'consecutive-failures'
  | 'failure-ratio'
  | 'tls'
  | 'successes'
  | 'min-failed-over-elapsed'
  | 'probe-failed'
  | 'probes-succeeded';

/** What is known of the primary's recent outcomes. */
export interface PrimaryEvidence {
  consecutiveFailures: number;
  consecutiveSuccesses: number;
  window: FailureWindow;
}

export const noEvidence: PrimaryEvidence = {
  consecutiveFailures: 0,
  consecutiveSuccesses: 0,
  window: { buckets: [] },
};

/** The evidence after one more outcome of the primary; an uncounted failure changes nothing. */
export function addOutcome(
  evidence: PrimaryEvidence,
  policy: HealthPolicy,
  now: number,
  failed: boolean,
): PrimaryEvidence {
  return {
    consecutiveFailures: failed ? evidence.consecutiveFailures + 1 : 0,
    consecutiveSuccesses: failed ? 0 : evidence.consecutiveSuccesses + 1,
    window: recordOutcome(evidence.window, policy.windowMs, now, failed),
  };
}

/**
 * Whether `now` is within the failback dwell: less than `failbackDwellMs` after the last failback
 * (`failedBackAt`, `undefined` before any).
 */
export function inFailbackDwell(
  policy: HealthPolicy,
  now: number,
  failedBackAt: number | undefined,
): boolean {
  return failedBackAt !== undefined && now - failedBackAt < policy.failbackDwellMs;
}

/**
 * The criterion that fails traffic over, if any, given the evidence after a counted failure of class
 * `failureClass`: a TLS failure at once, then consecutive failures, then the failure ratio. Within the failback
 * dwell (`failedBackAt` is the last failback) only a TLS failure or `dwellFailoverAfter` consecutive failures
 * do: a primary that fails a share of its requests keeps the traffic that just came back to it, one that is
 * down again does not.
 */
export function failoverCriterion(
  evidence: PrimaryEvidence,
  policy: HealthPolicy,
  now: number,
  failureClass: FailureClass,
  failedBackAt: number | undefined,
): HealthCriterion | undefined {
  if (failureClass === 'tls') return 'tls';
  if (inFailbackDwell(policy, now, failedBackAt))
    return evidence.consecutiveFailures >= policy.dwellFailoverAfter ? 'consecutive-failures' : undefined;
  if (evidence.consecutiveFailures >= policy.failoverAfter) return 'consecutive-failures';
  const { total, failures } = windowCounts(evidence.window, policy.windowMs, now);
  return total >= policy.minRequests && failures / total >= policy.failureRatio ? 'failure-ratio' : undefined;
}
