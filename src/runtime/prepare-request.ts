import { errorNameOf } from '../policy/error-name.js';
import { isMethodToken, isWrite } from '../policy/methods.js';
import { describeValue, MAX_TIMER_MS } from '../policy/schema.js';
import { headersProblem } from './header-fields.js';
import { RequestError } from '../errors/request-error.js';
import type { IdempotencyQuestion } from '../policy/graphql-query.js';
import type { RequestPolicyInput } from '../policy/request-policy.js';
import { checkFetchOptions, type FetchOptions } from '../transports/fetch-options.js';

/**
 * fetch's `HeadersInit`, written out: a Node project's types (`lib: ["ES2022"]`, `types: ["node"]`) have `Headers`
 * but not that name, and this declaration ships in the package's .d.ts.
 */
export type RequestHeaders = [string, string][] | Record<string, string> | Headers;

/** One request, as `client.request` takes it. */
export interface FailoverRequest {
  /** @default 'GET' */
  method?: string | undefined;
  /** Joined to the chosen origin's url, e.g. `/v1/orders?page=2`. Must start with `/`. */
  path: string;
  headers?: RequestHeaders | undefined;
  /** A replayable body: failwise may send the same bytes again. Streams, Blobs and FormData are refused. */
  body?: string | Uint8Array | ArrayBuffer | ArrayBufferView | URLSearchParams | null | undefined;
  /**
   * `interactive` requests retry within their budget, then fail visibly. `durable` requests are written to the
   * outbox first and sent until they succeed or are dead-lettered, across restarts (docs/durable.md). `cached`
   * GETs and HEADs are answered from the cache, marked `stale`, when the network path fails or while a refresh
   * of the same key runs: only for screens that can show data that may be old.
   * @default 'interactive'
   */
  lifetime?: 'interactive' | 'durable' | 'cached' | undefined;
  /**
   * Durable requests with the same `orderKey` are sent in the order they were made (with
   * `policy.durable.order: 'per-key'`; with `'fifo'` every durable request keeps its order).
   */
  orderKey?: string | undefined;
  /**
   * A durable request with the `replaceKey` of an entry still pending (not being sent) replaces it in the same
   * store write, as WorkManager's `ExistingWorkPolicy.REPLACE`: the older one is removed unsent (a draft saved five
   * times offline is sent once, the last). Its caller is told by an `outbox-changed` event, `reason: 'replaced'`.
   */
  replaceKey?: string | undefined;
  /** What a cached read is kept under. @default the method and path, e.g. `GET /v1/items?page=2` */
  cacheKey?: string | undefined;
  /** A key that makes a write safe to replay; the string `'auto'` generates one (sent as `policy.idempotency.header`). */
  idempotencyKey?: string | undefined;
  /**
   * Overrides the write test: `true` declares this request safe to replay (e.g. a POST that is really a
   * query), `false` declares a PUT or DELETE unsafe to replay.
   */
  idempotent?: boolean | undefined;
  /**
   * This request's time budget, overriding `policy.budgetMs`: an integer from 1 to 2147483647 ms (the longest
   * delay a host timer can wait).
   */
  deadlineMs?: number | undefined;
  /** Cancels at once: the request ends `failed` / `cancelled` and nothing more is sent. */
  signal?: AbortSignal | undefined;
  /**
   * fetch's own `RequestInit` members (`credentials`, `mode`, `redirect`, `cache`, `referrer`, `referrerPolicy`,
   * `integrity`, `keepalive`, `priority`), passed on to the fetch transport with every attempt. Not for durable
   * work, which is stored and sent later by the outbox (refused with `RequestError`).
   */
  fetchOptions?: FetchOptions | undefined;
  /**
   * Hand the response over when its headers arrive, its body unread, whatever its length. Server-sent events
   * (`text/event-stream`) and bodies of unknown length or over 1 MiB are handed over so anyway; shorter ones are
   * read within the attempt, so that a connection lost mid-body is a failed attempt that may be retried
   * (docs/transports.md, "Streaming").
   */
  stream?: boolean | undefined;
  /**
   * This request's own policy: any part of `attempts`, `budgetMs`, `timeouts`, `backoff`, `retryableStatuses` and
   * `retryAfter`, laid over its route's policy (the client's `routes`) and the client's `policy`. Checked as the
   * client's is; a client-wide part (`health`, `retryBudget`, `durable`, ...) is refused by name. A durable
   * request keeps it in its outbox entry, and every send of the entry runs by it (docs/policy.md#request-policies).
   */
  policy?: RequestPolicyInput | undefined;
}

