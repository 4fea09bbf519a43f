import type * as http from 'node:http';
import { Readable } from 'node:stream';
import type { Clock } from '../clock/clock.js';
import type { TransportResult } from '../policy/transport-result.js';
import {
  BUFFER_LIMIT_BYTES,
  bodyPlan,
  bufferedResponse,
  isRepresentableStatus,
} from './buffered-response.js';
import { responseFromBytes } from './bytes-response.js';
import { handedOverBody, type HandOverOptions } from './handed-over-body.js';
import { errorResult, findNetworkCause } from './network-error.js';
import type { TransportRequest } from './transport.js';

/** The attempt a response belongs to: it settles once. */
interface Settles {
  readonly settled: boolean;
  settle(result: TransportResult): void;
}

/**
 * Reads a response whose headers arrived: its body whole within the attempt up to the cap, or handed over as a
 * stream (`bodyPlan`, or a body of unknown length past the cap).
 */
export function readResponse(
  incoming: http.IncomingMessage,
  request: TransportRequest,
  host: string,
  clock: Clock,
  attempt: Settles,
): void {
  const status = incoming.statusCode ?? 0;
  const headers = headersOf(incoming);
  const representable = isRepresentableStatus(status);
  // Made only for a body handed over: a body read within the attempt needs none of it.
  const handOver = (): HandOverOptions => ({
    idleMs: request.idleMs,
    clock,
    signal: request.bodySignal,
    host: () => host,
  });
  if (representable && bodyPlan(request.method, status, headers, request.stream) === 'stream') {
    attempt.settle(streamedResult(incoming, status, headers, [], handOver()));
    return;
  }
  const chunks: Buffer[] = [];
  let length = 0;
  const onData = (chunk: Buffer): void => {
    chunks.push(chunk);
    length += chunk.length;
    if (length <= BUFFER_LIMIT_BYTES || !representable) return;
    // Past the cap (its length was unknown): what was read goes first, the rest flows as the app reads it.
    incoming.pause();
    incoming.removeListener('data', onData);
    attempt.settle(streamedResult(incoming, status, headers, chunks, handOver()));
  };
  incoming.on('data', onData);
  incoming.on('error', () => undefined);
  incoming.on('end', () => {
    if (attempt.settled || !incoming.complete) return;
    attempt.settle(responseResult(request.method, incoming, Buffer.concat(chunks), host));
  });
  incoming.on('close', () => {
    if (attempt.settled) return;
    const code = findNetworkCause(incoming.errored)?.code ?? 'ECONNRESET';
    attempt.settle(
      errorResult(
        'connection-lost',
        'yes',
        `${code}: connection to ${host} lost while reading the response body`,
        code,
      ),
    );
  });
}

function responseResult(
  method: string,
  incoming: http.IncomingMessage,
  body: Buffer<ArrayBuffer>,
  host: string,
): TransportResult {
  const status = incoming.statusCode ?? 0;
  if (!isRepresentableStatus(status)) {
    return errorResult(
      'unknown',
      'yes',
      `node:http: ${host} answered with status ${status}, which a Response cannot hold`,
    );
  }
  return {
    kind: 'response',
    response: bufferedResponse(
      method,
      status,
      incoming.statusMessage ?? '',
      headersOf(incoming),
      body,
      responseFromBytes,
    ),
  };
}

/** The response's headers as WHATWG `Headers`. */
function headersOf(incoming: http.IncomingMessage): Headers {
  const headers = new Headers();
  const raw = incoming.rawHeaders;
  for (let i = 0; i + 1 < raw.length; i += 2) {
    try {
      headers.append(raw[i] as string, raw[i + 1] as string);
    } catch {
      // A header the WHATWG Headers class refuses (Node's parser is more lenient): leave it out.
    }
  }
  return headers;
}

/**
 * A response whose body is handed over as a stream (`bodyPlan`): the attempt ends with its headers, or once `read`
 * (the bytes read so far) went past the cap; the rest flows to the app as it reads it, bounded by `idleMs` and the
 * caller's own signal (src/transports/handed-over-body.ts).
 */
function streamedResult(
  incoming: http.IncomingMessage,
  status: number,
  headers: Headers,
  read: Uint8Array[],
  handOver: HandOverOptions,
): TransportResult {
  const rest = (Readable.toWeb(incoming) as ReadableStream<Uint8Array>).getReader();
  return {
    kind: 'response',
    response: new Response(handedOverBody(rest, read, handOver), {
      status,
      statusText: incoming.statusMessage ?? '',
      headers,
    }),
  };
}
