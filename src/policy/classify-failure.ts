import { errorNameOf } from './error-name.js';
import type { Failure, FailureClass, RequestSent } from './failure.js';
import { parseRetryAfter } from './retry-after.js';
import type { TransportErrorPhase, TransportResult } from './transport-result.js';

/** The failure class of a transport phase (the table in docs/failure-classes.md): its own name, but `unexpected` for `unknown`. */
export function failureClassOfPhase(phase: TransportErrorPhase): FailureClass {
  return phase === 'unknown' ? 'unexpected' : phase;
}

const nothingSentPhases: ReadonlySet<TransportErrorPhase> = new Set<TransportErrorPhase>([
  'offline',
  'dns',
  'connect',
  'connect-timeout',
  'tls',
]);

/**
 * Whether the request may have reached the server in a phase, when the transport does not say.
 * Up to the end of the TLS handshake nothing was sent (`no`); after it, the request may have gone out (`unknown`).
 */
export function defaultRequestSent(phase: TransportErrorPhase): RequestSent {
  return nothingSentPhases.has(phase) ? 'no' : 'unknown';
}

/**
 * The failure class of an HTTP status, or `undefined` for a 2xx (a success).
 * 401 `unauthorized`, 429 `rate-limited`, 502/503/504 `unavailable`, other 5xx `server-error`, other 4xx
 * `client-error`, anything else (1xx, 3xx, out of range) `unexpected`.
 */
export function classifyStatus(status: number): FailureClass | undefined {
  return status >= 200 && status <= 299
    ? undefined
    : status === 401
      ? 'unauthorized'
      : status === 429
        ? 'rate-limited'
        : status === 502 || status === 503 || status === 504
          ? 'unavailable'
          : status >= 500 && status <= 599
            ? 'server-error'
            : status >= 400 && status <= 499
              ? 'client-error'
              : 'unexpected';
}

/** Options of `classifyResult`. */
export interface ClassifyOptions {
  /** The current time in ms since the epoch (`clock.now()`), to read a Retry-After given as a date. */
  now: number;
}

/**
 * What one attempt's transport result means: `undefined` for a 2xx response, otherwise the `Failure`.
 *
 * A response was received, so `requestSent` is `yes`; `status` is set, and `retryAfterMs` holds the
 * response's Retry-After as parsed by `parseRetryAfter` (left out when there is none to honour). The message
 * is `HTTP 503` plus the status text, if any.
 *
 * A transport error takes the class of its phase and the transport's message; `requestSent` is the
 * transport's own answer if it gave one, else the phase's default (`defaultRequestSent`).
 *
 * @param origin The id of the origin the attempt went to.
 */
export function classifyResult(
  result: TransportResult,
  origin: string,
  options: ClassifyOptions,
): Failure | undefined {
  if (result.kind === 'error') {
    const { phase } = result;
    return {
      class: failureClassOfPhase(phase),
      requestSent: result.requestSent ?? defaultRequestSent(phase),
      origin,
      message: result.message,
    };
  }
  const { status, statusText, headers } = result.response;
  const failureClass = classifyStatus(status);
  // A success has no wait to honour: its headers are not read.
  if (failureClass === undefined) return undefined;
  const retryAfterMs = parseRetryAfter(headers.get('retry-after'), options.now);
  const failure: Failure = {
    class: failureClass,
    requestSent: 'yes',
    origin,
    status,
    message: `HTTP ${status} ${statusText.trim()}`.trim(),
  };
  if (retryAfterMs !== undefined) failure.retryAfterMs = retryAfterMs;
  return failure;
}

/** The failure of an attempt the caller aborted (`signal`); the request may or may not have gone out. */
export function cancelledFailure(origin: string): Failure {
  return { class: 'cancelled', requestSent: 'unknown', origin, message: 'cancelled by the caller' };
}

/**
 * Why a request whose caller had aborted before it began ended: no attempt was made and no origin chosen (its
 * `origin` is empty, as for a cancel before the first origin was chosen).
 */
export function cancelledBeforeStart(): Failure {
  return {
    class: 'cancelled',
    requestSent: 'no',
    origin: '',
    message: 'cancelled by the caller before the request started; nothing was sent',
  };
}

/** The failure of an attempt that got no response within `timeoutMs`: the request may have gone out. */
export function timeoutFailure(origin: string, timeoutMs: number): Failure {
  return {
    class: 'response-timeout',
    requestSent: 'unknown',
    origin,
    message: `no response within ${timeoutMs} ms`,
  };
}

/**
 * The failure of an attempt whose transport threw instead of reporting a result: what it sent is unknown, so a
 * write is not replayed blindly. Only the error's name is kept (`errorNameOf`).
 */
export function transportCrashFailure(origin: string, error: unknown): Failure {
  return {
    class: 'unexpected',
    requestSent: 'unknown',
    origin,
    message: `transport threw ${errorNameOf(error)} instead of reporting a result`,
  };
}

/**
 * The failure of a read's attempt ended `inFlightMs` in because the network changed: lost with its connection.
 * What reached the server does not matter (a read is replayable), and it is sent again at once.
 */
export function networkChangeFailure(origin: string, inFlightMs: number): Failure {
  return {
    class: 'connection-lost',
    requestSent: 'unknown',
    origin,
    message: `the network changed ${inFlightMs} ms into the attempt; the read is sent again at once`,
  };
}