/** Says whether a request that has no `idempotent` field is safe to replay (the client's `isIdempotent`). */
export type IsIdempotent = (request: IdempotencyQuestion) => boolean | undefined;

export interface PreparedRequest {
  lifetime: 'interactive' | 'durable' | 'cached';
  orderKey?: string | undefined;
  replaceKey?: string | undefined;
  cacheKey?: string | undefined;
  /** The request's own `idempotent` override, kept with a durable entry. */
  idempotent?: boolean | undefined;
  method: string;
  path: string;
  /** Lower-case names; shared among requests that give none, so never written to (an attempt copies them). */
  headers: Readonly<Record<string, string>>;
  body?: string | Uint8Array | undefined;
  write: boolean;
  idempotencyKey?: string | undefined;
  deadlineMs?: number | undefined;
  signal?: AbortSignal | undefined;
  fetchOptions?: FetchOptions | undefined;
  stream?: boolean | undefined;
  /** The request's own policy, as given (checked when it is laid over its route's: route-request.ts). */
  policy?: RequestPolicyInput | undefined;
  /** The route that matched the request, by name (its `id` or index), once one did. */
  route?: string | number | undefined;
}

/** failwise's own request fields, beyond what fetch's `init` has (`client.fetch` takes them from `init` too). */
export const OWN_FIELDS = [
  'lifetime',
  'orderKey',
  'replaceKey',
  'cacheKey',
  'idempotencyKey',
  'idempotent',
  'deadlineMs',
  'stream',
  'policy',
] as const;

const FIELDS: ReadonlySet<string> = new Set([
  'method',
  'path',
  'headers',
  'body',
  'signal',
  'fetchOptions',
  ...OWN_FIELDS,
]);

const fail = (field: string, message: string, cause?: unknown): never => {
  throw new RequestError(field, message, { cause });
};
// describeValue never throws (a BigInt, a cycle or a null-prototype object would break JSON.stringify or String).
const got = (value: unknown) => `, got ${describeValue(value)}`;

/** Whether a path starts with one `/` (not two: `//host` would name another host). */
const isPath = (path: string): boolean => path.charCodeAt(0) === 0x2f && path.charCodeAt(1) !== 0x2f;

/** Headers that carry credentials: a durable request must not hold them, or they would be written to the store. */
export const CREDENTIAL_HEADERS = ['authorization', 'proxy-authorization', 'cookie'];

/** An idempotency key as a header value can carry it: printable ASCII, not only spaces (fetch refuses the rest). */
export const KEY = /^[\x20-\x7e]*[\x21-\x7e][\x20-\x7e]*$/;

/**
 * A path as an error message may show it: cut after its `?` or `#`, as the query and fragment often carry
 * tokens (decision events cut them too, rule 9), and at 60 characters.
 */
