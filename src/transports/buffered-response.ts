/**
 * @internal
 * Builds the WHATWG `Response` a transport hands back once it has read the whole body within the
 * attempt, so reading it later in app code cannot fail.
 */

/** Whether `new Response(...)` accepts this status (it only takes 200 to 599). */
export function isRepresentableStatus(status: number): boolean {
  return Number.isInteger(status) && status >= 200 && status <= 599;
}

/** Statuses whose response has no body: the `Response` constructor refuses a body for them. */
const NO_BODY_STATUSES: ReadonlySet<number> = new Set([101, 103, 204, 205, 304]);

export function bufferedResponse(
  method: string,
  status: number,
  statusText: string,
  headers: Headers,
  body: ArrayBuffer | Uint8Array<ArrayBuffer>,
): Response {
  // A prepared request's method is already upper case; a transport called directly may pass any case.
  const hasNoBody = NO_BODY_STATUSES.has(status) || method === 'HEAD' || method.toUpperCase() === 'HEAD';
  return new Response(hasNoBody ? null : body, { status, statusText, headers });
}
