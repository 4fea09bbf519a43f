import type { Failure, FailureClass } from './failure.js';
import type { Policy } from './policy.js';

/**
 * Failures of the network path, worth another attempt (subject to write safety, see `mayReplay`).
 * `tls` is left out: a bad certificate or protocol mismatch does not heal in a few hundred milliseconds (the
 * request machine retries it only when there is another origin to fail over to).
 * `offline` ends an interactive request at once (rule 6); `unauthorized` goes to `auth.refresh`
 * (rule 3); `cancelled` is never retried. `unexpected` is decided in `isRetryableFailure`.
 */
const retryableClasses: ReadonlySet<FailureClass> = new Set<FailureClass>([
  'dns',
  'connect',
  'connect-timeout',
  'response-timeout',
  'connection-lost',
]);

/** The classes of an HTTP response; they are retried only by status. */
const statusClasses: ReadonlySet<FailureClass> = new Set<FailureClass>([
  'rate-limited',
  'unavailable',
  'server-error',
  'client-error',
]);

/** The status classes retried when the app's `classify` names them (a `server-error` or `client-error` is not). */
const appRetriedClasses: ReadonlySet<FailureClass> = new Set<FailureClass>(['rate-limited', 'unavailable']);

/**
 * Statuses that are never retried, whatever the policy says; `definePolicy` refuses them in
 * `retryableStatuses` rather than ignore them silently.
 * - 400: the request is malformed (with an Idempotency-Key: the key is missing or invalid); sent again unchanged
 *   it fails the same way.
 * - 401: handled by `auth.refresh()` and one more attempt, never retried as is (rule 3).
 * - 422: the request cannot be processed (with an Idempotency-Key: the key was reused with another payload).
 */
export const neverRetriedStatuses: readonly number[] = Object.freeze([400, 401, 422]);

/** Options of `isRetryableFailure`. */
export interface RetryableOptions {
  /** Whether the request carries an idempotency key (then a 409 means "still processing, ask again"). */
  hasIdempotencyKey: boolean;
}

/**
 * Whether another attempt could succeed where `failure` did not. It says nothing about write safety: a
 * retryable failure of a write may still be unsafe to replay (see `mayReplay`).
 *
 * - `dns`, `connect`, `connect-timeout`, `response-timeout`, `connection-lost`: yes.
 * - `unexpected` without a status (a transport error of phase `unknown`): yes. This is how a browser reports
 *   most network failures (`TypeError: Failed to fetch`), so a read must be retried after one; a write is
 *   protected by its `requestSent: 'unknown'` (rule 2: such a write is treated as possibly applied).
 * - `unexpected` with a status (1xx, 3xx): no.
 * - `tls`, `offline`, `cancelled`, `unauthorized`: no.
 * - an HTTP status: yes if `policy.retryableStatuses` names it, or if it is 409 and the request has an
 *   idempotency key (IETF draft "The Idempotency-Key HTTP Header Field": 409 means the first request with this
 *   key is still being processed, so the same request is sent again, unchanged, after a wait). 400, 401 and 422
 *   never (see `neverRetriedStatuses`).
 * - a class the client's `classify` gave (`classifiedByApp`): yes for the network classes above, `unavailable`
 *   and `rate-limited`; no for the rest.
 */
export function isRetryableFailure(
  failure: Failure,
  policy: Pick<Policy, 'retryableStatuses'>,
  options: RetryableOptions,
): boolean {
  const { class: failureClass, status } = failure;
  // The app's own class is retried by what it names, whatever status the response had.
  if (failure.classifiedByApp)
    return retryableClasses.has(failureClass) || appRetriedClasses.has(failureClass);
  return failureClass === 'unexpected'
    ? status === undefined
    : retryableClasses.has(failureClass) ||
        (statusClasses.has(failureClass) &&
          status !== undefined &&
          !neverRetriedStatuses.includes(status) &&
          (policy.retryableStatuses.includes(status) || (status === 409 && options.hasIdempotencyKey)));
}