export const describePath = (path: string): string =>
  JSON.stringify(path.replace(/([?#]).*/s, '$1…').slice(0, 60));

type Lifetime = PreparedRequest['lifetime'];
type Body = string | Uint8Array | undefined;

/** failwise's own fields of a request: the request's, or for `client.fetch` its `init`'s. */
export type OwnFields = Pick<FailoverRequest, (typeof OWN_FIELDS)[number]>;

/**
 * Checks a request and turns it into what every attempt sends; throws `RequestError` naming the field.
 * `generateKey` makes the key of `idempotencyKey: 'auto'` (and of a durable request without one); it throws
 * a `RequestError` itself when it cannot. The fields are checked one after another in this order: a request
 * with more than one wrong field is refused for the first of them.
 */
export function prepareRequest(
  request: FailoverRequest,
  generateKey: () => string,
  isIdempotent?: IsIdempotent,
): PreparedRequest {
  checkFields(request);
  const { method, path, headers, body, signal, fetchOptions } = request;
  return checkedRequest(
    request,
    method,
    path,
    headers,
    body,
    signal,
    fetchOptions,
    generateKey,
    isIdempotent,
  );
}

/**
 * The checks of `prepareRequest` on a request's parts, given one by one so that `client.fetch`, which reads them
 * from fetch's input and init, makes no request object before this one: `own` holds failwise's own fields
 * (`lifetime`, `orderKey`, ...), where fetch's `init` may hold members failwise ignores, as fetch does.
 */
export function checkedRequest(
  own: OwnFields,
  requestedMethod: string | undefined,
  path: string,
  requestedHeaders: RequestHeaders | undefined,
  requestedBody: FailoverRequest['body'],
  signal: AbortSignal | undefined,
  requestedFetchOptions: FetchOptions | undefined,
  generateKey: () => string,
  isIdempotent: IsIdempotent | undefined,
): PreparedRequest {
  const {
    lifetime = 'interactive',
    idempotent,
    idempotencyKey: key,
    deadlineMs,
    orderKey,
    replaceKey,
    cacheKey,
  } = own;
  const method = methodOf(requestedMethod);
  checkPath(path);
  checkLifetime(lifetime, method, orderKey, cacheKey);
  if (replaceKey !== undefined && (typeof replaceKey !== 'string' || replaceKey === ''))
    fail('replaceKey', `expected a non-empty string${got(replaceKey)}`);
  if (replaceKey !== undefined && lifetime !== 'durable')
    fail('replaceKey', 'only a durable request has a replace key');
  checkValues(idempotent, own.stream, key, deadlineMs, signal);
  let headers = headersOf(requestedHeaders);
  const body = bodyOf(requestedBody, method);
  // A form's own content type, unless the request sets one.
  if (body !== undefined && requestedBody instanceof URLSearchParams && headers['content-type'] === undefined)
    headers = { ...headers, 'content-type': 'application/x-www-form-urlencoded;charset=UTF-8' };
  const fetchOptions = checkFetchOptions(requestedFetchOptions);
  if (fetchOptions !== undefined && lifetime === 'durable')
    fail(
      'fetchOptions',
      'a durable request is stored and sent later by the outbox: it takes no fetch options',
    );
  // The request's own verdict, else the app's, else none (the method decides).
  const verdict =
    idempotent ??
    (isIdempotent === undefined
      ? undefined
      : appVerdict(isIdempotent, { method, path, headers: { ...headers }, body }));
  // A durable request is stored: credentials in its headers would be written to the store.
  if (lifetime === 'durable') {
    for (const name of CREDENTIAL_HEADERS)
      if (name in headers)
        fail(
          'headers',
          `a durable request is stored, so it must not carry ${name}: give credentials with \`auth\``,
        );
  }
  const prepared: PreparedRequest = {
    lifetime,
    method,
    path,
    headers,
    write: isWrite(method, verdict),
    body,
    // Durable work always has a key (generated when it has none): a resend is always safe (rule 10).
    idempotencyKey: key === 'auto' || (key === undefined && lifetime === 'durable') ? generateKey() : key,
    deadlineMs,
    signal,
    fetchOptions,
    stream: own.stream,
    policy: own.policy,
    route: undefined,
  };
  // The fields only durable and cached requests keep: an interactive request, the most common by far, holds
  // none of them (nor reads them) while it is in flight.
  if (lifetime !== 'interactive') {
    prepared.orderKey = orderKey;
    prepared.replaceKey = replaceKey;
    prepared.cacheKey = cacheKey;
    prepared.idempotent = verdict;
  }
  return prepared;
}

/** The request is an object, and has only the fields failwise knows. */
function checkFields(request: FailoverRequest): void {
  // A string is shown by its kind only: it is most likely a path, whose query may carry a token.
  if (typeof request !== 'object' || request === null)
    fail(
      '',
      `expected an object ({ path, ... })${typeof request === 'string' ? ', got a string' : got(request)}`,
    );
  for (const key of Object.keys(request)) {
    if (!FIELDS.has(key)) fail(key, 'unknown field');
  }
}

/** The method, upper-cased as it is sent: GET when the request names none. */
function methodOf(requested: string | undefined): string {
  const method = requested ?? 'GET';
  if (typeof method !== 'string' || !isMethodToken(method))
    fail('method', `expected an HTTP method token${got(method)}`);
  return method.toUpperCase();
}

function checkPath(path: string): void {
  if (typeof path !== 'string') fail('path', `expected a path starting with "/"${got(path)}`);
  else if (!isPath(path)) fail('path', `expected a path starting with "/", got ${describePath(path)}`);
}

/** The lifetime, and the fields only one lifetime takes: a durable request's order key, a cached one's key. */
function checkLifetime(
  lifetime: Lifetime,
  method: string,
  orderKey: string | undefined,
  cacheKey: string | undefined,
): void {
  if (lifetime !== 'interactive' && lifetime !== 'durable' && lifetime !== 'cached')
    fail('lifetime', `expected "interactive", "durable" or "cached"${got(lifetime)}`);
  if (orderKey !== undefined && (typeof orderKey !== 'string' || orderKey === ''))
    fail('orderKey', 'expected a non-empty string');
  if (orderKey !== undefined && lifetime !== 'durable')
    fail('orderKey', 'only a durable request has an order key');
  if (lifetime === 'cached' && !/^(GET|HEAD)$/.test(method))
    fail('lifetime', `"cached" is for GET and HEAD requests, got ${method}`);
  if (cacheKey !== undefined && (typeof cacheKey !== 'string' || cacheKey === ''))
    fail('cacheKey', 'expected a non-empty string');
  if (cacheKey !== undefined && lifetime !== 'cached')
    fail('cacheKey', 'only a cached request has a cache key');
}

/**
 * The fields that are each one value of a given kind: `idempotent` and `stream` (booleans), `idempotencyKey`,
 * `deadlineMs` and `signal`.
 */
function checkValues(
  idempotent: boolean | undefined,
  stream: boolean | undefined,
  key: string | undefined,
  deadlineMs: number | undefined,
  signal: AbortSignal | undefined,
): void {
  if (idempotent !== undefined && typeof idempotent !== 'boolean') fail('idempotent', 'expected a boolean');
  if (stream !== undefined && typeof stream !== 'boolean') fail('stream', 'expected a boolean');
  if (key !== undefined && (typeof key !== 'string' || !KEY.test(key))) {
    fail('idempotencyKey', 'expected a non-empty string of printable ASCII (a header value) or "auto"');
  }
  // An integer the host timer can wait: typeof first, as `>` would coerce '1000', true and [5] to numbers.
  if (
    deadlineMs !== undefined &&
    !(
      typeof deadlineMs === 'number' &&
      Number.isInteger(deadlineMs) &&
      deadlineMs >= 1 &&
      deadlineMs <= MAX_TIMER_MS
    )
  ) {
    fail('deadlineMs', `expected an integer from 1 to ${MAX_TIMER_MS} (ms)${got(deadlineMs)}`);
  }
  if (
    signal !== undefined &&
    (typeof signal?.addEventListener !== 'function' ||
      typeof signal.removeEventListener !== 'function' ||
      typeof signal.aborted !== 'boolean')
  )
    fail('signal', 'expected an AbortSignal');
}

/** The request's headers as a record of lower-case names. */
function headersOf(requested: RequestHeaders | undefined): Readonly<Record<string, string>> {
  // Most requests carry no headers of their own: no Headers object to build and walk, nor a record to hold.
  if (requested === undefined) return NO_HEADERS;
  const headers: Record<string, string> = {};
  try {
    new Headers(requested).forEach((value, name) => (headers[name] = value));
  } catch {
    // Not the host's error, as message or cause: it quotes the bad value, which may be a token (rule 9).
    const { field, message } = headersProblem(requested);
    fail(field, message);
  }
  return headers;
}

/** A request's headers when it gives none: every attempt copies them before adding its own. */
const NO_HEADERS: Readonly<Record<string, string>> = Object.freeze({});

/** The body as it is sent again on every attempt: a string or a copy of the bytes; URLSearchParams, their string. */
function bodyOf(requested: FailoverRequest['body'], method: string): Body {
  let body = requested ?? undefined;
  if (body instanceof URLSearchParams) {
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
  if (body !== undefined && /^(GET|HEAD)$/.test(method))
    fail('body', `a ${method} request cannot have a body`);
  return body as Body;
}

/** The app's verdict on a request that gives none (e.g. isGraphQLQuery: a GraphQL read sent as a POST). */
function appVerdict(isIdempotent: IsIdempotent, question: IdempotencyQuestion): boolean | undefined {
  let answer: unknown;
  try {
    answer = isIdempotent(question);
  } catch (error) {
    fail('(isIdempotent)', `the client's isIdempotent threw (${errorNameOf(error)})`, error);
  }
  if (answer !== undefined && typeof answer !== 'boolean')
    fail('(isIdempotent)', `the client's isIdempotent must return true, false or undefined${got(answer)}`);
  return answer as boolean | undefined;
}
