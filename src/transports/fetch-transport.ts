import type { Clock } from '../clock/clock.js';
import { defaultRequestSent } from '../policy/classify-failure.js';
import type { TransportResult } from '../policy/transport-result.js';
import { bufferedResponse, isRepresentableStatus } from './buffered-response.js';
import {
  abortedResult,
  describeOpaque,
  errorResult,
  findNetworkCause,
  hostOf,
  isTlsCause,
  phaseOf,
} from './network-error.js';
import type { Transport } from './transport.js';

export interface FetchTransportOptions {
  /**
   * The fetch to call. Read at each send, so a polyfill or test stub installed later is used.
   * @default globalThis.fetch
   */
  fetch?: typeof globalThis.fetch;
  /**
   * Accepted so both built-in transports take the same options; fetchTransport sets no timer of its
   * own (the engine's attempt timeout aborts `request.signal`), so it does not read the clock today.
   */
  clock?: Clock;
}

/**
 * A transport over WHATWG `fetch`: browsers, React Native, Node >= 20, Deno and Bun.
 *
 * @remarks
 * It reads the whole body within the attempt and resolves with a fresh `Response` over those bytes,
 * so a body cut mid-way is a `connection-lost` failure of this attempt, not a rejection later in app
 * code. It never rejects: every network failure resolves as `{ kind: 'error', phase, requestSent }`.
 * Node's fetch (undici) names the cause with a `code`; the mapping is in docs/transports.md. A
 * browser's opaque `TypeError: Failed to fetch` becomes phase `unknown` with `requestSent: 'unknown'`.
 *
 * fetch cannot set undici's connect timeout without a dispatcher, so this transport reports
 * `connect-timeout` only when undici does (after its default of 10 s); otherwise the engine's attempt
 * timeout ends the attempt. `request.connectTimeoutMs` is honoured by `nodeHttpTransport`.
 */
export function fetchTransport(options: FetchTransportOptions = {}): Transport {
  return {
    name: 'fetch',
    send: async ({ url, method, headers, body, signal }) => {
      if (signal.aborted) return abortedResult();
      const host = hostOf(url);
      const fetchFn = options.fetch ?? globalThis.fetch;
      const upper = method.toUpperCase();
      if (typeof fetchFn !== 'function') {
        return errorResult(
          'unknown',
          'no',
          'fetch: no fetch function in this runtime; pass fetchTransport({ fetch })',
        );
      }
      if (body !== undefined && (upper === 'GET' || upper === 'HEAD')) {
        return errorResult('unknown', 'no', `fetch: a ${upper} request cannot have a body (to ${host})`);
      }
      let response: Response | undefined;
      let bytes: ArrayBuffer;
      try {
        // Called on globalThis: a browser's fetch throws "Illegal invocation" when called on another object.
        // An undefined body is the same as none (WebIDL).
        response = await fetchFn.call(globalThis, url, { method, headers, signal, body: body as BodyInit });
        bytes = await response.arrayBuffer();
      } catch (error) {
        return signal.aborted ? abortedResult() : classifyError(error, host, response !== undefined);
      }
      const { status } = response;
      return isRepresentableStatus(status)
        ? {
            kind: 'response',
            response: bufferedResponse(upper, status, response.statusText, response.headers, bytes),
          }
        : errorResult(
            'unknown',
            'yes',
            `fetch: ${host} answered with status ${status}, which a Response cannot hold`,
          );
    },
  };
}

/**
 * Where a fetch failed. Before any response headers, each branch is what undici in Node 20 was seen
 * to report (see docs/transports.md, "fetchTransport on Node"). While reading the body the headers
 * had arrived, so the server got the request (`requestSent: 'yes'`).
 */
function classifyError(error: unknown, host: string, readingBody: boolean): TransportResult {
  const cause = findNetworkCause(error);
  const code = cause?.code;
  if (readingBody) {
    return code === 'UND_ERR_BODY_TIMEOUT'
      ? errorResult('response-timeout', 'yes', `${code} reading the response body from ${host}`, code)
      : errorResult(
          'connection-lost',
          'yes',
          `${code ?? describeOpaque(error)}: connection to ${host} lost while reading the response body`,
          code,
        );
  }
  if (cause === undefined) {
    return errorResult('unknown', 'unknown', `fetch to ${host} failed: ${describeOpaque(error)}`);
  }
  const onConnect = cause.syscall === 'connect';
  // ECONNRESET is ambiguous: `connect ECONNRESET` (syscall 'connect') was reset before the request
  // was written; `read ECONNRESET` was seen both after the request and during a TLS handshake.
  const phase = isTlsCause(cause)
    ? 'tls'
    : code === 'UND_ERR_CONNECT_TIMEOUT' || (code === 'ETIMEDOUT' && onConnect)
      ? 'connect-timeout'
      : code === 'ECONNRESET' && onConnect
        ? 'connect'
        : code === 'UND_ERR_HEADERS_TIMEOUT'
          ? 'response-timeout'
          : (phaseOf(cause.code) ?? 'unknown');
  return errorResult(
    phase,
    defaultRequestSent(phase),
    phase === 'dns'
      ? `${code} resolving ${host.replace(/:\d+$/, '')}`
      : phase === 'connect' || phase === 'connect-timeout'
        ? `${code} connecting to ${host}`
        : phase === 'tls'
          ? `${code} in the TLS handshake with ${host}`
          : phase === 'response-timeout'
            ? `${code} waiting for the response from ${host}`
            : phase === 'connection-lost'
              ? `${code}: connection to ${host} lost before a response`
              : `${code} from fetch to ${host}`,
    code,
  );
}
