import * as http from 'node:http';
import * as https from 'node:https';
import type { LookupFunction, Socket } from 'node:net';
import { Readable } from 'node:stream';
import type { TLSSocket } from 'node:tls';
import type { Clock } from '../clock/clock.js';
import { systemClock } from '../clock/system-clock.js';
import { FailwiseError } from '../errors/failwise-error.js';
import type { TransportResult } from '../policy/transport-result.js';
import {
  checkPins,
  PIN_MISMATCH_CODE,
  PIN_UNVERIFIABLE_CODE,
  pinSetKey,
  type PinCheck,
} from './certificate-pins.js';
import {
  BUFFER_LIMIT_BYTES,
  bodyPlan,
  bufferedResponse,
  isRepresentableStatus,
} from './buffered-response.js';
import { responseFromBytes } from './bytes-response.js';
import { dropPooledSockets } from './drop-pooled-sockets.js';
import { handedOverBody, type HandOverOptions } from './handed-over-body.js';
import {
  abortedResult,
  errorResult,
  findNetworkCause,
  isDnsCode,
  isTlsCause,
  type NetworkCause,
} from './network-error.js';
import type { Transport, TransportRequest } from './transport.js';

export interface NodeHttpTransportOptions {
  /**
   * Resolves host names instead of `dns.lookup`, e.g. to pin a host to an address or to produce a DNS
   * failure in a test without a network. Called like `dns.lookup`, including `{ all: true }`.
   */
  lookup?: LookupFunction;
  /**
   * Times the connect timeout (`request.connectTimeoutMs`) and the idle timeout of a body handed over as a
   * stream (`request.idleMs`). Pass the client's clock.
   * @default systemClock
   */
  clock?: Clock;
  /**
   * Keep connections open between attempts. The transport owns one `http.Agent` and one
   * `https.Agent`, made on first use and destroyed by `close()`.
   * @default true
   */
  keepAlive?: boolean;
  /**
   * Agents of your own instead of the transport's. `close()` leaves them alone: you own them. With
   * `origins[].pins`, make the https agent with `maxCachedSessions: 0`: a resumed TLS session shows no
   * certificates, so its pins cannot be checked and the attempt fails `tls` (`CERT_PIN_UNVERIFIABLE`).
   */
  agents?: { http?: http.Agent; https?: https.Agent };
  /**
   * TLS settings for `https:` origins. Pins (`origins[].pins`) are checked on top of these, never
   * instead: a pinned origin's certificate must still pass the CA check unless `rejectUnauthorized`
   * is `false`.
   */
  tls?: {
    /** Certificate authorities to trust instead of Node's bundled list. */
    ca?: string | Buffer | Array<string | Buffer>;
    /** @default true */
    rejectUnauthorized?: boolean;
  };
}

/** How far an attempt got; decides the phase of a failure. */
type Stage = 'connecting' | 'handshaking' | 'sending' | 'sent' | 'receiving';

/**
 * A transport over `node:http` and `node:https` that follows the socket, so each failure has an exact
 * phase: `dns` (lookup failed), `connect`, `connect-timeout` (no connection, and for https no finished
 * TLS handshake, within `request.connectTimeoutMs`), `tls`, then `connection-lost` once bytes of the
 * request may have gone out (`requestSent: 'unknown'`, or `'yes'` when the response headers had
 * arrived). A body is read whole within the attempt up to 1 MiB, whatever its length header says, so a cut
 * one fails the attempt; an event stream, `stream: true` and a body past 1 MiB are handed over as a stream,
 * which `request.idleMs` bounds (docs/transports.md, "Streaming"). Node only: import it from `failwise/node`.
 *
 * When `send` resolves, its connect timer is cleared and a failed attempt's socket is destroyed; a
 * successful one goes back to the keep-alive pool, which `close()` empties. `reset()` (called by the client on
 * the connectivity hint `changed`) empties the pool without cutting attempts in flight: their sockets are
 * destroyed when they end instead of going back to it.
 *
 * It checks certificate pins (`request.pins`, from `origins[].pins`): a connection is used for a pinned
 * request only once a certificate of its presented chain matched one of the pins, before any byte of
 * the request goes out; otherwise the attempt fails with phase `tls` (`CERT_PIN_MISMATCH`) and nothing
 * is sent. Pinned requests use an https agent of their own that never resumes TLS sessions (a resumed
 * session shows no certificates to check); its kept-alive sockets were all checked.
 */
