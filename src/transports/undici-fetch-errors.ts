import { defaultRequestSent } from '../policy/classify-failure.js';
import type { TransportResult } from '../policy/transport-result.js';
import { responseFromBytes } from './bytes-response.js';
import {
  explainOpaqueFetchError,
  fetchTransportWith,
  type FetchTransportOptions,
} from './fetch-transport.js';
import { describeOpaque, errorResult, findNetworkCause, isTlsCause, phaseOf } from './network-error.js';
import type { Transport } from './transport.js';

/**
 * fetch as Node runs it (undici): a failed fetch is `TypeError('fetch failed')` whose `cause` (sometimes
 * nested) carries a code that says where it failed. This is the `fetchTransport` of the `failwise`
 * entry under Node (the package's `node` export condition), so browsers never ship these tables.
 */
export function undiciFetchTransport(options: FetchTransportOptions = {}): Transport {
  return fetchTransportWith({ explainError: explainUndiciFetchError, ...options }, responseFromBytes);
}

/** The phase of a failed undici fetch, from its cause's code; docs/transports.md has the table. */
export function explainUndiciFetchError(error: unknown, host: string, readingBody: boolean): TransportResult {
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
  if (cause === undefined) return explainOpaqueFetchError(error, host, false);
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
