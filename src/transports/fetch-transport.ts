import type { Clock } from '../clock/clock.js';
import type { TransportResult } from '../policy/transport-result.js';
import { bufferedResponse, isRepresentableStatus } from './buffered-response.js';
import {
  abortedResult,
  describeOpaque,
  errorResult,
  findNetworkCause,
  hostOf,
  isConnectCode,
  isDnsCode,
  isLostCode,
  isTlsCause,
  type NetworkCause,
} from './network-error.js';
import type { Transport, TransportRequest } from './transport.js';

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
    send: (request) => sendWithFetch(options, request),
  };
}

async function sendWithFetch(
  options: FetchTransportOptions,
  request: TransportRequest,
): Promise<TransportResult> {
  const { signal } = request;
  if (signal.aborted) return abortedResult();
  const host = hostOf(request.url);
  const fetchFn = options.fetch ?? globalThis.fetch;
  if (typeof fetchFn !== 'function') {
    return errorResult(
      'unknown',
      'no',
      'fetch: no fetch function in this runtime; pass fetchTransport({ fetch })',
    );
  }
  const method = request.method.toUpperCase();
  if (request.body !== undefined && (method === 'GET' || method === 'HEAD')) {
    return errorResult('unknown', 'no', `fetch: a ${method} request cannot have a body (to ${host})`);
  }

  const init: RequestInit = { method: request.method, headers: request.headers, signal };
  if (request.body !== undefined) init.body = request.body as BodyInit;

  let response: Response;
  try {
    // Called on globalThis: a browser's fetch throws "Illegal invocation" when called on another object.
    response = await fetchFn.call(globalThis, request.url, init);
  } catch (error) {
    if (signal.aborted) return abortedResult();
    return classifyFetchError(error, host);
  }

  let body: ArrayBuffer;
  try {
    body = await response.arrayBuffer();
  } catch (error) {
    if (signal.aborted) return abortedResult();
    return classifyBodyError(error, host);
  }

  if (!isRepresentableStatus(response.status)) {
    return errorResult(
      'unknown',
      'yes',
      `fetch: ${host} answered with status ${response.status}, which a Response cannot hold`,
    );
  }
  return {
    kind: 'response',
    response: bufferedResponse(method, response.status, response.statusText, response.headers, body),
  };
}

/**
 * Where a fetch that rejected before any response headers failed. Each branch is what undici in
 * Node 20 was seen to report (see docs/transports.md, "fetchTransport on Node").
 */
function classifyFetchError(error: unknown, host: string): TransportResult {
  const cause = findNetworkCause(error);
  if (cause === undefined) {
    return errorResult('unknown', 'unknown', `fetch to ${host} failed: ${describeOpaque(error)}`);
  }
  const { code } = cause;
  if (isDnsCode(code)) return errorResult('dns', 'no', `${code} resolving ${hostnameOf(host)}`, code);
  if (isConnectCode(code)) return errorResult('connect', 'no', `${code} connecting to ${host}`, code);
  if (code === 'UND_ERR_CONNECT_TIMEOUT' || (code === 'ETIMEDOUT' && cause.syscall === 'connect')) {
    return errorResult('connect-timeout', 'no', `${code} connecting to ${host}`, code);
  }
  if (isTlsCause(cause)) return errorResult('tls', 'no', `${code} in the TLS handshake with ${host}`, code);
  // ECONNRESET is ambiguous: `connect ECONNRESET` (syscall 'connect') was reset before the request
  // was written; `read ECONNRESET` was seen both after the request and during a TLS handshake.
  if (code === 'ECONNRESET' && cause.syscall === 'connect') {
    return errorResult('connect', 'no', `${code} connecting to ${host}`, code);
  }
  if (code === 'UND_ERR_HEADERS_TIMEOUT') {
    return errorResult('response-timeout', 'unknown', `${code} waiting for the response from ${host}`, code);
  }
  if (isLostCode(code)) {
    return errorResult(
      'connection-lost',
      'unknown',
      `${code}: connection to ${host} lost before a response`,
      code,
    );
  }
  return errorResult('unknown', 'unknown', `${code} from fetch to ${host}`, code);
}

/** A failure while reading the body: the headers arrived, so the server got the request. */
function classifyBodyError(error: unknown, host: string): TransportResult {
  const cause: NetworkCause | undefined = findNetworkCause(error);
  const code = cause?.code;
  const what = code ?? describeOpaque(error);
  if (code === 'UND_ERR_BODY_TIMEOUT') {
    return errorResult('response-timeout', 'yes', `${code} reading the response body from ${host}`, code);
  }
  return errorResult(
    'connection-lost',
    'yes',
    `${what}: connection to ${host} lost while reading the response body`,
    code,
  );
}

function hostnameOf(host: string): string {
  const bracket = host.lastIndexOf(']');
  const colon = host.lastIndexOf(':');
  return colon > bracket ? host.slice(0, colon) : host;
}
