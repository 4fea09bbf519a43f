/**
 * @internal
 * Builds the WHATWG `Response` a transport hands back once it has read the whole body within the attempt, so
 * reading it later in app code cannot fail; and decides how each body is taken (`bodyPlan`).
 */

/**
 * The largest body a transport reads within the attempt (1 MiB). A body read there is safe to read later, and a
 * connection lost in the middle of it is a failed attempt that may be retried; but the whole of it is held in
 * memory at once, so a longer one is handed over as a stream.
 */
export const BUFFER_LIMIT_BYTES = 1024 * 1024;

/** How a transport takes a response's body (docs/transports.md, "Streaming"). */
export type BodyPlan =
  /** There is none: a bodiless status, or the answer to a HEAD. */
  | 'none'
  /** Handed over as a stream when the headers arrive; the attempt does not wait for it. */
  | 'stream'
  /** Read whole within the attempt: its `Content-Length` is at most `BUFFER_LIMIT_BYTES`. */
  | 'read'
  /**
   * Read within the attempt up to `BUFFER_LIMIT_BYTES`, its length unknown (chunked, no or a bad
   * `Content-Length`): whole if it ends by then, else handed over as a stream of what was read and the rest.
   */
  | 'read-up-to-cap';

/**
 * How a response's body is taken. It is handed over when the headers arrive only when the request asks for it
 * (`stream: true`), for `text/event-stream` (a stream that never ends would never end the attempt), or for a
 * `Content-Length` over `BUFFER_LIMIT_BYTES`; every other body is read within the attempt, so a cut one is a
 * failed attempt rather than an error in app code after `succeeded`.
 */
export function bodyPlan(
  method: string,
  status: number,
  headers: { get(name: string): string | null },
  wanted: boolean | undefined,
): BodyPlan {
  if (hasNoBody(method, status)) return 'none';
  if (wanted === true) return 'stream';
  if (/^\s*text\/event-stream/i.test(headers.get('content-type') ?? '')) return 'stream';
  const length = headers.get('content-length');
  const bytes = length === null || length.trim() === '' ? Number.NaN : Number(length);
  if (!Number.isFinite(bytes) || bytes < 0) return 'read-up-to-cap';
  return bytes <= BUFFER_LIMIT_BYTES ? 'read' : 'stream';
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
