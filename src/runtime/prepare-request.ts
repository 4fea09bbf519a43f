import { isWrite } from '../policy/methods.js';
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

const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
const FIELDS = new Set([
  'method',
  'path',
  'headers',
  'body',
  'lifetime',
  'idempotencyKey',
  'idempotent',
  'deadlineMs',
  'signal',
]);

/** Checks a request and turns it into what every attempt sends; throws `RequestError` naming the field. */
export function prepareRequest(
  request: FailoverRequest,
  generateKey: () => string,
  extraFields?: ReadonlySet<string>,
): PreparedRequest {
  if (typeof request !== 'object' || request === null)
    throw new RequestError('(request)', 'expected an object');
  for (const key of Object.keys(request)) {
    if (!FIELDS.has(key) && !extraFields?.has(key)) throw new RequestError(key, 'unknown field');
  }
  const method = (request.method ?? 'GET').toString();
  if (!TOKEN.test(method))
    throw new RequestError('method', `expected an HTTP method token, got ${JSON.stringify(method)}`);
  const upper = method.toUpperCase();

  if (typeof request.path !== 'string' || !request.path.startsWith('/') || request.path.startsWith('//')) {
    throw new RequestError('path', `expected a path starting with "/", got ${JSON.stringify(request.path)}`);
  }
  const lifetime = request.lifetime ?? 'interactive';
  if (lifetime !== 'interactive') {
    if (lifetime === 'durable' || lifetime === 'cached') {
      throw new RequestError(
        'lifetime',
        `"${lifetime}" needs the outbox and cache, which this version does not have yet`,
      );
    }
    throw new RequestError(
      'lifetime',
      `expected "interactive", "durable" or "cached", got ${JSON.stringify(lifetime)}`,
    );
  }
  if (request.idempotent !== undefined && typeof request.idempotent !== 'boolean') {
    throw new RequestError('idempotent', 'expected a boolean');
  }
  let idempotencyKey: string | undefined;
  if (request.idempotencyKey === 'auto') idempotencyKey = generateKey();
  else if (request.idempotencyKey !== undefined) {
    if (
      typeof request.idempotencyKey !== 'string' ||
      request.idempotencyKey.trim() === '' ||
      /[\r\n]/.test(request.idempotencyKey)
    ) {
      throw new RequestError('idempotencyKey', 'expected a non-empty single-line string or "auto"');
    }
    idempotencyKey = request.idempotencyKey;
  }
  if (request.deadlineMs !== undefined && !(Number.isFinite(request.deadlineMs) && request.deadlineMs > 0)) {
    throw new RequestError('deadlineMs', `expected a number > 0, got ${String(request.deadlineMs)}`);
  }
  if (request.signal !== undefined && !isAbortSignal(request.signal))
    throw new RequestError('signal', 'expected an AbortSignal');

  let headers: Record<string, string> = {};
  try {
    new Headers(request.headers).forEach((value, name) => {
      headers[name] = value;
    });
  } catch (cause) {
    throw new RequestError('headers', 'expected a Headers object, a record of strings or a list of pairs', {
      cause,
    });
  }
  const body = normalizeBody(request.body);
  if (body.value !== undefined && (upper === 'GET' || upper === 'HEAD')) {
    throw new RequestError('body', `a ${upper} request cannot have a body`);
  }
  if (body.contentType !== undefined && headers['content-type'] === undefined) {
    headers = { ...headers, 'content-type': body.contentType };
  }
  return {
    method: upper,
    path: request.path,
    headers,
    write: isWrite(upper, request.idempotent),
    body: body.value,
    idempotencyKey,
    deadlineMs: request.deadlineMs,
    signal: request.signal,
  };
}

function isAbortSignal(value: unknown): value is AbortSignal {
  return (
    typeof value === 'object' &&
    value !== null &&
    typeof (value as AbortSignal).aborted === 'boolean' &&
    typeof (value as AbortSignal).addEventListener === 'function'
  );
}

function normalizeBody(body: FailoverRequest['body']): { value?: string | Uint8Array; contentType?: string } {
  if (body === undefined || body === null) return {};
  if (typeof body === 'string') return { value: body };
  if (body instanceof Uint8Array) return { value: body };
  if (body instanceof ArrayBuffer) return { value: new Uint8Array(body.slice(0)) };
  if (ArrayBuffer.isView(body))
    return { value: new Uint8Array(body.buffer.slice(body.byteOffset, body.byteOffset + body.byteLength)) };
  if (body instanceof URLSearchParams)
    return { value: body.toString(), contentType: 'application/x-www-form-urlencoded;charset=UTF-8' };
  throw new RequestError(
    'body',
    'expected a string, bytes or URLSearchParams: a stream, Blob or FormData cannot be replayed safely',
  );
}
