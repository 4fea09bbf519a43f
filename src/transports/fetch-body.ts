/**
 * @internal
 * How `fetchTransport` takes the body of a response fetch resolved with, within the attempt (`bodyPlan`): the
 * bytes of a body read whole, or the `Response` to hand over when a body streams.
 */
import { BUFFER_LIMIT_BYTES, type BodyPlan } from './buffered-response.js';
import { handedOverBody, type HandOverOptions } from './handed-over-body.js';
import { readUpToCap } from './read-up-to-cap.js';

/** A body read within the attempt, or the response to hand over as it is. */
export type TakenBody =
  { bytes: ArrayBuffer | Uint8Array<ArrayBuffer>; response?: undefined } | { response: Response };

/**
 * The body of a response whose fetch gives a stream, taken as `plan` says (`bodyPlan`, worked out by the caller
 * outside the network's try: an error there is failwise's own): its bytes read within the attempt, or the
 * `Response` handed over as a stream. Rejects as fetch's body does when the connection is lost or the attempt's
 * signal fires while it is read.
 */
export async function takeFetchBody(
  response: Response,
  body: ReadableStream<Uint8Array>,
  plan: BodyPlan,
  handOver: HandOverOptions,
): Promise<TakenBody> {
  // Without a global ReadableStream to build on, a stream is handed over as fetch gave it.
  if (plan === 'stream' && typeof ReadableStream !== 'function') return { response };
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
