/**
 * @internal
 * How `fetchTransport` takes the body of a response fetch resolved with, within the attempt (`bodyPlan`): the
 * bytes of a body read whole, or the `Response` to hand over when a body streams.
 */
import { BUFFER_LIMIT_BYTES, bodyPlan } from './buffered-response.js';
import { handedOverBody, type HandOverOptions } from './handed-over-body.js';
import { readUpToCap } from './read-up-to-cap.js';

/** A body read within the attempt, or the response to hand over as it is. */
export type TakenBody =
  { bytes: ArrayBuffer | Uint8Array<ArrayBuffer>; response?: undefined } | { response: Response };

/**
 * The body read within the attempt (its bytes), or the `Response` handed over as a stream. Rejects as fetch's body
 * does when the connection is lost or the attempt's signal fires while it is read.
 */
export async function takeFetchBody(
  response: Response,
  method: string,
  wanted: boolean | undefined,
  handOver: HandOverOptions,
): Promise<TakenBody> {
  const plan = bodyPlan(method, response.status, response.headers, wanted);
  const body: unknown = response.body;
  // A fetch with no body stream (React Native's whatwg-fetch) resolves once it holds the whole body, so there is
  // nothing left to cut or wait for: a stream is its own Response, any other body its bytes.
  if (!isReadableStream(body))
    return plan === 'stream' ? { response } : { bytes: await response.arrayBuffer() };
  if (plan === 'stream') {
    // Nothing to bound it by: fetch's own Response, its url and redirected set.
    if (handOver.idleMs === undefined && handOver.signal === undefined) return { response };
    return { response: handedOver(response, body.getReader(), [], handOver) };
  }
  if (plan !== 'read-up-to-cap') return { bytes: await response.arrayBuffer() };
  const reader = body.getReader();
  const read = await readUpToCap(reader, BUFFER_LIMIT_BYTES);
  return read.complete
    ? { bytes: read.bytes }
    : { response: handedOver(response, reader, read.read, handOver) };
}

/** A `Response` over what was read and the rest of `reader`, with fetch's status and headers. */
function handedOver(
  response: Response,
  reader: ReadableStreamDefaultReader<Uint8Array>,
  read: Uint8Array[],
  handOver: HandOverOptions,
): Response {
  return new Response(handedOverBody(reader, read, handOver), {
    status: response.status,
    statusText: response.statusText,
    headers: response.headers,
  });
}

/** Whether `body` is a WHATWG stream this runtime can build another over. */
function isReadableStream(body: unknown): body is ReadableStream<Uint8Array> {
  return (
    typeof ReadableStream === 'function' &&
    typeof body === 'object' &&
    body !== null &&
    typeof (body as { getReader?: unknown }).getReader === 'function'
  );
}
