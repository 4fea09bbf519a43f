/**
 * @internal
 * Builds the WHATWG `Response` a transport hands back once it has read the whole body within the
 * attempt, so reading it later in app code cannot fail; and decides which bodies are not read so, but handed
 * over as a stream when the headers arrive.
 */

/**
 * The largest body a transport reads within the attempt (1 MiB). A body read there is safe to read later, and a
 * connection lost in the middle of it is a failed attempt that may be retried; but the whole of it is held in
 * memory, and a stream that never ends (server-sent events) would never end the attempt.
 */
export const BUFFER_LIMIT_BYTES = 1024 * 1024;

/**
 * Whether a response's body is handed over as a stream when its headers arrive rather than read within the
 * attempt: when the request asks for it (`stream: true`), for `text/event-stream`, and for a body of unknown
 * length (no `Content-Length`) or one longer than `BUFFER_LIMIT_BYTES`. A response with no body never streams.
 */
export function streamsBody(
  method: string,
  status: number,
  headers: { get(name: string): string | null },
  wanted: boolean | undefined,
): boolean {
  if (hasNoBody(method, status)) return false;
  if (wanted === true) return true;
  if (/^\s*text\/event-stream/i.test(headers.get('content-type') ?? '')) return true;
  const length = headers.get('content-length');
  if (length === null) return true;
  const bytes = Number(length);
  return !(Number.isFinite(bytes) && bytes <= BUFFER_LIMIT_BYTES);
}

/** Whether `new Response(...)` accepts this status (it only takes 200 to 599). */
export function isRepresentableStatus(status: number): boolean {
  return Number.isInteger(status) && status >= 200 && status <= 599;
}

/** Statuses whose response has no body: the `Response` constructor refuses a body for them. */
const NO_BODY_STATUSES: ReadonlySet<number> = new Set([101, 103, 204, 205, 304]);

/** Whether a response has no body: a bodiless status, or the answer to a HEAD (in any case of the method). */
function hasNoBody(method: string, status: number): boolean {
  return NO_BODY_STATUSES.has(status) || method.toUpperCase() === 'HEAD';
}

/** How a transport makes the `Response` over a body it read: `new Response`, or on Node `responseFromBytes`. */
export type ResponseFromBytes = (bytes: Uint8Array<ArrayBuffer>, init: ResponseInit) => Response;

const plainResponse: ResponseFromBytes = (bytes, init) => new Response(bytes, init);

/** The response over a body read within the attempt (`body` becomes the response's own), none for a 204 or a HEAD. */
export function bufferedResponse(
  method: string,
  status: number,
  statusText: string,
  headers: Headers | [string, string][],
  body: ArrayBuffer | Uint8Array<ArrayBuffer>,
  make: ResponseFromBytes = plainResponse,
): Response {
  const init = { status, statusText, headers };
  if (hasNoBody(method, status)) return new Response(null, init);
  return make(body instanceof Uint8Array ? body : new Uint8Array(body), init);
}