export function nodeHttpTransport(options: NodeHttpTransportOptions = {}): Transport {
  const clock = options.clock ?? systemClock;
  const keepAlive = options.keepAlive ?? true;
  let ownHttpAgent: http.Agent | undefined;
  let ownHttpsAgent: https.Agent | undefined;
  let ownPinnedAgent: https.Agent | undefined;
  // The pin set each TLS socket was checked against: a kept-alive socket is checked again for another set.
  const checkedPins = new WeakMap<Socket, string>();

  const agentFor = (isHttps: boolean, pinned: boolean): http.Agent => {
    if (isHttps) {
      if (options.agents?.https !== undefined) return options.agents.https;
      if (pinned) {
        // No session cache: every connection shows its chain, so every one is checked.
        ownPinnedAgent ??= new https.Agent({ keepAlive, maxCachedSessions: 0 });
        return ownPinnedAgent;
      }
      ownHttpsAgent ??= new https.Agent({ keepAlive });
      return ownHttpsAgent;
    }
    if (options.agents?.http !== undefined) return options.agents.http;
    ownHttpAgent ??= new http.Agent({ keepAlive });
    return ownHttpAgent;
  };

  return {
    name: 'node:http',
    checksPins: true,
    send: (request) => sendWithNodeHttp(request, options, clock, agentFor, checkedPins),
    close: () => {
      ownHttpAgent?.destroy();
      ownHttpsAgent?.destroy();
      ownPinnedAgent?.destroy();
      ownHttpAgent = undefined;
      ownHttpsAgent = undefined;
      ownPinnedAgent = undefined;
    },
    // The network changed: no later attempt may reuse a socket of the old one. App-given agents are emptied too
    // (their sockets are just as stale), never destroyed.
    reset: () => {
      const agents = [
        ownHttpAgent,
        ownHttpsAgent,
        ownPinnedAgent,
        options.agents?.http,
        options.agents?.https,
      ];
      for (const agent of agents) if (agent !== undefined) dropPooledSockets(agent);
    },
  };
}

