/** Whether an attempt's request may have reached the server. Decides if a write may be sent again. */
export type RequestSent = 'no' | 'yes' | 'unknown';

/** Every way an attempt can fail; the table in docs/failure-classes.md says what each means. */
export const FAILURE_CLASSES = [
  'offline',
  'dns',
  'connect',
  'connect-timeout',
  'tls',
  'response-timeout',
  'connection-lost',
  'unauthorized',
  'rate-limited',
  'unavailable',
  'server-error',
  'client-error',
  'unexpected',
  'cancelled',
] as const;

/** One of FAILURE_CLASSES. */
export type FailureClass = (typeof FAILURE_CLASSES)[number];

/** One failed attempt. `message` never holds a header value, a token, a body or a query string (rule 9). */
export interface Failure {
  class: FailureClass;
  requestSent: RequestSent;
  origin: string;
  /** The HTTP status of the response, when the attempt got one. */
  status?: number;
  /**
   * The server's Retry-After in ms, as parsed by `parseRetryAfter` and not capped: the engine compares it with
   * `policy.retryAfter.maxMs` and the time left, and ends the request (`retry-after-exceeds-budget`) rather
   * than wait less than the server asked (rule 5). Absent when the response had none to honour.
   */
  retryAfterMs?: number;
  message: string;
  /**
   * The client's `classify` gave this class: the class alone decides whether it is retried (`unavailable` and
   * `rate-limited` are, as the network classes), not the status. Absent when failwise classified the attempt.
   */
  classifiedByApp?: true;
}

/** Why a request ended `failed` (or was deferred). */
export type FailReason =
  | 'not-retryable'
  | 'attempts-exhausted'
  | 'budget-exhausted'
  | 'unsafe-to-replay'
  | 'retry-after-exceeds-budget'
  | 'retry-budget-exhausted'
  | 'throttled'
  | 'unauthorized'
  | 'offline'
  | 'no-healthy-origin'
  | 'cancelled';
