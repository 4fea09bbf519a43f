/**
 * @internal
 * What the built-in transports share for turning a low-level network error into a
 * `TransportResult`: finding the coded cause, the code tables and redaction-safe messages.
 * No Node built-in is imported here: fetchTransport runs in browsers too.
 */
import type { TransportErrorPhase, TransportResult } from '../policy/transport-result.js';

type RequestSent = 'no' | 'yes' | 'unknown';

/** The part of an error the transports read: never its message, which may hold a URL or a value. */
export interface NetworkCause {
  code: string;
  syscall?: string;
  /** Kept only to recognise a few fixed Node/OpenSSL messages; never copied into a result. */
  message: string;
}

/** Host name resolution failed: nothing was sent. */
const DNS_CODES: ReadonlySet<string> = new Set([
  'ENOTFOUND',
  'EAI_AGAIN',
  'EAI_NONAME',
  'EAI_FAIL',
  'EAI_NODATA',
  'EAI_ADDRFAMILY',
  'ENODATA',
  'ESERVFAIL',
]);

/** The connection could not be made: nothing was sent. */
const CONNECT_CODES: ReadonlySet<string> = new Set([
  'ECONNREFUSED',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EADDRNOTAVAIL',
  'ENETDOWN',
  'EHOSTDOWN',
  'EADDRINUSE',
]);

/** The connection broke after the request may have gone out. */
const LOST_CODES: ReadonlySet<string> = new Set([
  'UND_ERR_SOCKET',
  'UND_ERR_CLOSED',
  'ECONNRESET',
  'EPIPE',
  'ECONNABORTED',
  'ETIMEDOUT',
]);

/** OpenSSL certificate-verification codes as Node reports them (besides the prefixed ones below). */
const TLS_CODES: ReadonlySet<string> = new Set([
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'INVALID_CA',
  'PATH_LENGTH_EXCEEDED',
  'INVALID_PURPOSE',
  'HOSTNAME_MISMATCH',
  'OUT_OF_MEM',
]);

const TLS_CODE_PREFIXES = ['ERR_TLS_', 'ERR_SSL_', 'CERT_', 'CRL_', 'UNABLE_TO_', 'ERROR_IN_'] as const;

/** Node's message when the peer closes the socket during the TLS handshake (code ECONNRESET). */
const TLS_DISCONNECT_MESSAGE = 'before secure TLS connection was established';

export function isDnsCode(code: string): boolean {
  return DNS_CODES.has(code);
}

export function isConnectCode(code: string): boolean {
  return CONNECT_CODES.has(code);
}

export function isTlsCause(cause: NetworkCause): boolean {
  const { code, message } = cause;
  if (TLS_CODES.has(code) || TLS_CODE_PREFIXES.some((prefix) => code.startsWith(prefix))) return true;
  if (code === 'EPROTO') return /ssl|tls/i.test(message);
  return code === 'ECONNRESET' && message.includes(TLS_DISCONNECT_MESSAGE);
}

export function isLostCode(code: string): boolean {
  return LOST_CODES.has(code);
}

/**
 * The first error in `error`, `error.cause`, `error.cause.cause`... (and the first of an
 * AggregateError's `errors`) that carries a string `code`, as undici and Node's net/tls report it.
 */
export function findNetworkCause(error: unknown): NetworkCause | undefined {
  let current: unknown = error;
  for (let depth = 0; depth < 8 && typeof current === 'object' && current !== null; depth++) {
    const candidate = current as {
      code?: unknown;
      syscall?: unknown;
      message?: unknown;
      errors?: unknown;
      cause?: unknown;
    };
    if (typeof candidate.code === 'string' && candidate.code !== '') {
      const cause: NetworkCause = {
        code: candidate.code,
        message: typeof candidate.message === 'string' ? candidate.message : '',
      };
      if (typeof candidate.syscall === 'string') cause.syscall = candidate.syscall;
      return cause;
    }
    if (Array.isArray(candidate.errors) && candidate.errors.length > 0) {
      const inner = findNetworkCause(candidate.errors[0]);
      if (inner !== undefined) return inner;
    }
    current = candidate.cause;
  }
  return undefined;
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
const SAFE_OPAQUE_MESSAGES: ReadonlySet<string> = new Set([
  'fetch failed',
  'terminated',
  'bad port',
  'Failed to fetch',
  'Load failed',
  'NetworkError when attempting to fetch resource.',
  'Network request failed',
  'Network Error',
]);

/**
 * Describes an error that has no recognisable code. Its own message is repeated only when it is one
 * of a few fixed runtime messages: others (Deno's, or `Headers` validation) may quote the URL or a
 * header value.
 */
export function describeOpaque(error: unknown): string {
  const name = error instanceof Error ? error.name : typeof error;
  const message = error instanceof Error ? error.message : '';
  return SAFE_OPAQUE_MESSAGES.has(message) ? `${name}: ${message}` : name;
}

export function errorResult(
  phase: TransportErrorPhase,
  requestSent: RequestSent,
  message: string,
  code?: string,
): TransportResult {
  return code === undefined
    ? { kind: 'error', phase, requestSent, message }
    : { kind: 'error', phase, requestSent, message, code };
}

/** What a transport resolves with once `request.signal` fired: the engine has moved on and ignores it. */
export function abortedResult(): TransportResult {
  return { kind: 'error', phase: 'unknown', requestSent: 'unknown', message: 'aborted' };
}