function sendWithNodeHttp(
  request: TransportRequest,
  options: NodeHttpTransportOptions,
  clock: Clock,
  agentFor: (isHttps: boolean, pinned: boolean) => http.Agent,
  checkedPins: WeakMap<Socket, string>,
): Promise<TransportResult> {
  const { signal } = request;
  if (signal.aborted) return Promise.resolve(abortedResult());

  let url: URL;
  try {
    url = new URL(request.url);
  } catch {
    return Promise.resolve(errorResult('unknown', 'no', 'node:http: the request URL is not an absolute URL'));
  }
  const isHttps = url.protocol === 'https:';
  if (!isHttps && url.protocol !== 'http:') {
    return Promise.resolve(errorResult('unknown', 'no', `node:http: unsupported protocol ${url.protocol}`));
  }
  const host = url.host;
  const pins = request.pins !== undefined && request.pins.length > 0 ? request.pins : undefined;
  if (pins !== undefined && !isHttps) {
    // Sending would skip the pins: there is no certificate on plain http.
    return Promise.resolve(errorResult('unknown', 'no', 'node:http: certificate pins need an https: URL'));
  }
  const pinKey = pins === undefined ? undefined : pinSetKey(pins);

  return new Promise<TransportResult>((resolve) => {
    let stage: Stage = 'connecting';
    let lookupFailed = false;
    let settled = false;
    let connectTimer: unknown;
    let socket: Socket | undefined;
    let req: http.ClientRequest | undefined;
    let res: http.IncomingMessage | undefined;

    const onLookup = (error: Error | null): void => {
      if (error !== null) lookupFailed = true;
    };
    const onConnect = (): void => {
      if (stage !== 'connecting') return;
      if (isHttps) {
        stage = 'handshaking';
      } else {
        markConnected();
      }
    };
    const onSecureConnect = (): void => {
      if (stage !== 'connecting' && stage !== 'handshaking') return;
      // Node holds the request's bytes until 'secureConnect' has been emitted: refusing here sends none.
      if (socket !== undefined && !pinsHold(socket)) return;
      markConnected();
    };
    /**
     * Whether the TLS socket may carry this request: no pins, a socket already checked against these pins,
     * or a presented chain that matches one. Otherwise the attempt fails `tls` and the socket is destroyed
     * with the error (so an agent of the app's evicts the socket's TLS session too).
     */
    function pinsHold(tlsSocket: Socket): boolean {
      if (pins === undefined || pinKey === undefined || checkedPins.get(tlsSocket) === pinKey) return true;
      const check: PinCheck = checkPins((tlsSocket as TLSSocket).getPeerCertificate(true), pins);
      if (check === 'match') {
        checkedPins.set(tlsSocket, pinKey);
        return true;
      }
      const code = check === 'mismatch' ? PIN_MISMATCH_CODE : PIN_UNVERIFIABLE_CODE;
      const message =
        check === 'mismatch'
          ? `${code}: no certificate in the chain of ${host} matches the origin's pins`
          : `${code}: the TLS session with ${host} was resumed and shows no certificates to check the pins against`;
      // The socket's end, never thrown to the app: the attempt settles with the tls result below.
      tlsSocket.destroy(Object.assign(new FailwiseError(message), { code }));
      settle(errorResult('tls', 'no', message, code));
      return false;
    }
    const detachSocket = (): void => {
      socket?.removeListener('lookup', onLookup);
      socket?.removeListener('connect', onConnect);
      socket?.removeListener('secureConnect', onSecureConnect);
    };
    const clearConnectTimer = (): void => {
      if (connectTimer !== undefined) clock.clearTimeout(connectTimer);
      connectTimer = undefined;
    };
    function markConnected(): void {
      stage = 'sending';
      clearConnectTimer();
      detachSocket();
    }

    const settle = (result: TransportResult): void => {
      if (settled) return;
      settled = true;
      clearConnectTimer();
      detachSocket();
      signal.removeEventListener('abort', onAbort);
      if (result.kind === 'error') {
        res?.destroy();
        req?.destroy();
      }
      resolve(result);
    };
    function onAbort(): void {
      settle(abortedResult());
    }

    const failBeforeResponse = (error: unknown): void => {
      // Once headers arrived the response's own events decide (a server may answer before reading
      // the whole request body, and the unsent rest then fails to write).
      if (stage === 'receiving') return;
      settle(classifyBeforeResponse(stage, lookupFailed, findNetworkCause(error), host, url.hostname));
    };

    signal.addEventListener('abort', onAbort, { once: true });
    const { connectTimeoutMs } = request;
    if (Number.isFinite(connectTimeoutMs) && connectTimeoutMs > 0) {
      connectTimer = clock.setTimeout(() => {
        connectTimer = undefined;
        if (stage !== 'connecting' && stage !== 'handshaking') return;
        const pending = stage === 'handshaking' ? 'TLS handshake' : 'connection';
        settle(
          errorResult('connect-timeout', 'no', `no ${pending} to ${host} within ${connectTimeoutMs} ms`),
        );
      }, connectTimeoutMs);
    }

    const requestOptions: https.RequestOptions = {
      method: request.method,
      headers: request.headers,
      agent: agentFor(isHttps, pins !== undefined),
    };
    if (options.lookup !== undefined) requestOptions.lookup = options.lookup;
    if (isHttps && options.tls?.ca !== undefined) requestOptions.ca = options.tls.ca;
    if (isHttps && options.tls?.rejectUnauthorized !== undefined) {
      requestOptions.rejectUnauthorized = options.tls.rejectUnauthorized;
    }

    try {
      req = (isHttps ? https : http).request(url, requestOptions);
    } catch (error) {
      // Node validates the method and header names/values synchronously; nothing was sent.
      const code = findNetworkCause(error)?.code;
      settle(
        errorResult('unknown', 'no', `${code ?? 'invalid request'} building the request to ${host}`, code),
      );
      return;
    }
    const clientRequest = req;

    clientRequest.on('socket', (assigned: Socket) => {
      socket = assigned;
      if (settled) return;
      if (clientRequest.reusedSocket) {
        // 'socket' comes before the request is written: a kept-alive socket is checked before it carries it.
        if (isHttps && !pinsHold(assigned)) return;
        markConnected();
        return;
      }
      if (assigned.destroyed) return; // failed already (a lookup may call back at once): 'error' follows
      if (assigned.connecting) {
        assigned.on('lookup', onLookup);
        assigned.on('connect', onConnect);
      } else if (!isHttps) {
        markConnected();
        return;
      } else {
        stage = 'handshaking';
      }
      if (isHttps) assigned.on('secureConnect', onSecureConnect);
    });
    clientRequest.on('finish', () => {
      if (stage === 'sending') stage = 'sent';
    });
    // Stays attached after settling: destroying the request emits one more 'error'.
    clientRequest.on('error', failBeforeResponse);
    clientRequest.on('close', () => failBeforeResponse(undefined));
    clientRequest.on('response', (incoming) => {
      res = incoming;
      stage = 'receiving';
      clearConnectTimer();
      detachSocket();
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
        settle(streamedResult(incoming, status, headers, [], handOver()));
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
        settle(streamedResult(incoming, status, headers, chunks, handOver()));
      };
      incoming.on('data', onData);
      incoming.on('error', () => undefined);
      incoming.on('end', () => {
        if (settled || !incoming.complete) return;
        settle(responseResult(request.method, incoming, Buffer.concat(chunks), host));
      });
      incoming.on('close', () => {
        if (settled) return;
        const code = findNetworkCause(incoming.errored)?.code ?? 'ECONNRESET';
        settle(
          errorResult(
            'connection-lost',
            'yes',
            `${code}: connection to ${host} lost while reading the response body`,
            code,
          ),
        );
      });
    });

    clientRequest.end(request.body);
  });
}

