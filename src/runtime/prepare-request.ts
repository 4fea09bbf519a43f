import { HTTP_TOKEN, isWrite } from '../policy/methods.js';
import { RequestError } from '../errors/request-error.js';

/** One request, as `client.request` takes it. */
export interface FailoverRequest {
  /** @default 'GET' */
  method?: string | undefined;
  /** Joined to the chosen origin's url, e.g. `/v1/orders?page=2`. Must start with `/`. */
  path: string;
  headers?: HeadersInit | undefined;
  /** A replayable body: failwise may send the same bytes again. Streams, Blobs and FormData are refused. */
  body?: string | Uint8Array | ArrayBuffer | ArrayBufferView | URLSearchParams | null | undefined;
  /**
   * `interactive` requests retry within their budget, then fail visibly. `durable` and `cached` arrive
   * with the outbox and the cache (see docs/guide.md).
   * @default 'interactive'
   */
  lifetime?: 'interactive' | 'durable' | 'cached' | undefined;
  /** A key that makes a write safe to replay; the string `'auto'` generates one (sent as `policy.idempotency.header`). */
  idempotencyKey?: string | undefined;
  /**
   * Overrides the write test: `true` declares this request safe to replay (e.g. a POST that is really a
   * query), `false` declares a PUT or DELETE unsafe to replay.
   */
  idempotent?: boolean | undefined;
  /** This request's time budget, overriding `policy.budgetMs`. */
  deadlineMs?: number | undefined;
  /** Cancels at once: the request ends `failed` / `cancelled` and nothing more is sent. */
  signal?: AbortSignal | undefined;
}

export interface PreparedRequest {
  method: string;
  path: string;
  headers: Record<string, string>;
  body?: string | Uint8Array | undefined;
  write: boolean;
  idempotencyKey?: string | undefined;
  deadlineMs?: number | undefined;
  signal?: AbortSignal | undefined;
}

const FIELDS = /^(method|path|headers|body|lifetime|idempotencyKey|idempotent|deadlineMs|signal)$/;

/**
 * Checks a request and turns it into what every attempt sends; throws `RequestError` naming the field.
 * `strict: false` ignores unknown fields, as fetch ignores unknown `init` members (for `client.fetch`).
 */
export function prepareRequest(
  request: FailoverRequest,
  generateKey: () => string,
  strict = true,
): PreparedRequest {
  const fail = (field: string, message: string, cause?: unknown): never => {
    throw new RequestError(field, message, { cause });
  };
  const got = (value: unknown) => `, got ${JSON.stringify(value) ?? String(value)}`;
  if (typeof request !== 'object' || request === null) fail('(request)', 'expected an object');
  for (const key of Object.keys(request)) {
    if (strict && !FIELDS.test(key)) fail(key, 'unknown field');
  }
  const { path, lifetime = 'interactive', idempotent, idempotencyKey: key, deadlineMs, signal } = request;
  const method = String(request.method ?? 'GET');
  if (!HTTP_TOKEN.test(method)) fail('method', `expected an HTTP method token${got(method)}`);
  const upper = method.toUpperCase();
  if (typeof path !== 'string' || !/^\/(?!\/)/.test(path))
    fail('path', `expected a path starting with "/"${got(path)}`);
  if (lifetime === 'durable' || lifetime === 'cached') {
    fail('lifetime', `"${lifetime}" is not available yet: it needs the outbox`);
  }
  if (lifetime !== 'interactive')
    fail('lifetime', `expected "interactive", "durable" or "cached"${got(lifetime)}`);
  if (idempotent !== undefined && typeof idempotent !== 'boolean') fail('idempotent', 'expected a boolean');
  if (key !== undefined && (typeof key !== 'string' || !/^[^\r\n]*\S[^\r\n]*$/.test(key))) {
    fail('idempotencyKey', 'expected a non-empty single-line string or "auto"');
  }
  if (deadlineMs !== undefined && !(deadlineMs > 0 && deadlineMs < Infinity)) {
    fail('deadlineMs', `expected a number > 0${got(deadlineMs)}`);
  }
  if (signal !== undefined && typeof signal?.addEventListener !== 'function')
    fail('signal', 'expected an AbortSignal');
  const headers: Record<string, string> = {};
  try {
    new Headers(request.headers).forEach((value, name) => (headers[name] = value));
  } catch (cause) {
    fail('headers', 'expected a Headers object, a record of strings or a list of pairs', cause);
  }
  let body = request.body ?? undefined;
  if (body instanceof URLSearchParams) {
    headers['content-type'] ??= 'application/x-www-form-urlencoded;charset=UTF-8';
    body = body.toString();
  } else if (body instanceof ArrayBuffer || ArrayBuffer.isView(body)) {
    // A copy: the app may reuse its buffer while failwise still needs the bytes for a retry.
    body = new Uint8Array(
      ArrayBuffer.isView(body)
        ? body.buffer.slice(body.byteOffset, body.byteOffset + body.byteLength)
        : body.slice(0),
    );
  } else if (body !== undefined && typeof body !== 'string') {
    fail(
      'body',
      'expected a string, bytes or URLSearchParams: a stream, Blob or FormData cannot be replayed safely',
    );
  }
  if (body !== undefined && /^(GET|HEAD)$/.test(upper)) fail('body', `a ${upper} request cannot have a body`);
  return {
    method: upper,
    path: path,
    headers,
    write: isWrite(upper, idempotent),
    body: body as string | Uint8Array | undefined,
    idempotencyKey: key === 'auto' ? generateKey() : key,
    deadlineMs,
    signal,
  };
}
