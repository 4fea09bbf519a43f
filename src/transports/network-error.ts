/**
 * @internal
 * What the built-in transports share for turning a low-level network error into a
 * `TransportResult`: finding the coded cause, the code tables and redaction-safe messages.
 * No Node built-in is imported here: fetchTransport runs in browsers too.
 */
import type { TransportErrorPhase, TransportResult } from '../policy/transport-result.js';

type RequestSent = 'no' | 'yes' | 'unknown';

/**
 * An error that carries a string `code`, as undici and Node's net/tls report it. The transports read
 * its code and syscall; its message, which may hold a URL or a value, only to recognise a few fixed
 * Node/OpenSSL messages, and never copy it into a result.
 */
export interface NetworkCause {
  code: string;
  syscall?: unknown;
  message?: unknown;
}

/**
 * The codes that name a phase without more context (docs/transports.md has the table). Host name
 * resolution failed (nothing was sent): ENOTFOUND, EAI_AGAIN, EAI_NONAME, EAI_FAIL, EAI_NODATA,
 * EAI_ADDRFAMILY, ENODATA, ESERVFAIL.
 */
const DNS_CODE = /^(ENOTFOUND|EAI_(AGAIN|NONAME|FAIL|NODATA|ADDRFAMILY)|ENODATA|ESERVFAIL)$/;
/**
 * The connection could not be made (nothing was sent): ECONNREFUSED, EHOSTUNREACH, ENETUNREACH,
 * EHOSTDOWN, ENETDOWN, EADDRNOTAVAIL, EADDRINUSE.
 */
const CONNECT_CODE = /^(ECONNREFUSED|E(HOST|NET)(UNREACH|DOWN)|EADDR(NOTAVAIL|INUSE))$/;
/**
 * The connection broke after the request may have gone out: UND_ERR_SOCKET, UND_ERR_CLOSED,
 * ECONNRESET, ECONNABORTED, EPIPE, ETIMEDOUT. (`ETIMEDOUT` and `ECONNRESET` mean `connect-timeout`
 * and `connect` when their syscall is `connect`; the transports decide that.)
 */
const LOST_CODE = /^(UND_ERR_(SOCKET|CLOSED)|ECONN(RESET|ABORTED)|EPIPE|ETIMEDOUT)$/;

/** The phase `code` names by itself, if any. */
export function phaseOf(code: string): TransportErrorPhase | undefined {
  return DNS_CODE.test(code)
    ? 'dns'
    : CONNECT_CODE.test(code)
      ? 'connect'
      : LOST_CODE.test(code)
        ? 'connection-lost'
        : undefined;
}

export function isDnsCode(code: string): boolean {
  return DNS_CODE.test(code);
}

/**
 * A TLS failure: an OpenSSL certificate-verification code as Node reports it (prefixed ones such as
 * `CERT_HAS_EXPIRED`, `DEPTH_ZERO_SELF_SIGNED_CERT`, `HOSTNAME_MISMATCH`...), a TLS/SSL code, `EPROTO`
 * with an SSL message, or Node's ECONNRESET when the peer closes the socket during the TLS handshake.
 * failwise's own pin codes (`CERT_PIN_MISMATCH`, `CERT_PIN_UNVERIFIABLE`, certificate-pins.ts) are
 * `CERT_` codes too.
 */
export function isTlsCause({ code, message }: NetworkCause): boolean {
  return (
    /^(ERR_(TLS|SSL)_|CERT_|CRL_|UNABLE_TO_|ERROR_IN_|(INVALID_(CA|PURPOSE)|PATH_LENGTH_EXCEEDED|HOSTNAME_MISMATCH|OUT_OF_MEM)$)|SELF_SIGNED_CERT/.test(
      code,
    ) ||
    (code === 'EPROTO' && /ssl|tls/i.test(String(message))) ||
    (code === 'ECONNRESET' && String(message).includes('before secure TLS connection was established'))
  );
}

/**
 * The first error in `error`, `error.cause`, `error.cause.cause`... (and the first of an
 * AggregateError's `errors`) that carries a string `code`, as undici and Node's net/tls report it.
 */
export function findNetworkCause(error: unknown, depth = 0): NetworkCause | undefined {
  if (depth > 7 || typeof error !== 'object' || error === null) return undefined;
  const { code, errors, cause } = error as { code?: unknown; errors?: unknown; cause?: unknown };
  if (typeof code === 'string' && code !== '') return error as NetworkCause;
  return (
    (Array.isArray(errors) ? findNetworkCause(errors[0], depth + 1) : undefined) ??
    findNetworkCause(cause, depth + 1)
  );
}

/** `host[:port]` of a URL, or a placeholder: a message never carries the path's query string (rule 9). */
export function hostOf(url: string): string {
  try {
    return new URL(url).host || 'unknown host';
  } catch {
    return 'an invalid URL';
  }
}

/** Messages of opaque errors that are safe to repeat: they hold no URL and no value. */
const SAFE_OPAQUE_MESSAGES: ReadonlySet<string> = new Set(
  'fetch failed|terminated|bad port|Failed to fetch|Load failed|NetworkError when attempting to fetch resource.|Network request failed'.split(
    '|',
  ),
);

/**
 * Describes an error that has no recognisable code. Its own message is repeated only when it is one
 * of a few fixed runtime messages: others (Deno's, or `Headers` validation) may quote the URL or a
 * header value.
 */
export function describeOpaque(error: unknown): string {
  if (!(error instanceof Error)) return typeof error;
  return SAFE_OPAQUE_MESSAGES.has(error.message) ? `${error.name}: ${error.message}` : error.name;
}

export function errorResult(
  phase: TransportErrorPhase,
  requestSent: RequestSent,
  message: string,
  code?: string,
): TransportResult {
  return { kind: 'error', phase, requestSent, message, ...(code === undefined ? {} : { code }) };
}

/** What a transport resolves with once `request.signal` fired: the engine has moved on and ignores it. */
export function abortedResult(): TransportResult {
  return errorResult('unknown', 'unknown', 'aborted');
}