/** The phase of a failure before any response headers, from how far the socket got. */
function classifyBeforeResponse(
  stage: Stage,
  lookupFailed: boolean,
  cause: NetworkCause | undefined,
  host: string,
  hostname: string,
): TransportResult {
  const code = cause?.code;
  const named = code ?? 'closed';
  switch (stage) {
    case 'connecting':
      if (lookupFailed || (code !== undefined && isDnsCode(code))) {
        return errorResult('dns', 'no', `${code ?? 'lookup failed'} resolving ${hostname}`, code);
      }
      if (code === 'ETIMEDOUT')
        return errorResult('connect-timeout', 'no', `${code} connecting to ${host}`, code);
      if (cause !== undefined && isTlsCause(cause)) {
        return errorResult('tls', 'no', `${named} in the TLS handshake with ${host}`, code);
      }
      return errorResult('connect', 'no', `${named} connecting to ${host}`, code);
    case 'handshaking':
      // The TLS handshake had not finished: no byte of the request can have left.
      if (code !== undefined && isDnsCode(code))
        return errorResult('dns', 'no', `${code} resolving ${hostname}`, code);
      return errorResult('tls', 'no', `${named} in the TLS handshake with ${host}`, code);
    case 'sending':
      return errorResult(
        'connection-lost',
        'unknown',
        `${named}: connection to ${host} lost while sending the request`,
        code,
      );
    case 'sent':
    case 'receiving':
      return errorResult(
        'connection-lost',
        'unknown',
        `${named}: connection to ${host} lost before a response`,
        code,
      );
  }
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
