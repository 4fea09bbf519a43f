import { abortReasonOf } from '../errors/abort-error.js';
import { RequestError } from '../errors/request-error.js';
import { pickFetchOptions, REQUEST_DEFAULTS } from '../transports/fetch-options.js';
import { headersProblem } from './header-fields.js';
import { canonicalOrigin } from './origin-url.js';
import {
  checkedRequest,
  type FailoverRequest,
  type IsIdempotent,
  type OwnFields,
  type PreparedRequest,
  type RequestHeaders,
} from './prepare-request.js';

/** fetch's `init`, plus failwise's request fields (`lifetime`, `idempotencyKey`, `idempotent`, ...). */
export type FetchInit = RequestInit &
  Omit<FailoverRequest, 'path' | 'method' | 'headers' | 'body' | 'signal' | 'fetchOptions'>;

/**
 * What `client.fetch(input, init)` asks for, checked as `prepareRequest` checks a failwise request (the same
 * errors): the path under one of the client's origins (a path as given; an absolute URL or a `Request`'s URL
 * mapped onto the path after the origin's url, so that failover still applies), the method, headers, body (read
 * once, as bytes, when it is not already a string or bytes), signal and fetch's own members, `init`'s over the
 * `Request`'s as fetch takes them, and failwise's own fields from `init`. Rejects with `RequestError` for a URL
 * under no configured origin, and, as fetch, with the signal's reason when it is already aborted.
 */
export async function prepareFetchInput(
  input: string | URL | Request,
  init: FetchInit | undefined,
  bases: readonly string[],
  generateKey: () => string,
  isIdempotent: IsIdempotent | undefined,
): Promise<PreparedRequest> {
  const request = isRequest(input) ? input : undefined;
  const url: unknown = request ? request.url : input instanceof URL ? input.href : input;
  const path = pathOf(url, bases);
  const headers = headersOf(init?.headers ?? request?.headers);
  let body: FailoverRequest['body'];
  if (init?.body !== undefined && init.body !== null) body = await bytesOf(init.body, headers);
  else if (init?.body === undefined && request) body = await requestBodyOf(request);
  const signal = (init?.signal ?? request?.signal) || undefined;
  // As fetch: an already aborted signal rejects at once, before anything is sent.
  if (signal?.aborted) throw abortReasonOf(signal);
  // The Request's own members where it was given any, init's over them.
  const fetchOptions = {
    ...(request && pickFetchOptions(request, REQUEST_DEFAULTS)),
    ...(init && pickFetchOptions(init)),
  };
  return checkedRequest(
    init ?? NO_FIELDS,
    init?.method ?? request?.method ?? 'GET',
    path,
    headers,
    body,
    signal,
    Object.keys(fetchOptions).length > 0 ? fetchOptions : undefined,
    generateKey,
    isIdempotent,
  );
}

const NO_FIELDS: OwnFields = {};

/**
 * fetch's `Headers` of `init`, or a `RequestError` naming the header at fault: fetch's own `TypeError` would be
 * the host's (undici's quotes the value, which may be a token).
 */
function headersOf(init: RequestHeaders | undefined): Headers {
  try {
    return new Headers(init);
  } catch {
    const { field, message } = headersProblem(init);
    throw new RequestError(field, message);
  }
}

function isRequest(value: unknown): value is Request {
  return typeof Request === 'function' && value instanceof Request;
}

/**
 * The path after the origin's url that `url` starts with, or the path itself when it starts with `/`. An origin's
 * `base` has no trailing slash, so `https://api.example.com/v1` takes `https://api.example.com/v1/items` but not
 * `https://api.example.com/v10`.
 */
function pathOf(url: unknown, bases: readonly string[]): string {
  if (typeof url !== 'string')
    throw new RequestError('input', 'expected a path, a URL string, a URL or a Request');
  if (url.startsWith('/') && !url.startsWith('//')) return url;
  let parsed: URL;
  try {
    // Scheme and host in lower case, as the origins' bases are: React Native's URL keeps them as given.
    parsed = new URL(canonicalOrigin(url));
  } catch {
    throw new RequestError(
      'input',
      'expected a path starting with "/" or an absolute URL under a configured origin',
    );
  }
  const href = parsed.href;
  for (const base of bases) {
    if (!href.startsWith(base)) continue;
    const rest = href.slice(base.length);
    if (rest === '' || rest.startsWith('?') || rest.startsWith('#')) return `/${rest}`;
    if (rest.startsWith('/')) return rest;
  }
  // Only the origin in the message: the path and query may carry tokens (rule 9).
  throw new RequestError('input', `${parsed.origin} is not under any configured origin`);
}

/**
 * A `Request`'s body as bytes, read once; none for a request without one, or an empty one. whatwg-fetch's `Request`
 * (React Native) has no `body` member: it is read unless its method takes no body.
 */
async function requestBodyOf(request: Request): Promise<Uint8Array | undefined> {
  if (Reflect.has(request, 'body') ? request.body === null : /^(GET|HEAD)$/i.test(request.method))
    return undefined;
  const bytes = await readBody(request, 'input');
  return bytes.byteLength > 0 ? bytes : undefined;
}

/** A body as bytes (or the string it is), read once; a FormData or Blob body also sets its content type. */
async function bytesOf(body: BodyInit, headers: Headers): Promise<FailoverRequest['body']> {
  if (typeof body === 'string' || body instanceof Uint8Array || body instanceof ArrayBuffer) return body;
  if (ArrayBuffer.isView(body) || body instanceof URLSearchParams) return body;
  // Blob, FormData, a stream: what fetch would send, made by fetch's own Request (boundary and type included).
  const request = new Request('http://failwise.invalid/', {
    method: 'POST',
    body,
    duplex: 'half',
  } as RequestInit);
  const type = request.headers.get('content-type');
  if (type !== null && !headers.has('content-type')) headers.set('content-type', type);
  return readBody(request, 'body');
}

/**
 * `request.arrayBuffer()`, or a `RequestError` naming `field` where the runtime's `Request` cannot make the bytes:
 * whatwg-fetch's (React Native) cannot serialise a FormData body, which its XMLHttpRequest sends natively.
 */
async function readBody(request: Request, field: string): Promise<Uint8Array> {
  try {
    return new Uint8Array(await request.arrayBuffer());
  } catch (error) {
    throw new RequestError(
      field,
      "this runtime's fetch cannot read the body as bytes (a FormData needs a native Request); send a string, bytes, a Blob or URLSearchParams",
      { cause: error },
    );
  }
}
