import * as http from 'node:http';
import * as https from 'node:https';
import type { Socket } from 'node:net';
import type { TLSSocket } from 'node:tls';
import type { Clock } from '../clock/clock.js';
import { FailwiseError } from '../errors/failwise-error.js';
import type { TransportResult } from '../policy/transport-result.js';
import { checkPins, PIN_MISMATCH_CODE, PIN_UNVERIFIABLE_CODE, type PinCheck } from './certificate-pins.js';
import {
  abortedResult,
  errorResult,
  findNetworkCause,
  isDnsCode,
  isTlsCause,
  type NetworkCause,
} from './network-error.js';
import { readResponse } from './node-http-response.js';
import type { NodeHttpTransportOptions } from './node-http-transport.js';
import type { TransportRequest } from './transport.js';

/** How far an attempt got; decides the phase of a failure. */
type Stage = 'connecting' | 'handshaking' | 'sending' | 'sent' | 'receiving';

/** What one attempt is sent to, worked out before it starts. */
export interface AttemptTarget {
  url: URL;
  isHttps: boolean;
  /** The URL's host, as failure messages name it. */
  host: string;
  /** The origin's pins, when it has any, and the key of that set (see `checkedPins`). */
  pins: readonly string[] | undefined;
  pinKey: string | undefined;
}

/** What an attempt shares with the transport that made it. */
export interface AttemptContext {
  options: NodeHttpTransportOptions;
  clock: Clock;
  agentFor: (isHttps: boolean, pinned: boolean) => http.Agent;
  /** The pin set each TLS socket was checked against: a kept-alive socket is checked again for another set. */
  checkedPins: WeakMap<Socket, string>;
}

/**
 * One attempt over node:http, following its socket from the lookup to the response's last byte so that a
 * failure has an exact phase. It settles once, with the result `resolve` is given.
 */
export class NodeHttpAttempt {
  #stage: Stage = 'connecting';
  #lookupFailed = false;
  #settled = false;
  #connectTimer: unknown;
  #socket: Socket | undefined;
  #req: http.ClientRequest | undefined;
  #res: http.IncomingMessage | undefined;

  constructor(
    private readonly request: TransportRequest,
    private readonly target: AttemptTarget,
    private readonly context: AttemptContext,
    private readonly resolve: (result: TransportResult) => void,
  ) {}

  get settled(): boolean {
    return this.#settled;
  }

  start(): void {
    this.request.signal.addEventListener('abort', this.#onAbort, { once: true });
    this.#startConnectTimer();
    const req = this.#createRequest();
    if (req === undefined) return;
    this.#req = req;
    req.on('socket', (assigned: Socket) => this.#onSocket(req, assigned));
    req.on('finish', () => {
      if (this.#stage === 'sending') this.#stage = 'sent';
    });
    // Stays attached after settling: destroying the request emits one more 'error'.
    req.on('error', this.#failBeforeResponse);
    req.on('close', () => this.#failBeforeResponse(undefined));
    req.on('response', (incoming) => {
      this.#res = incoming;
      this.#stage = 'receiving';
      this.#clearConnectTimer();
      this.#detachSocket();
      readResponse(incoming, this.request, this.target.host, this.context.clock, this);
    });
    req.end(this.request.body);
  }

  settle(result: TransportResult): void {
    if (this.#settled) return;
    this.#settled = true;
    this.#clearConnectTimer();
    this.#detachSocket();
    this.request.signal.removeEventListener('abort', this.#onAbort);
    if (result.kind === 'error') {
      this.#res?.destroy();
      this.#req?.destroy();
    }
    this.resolve(result);
  }

  #onAbort = (): void => this.settle(abortedResult());

  #onLookup = (error: Error | null): void => {
    if (error !== null) this.#lookupFailed = true;
  };

  #onConnect = (): void => {
    if (this.#stage !== 'connecting') return;
    if (this.target.isHttps) this.#stage = 'handshaking';
    else this.#markConnected();
  };

  #onSecureConnect = (): void => {
    if (this.#stage !== 'connecting' && this.#stage !== 'handshaking') return;
    // Node holds the request's bytes until 'secureConnect' has been emitted: refusing here sends none.
    if (this.#socket !== undefined && !this.#pinsHold(this.#socket)) return;
    this.#markConnected();
  };

  #failBeforeResponse = (error: unknown): void => {
    // Once headers arrived the response's own events decide (a server may answer before reading
    // the whole request body, and the unsent rest then fails to write).
    if (this.#stage === 'receiving') return;
    const { host, url } = this.target;
    this.settle(
      classifyBeforeResponse(this.#stage, this.#lookupFailed, findNetworkCause(error), host, url.hostname),
    );
  };

  #startConnectTimer(): void {
    const { connectTimeoutMs } = this.request;
    if (!Number.isFinite(connectTimeoutMs) || connectTimeoutMs <= 0) return;
    this.#connectTimer = this.context.clock.setTimeout(() => {
      this.#connectTimer = undefined;
      if (this.#stage !== 'connecting' && this.#stage !== 'handshaking') return;
      const pending = this.#stage === 'handshaking' ? 'TLS handshake' : 'connection';
      this.settle(
        errorResult(
          'connect-timeout',
          'no',
          `no ${pending} to ${this.target.host} within ${connectTimeoutMs} ms`,
        ),
      );
    }, connectTimeoutMs);
  }

  /** The request, not yet sent; undefined (the attempt settled) when Node refuses to build it. */
  #createRequest(): http.ClientRequest | undefined {
    const { request, context } = this;
    const { url, isHttps, host, pins } = this.target;
    const { options } = context;
    const requestOptions: https.RequestOptions = {
      method: request.method,
      headers: request.headers,
      agent: context.agentFor(isHttps, pins !== undefined),
    };
    if (options.lookup !== undefined) requestOptions.lookup = options.lookup;
    if (isHttps && options.tls?.ca !== undefined) requestOptions.ca = options.tls.ca;
    if (isHttps && options.tls?.rejectUnauthorized !== undefined) {
      requestOptions.rejectUnauthorized = options.tls.rejectUnauthorized;
    }
    try {
      return (isHttps ? https : http).request(url, requestOptions);
    } catch (error) {
      // Node validates the method and header names/values synchronously; nothing was sent.
      const code = findNetworkCause(error)?.code;
      this.settle(
        errorResult('unknown', 'no', `${code ?? 'invalid request'} building the request to ${host}`, code),
      );
      return undefined;
    }
  }

  #onSocket(req: http.ClientRequest, assigned: Socket): void {
    const { isHttps } = this.target;
    this.#socket = assigned;
    if (this.#settled) return;
    if (req.reusedSocket) {
      // 'socket' comes before the request is written: a kept-alive socket is checked before it carries it.
      if (isHttps && !this.#pinsHold(assigned)) return;
      this.#markConnected();
      return;
    }
    if (assigned.destroyed) return; // failed already (a lookup may call back at once): 'error' follows
    if (assigned.connecting) {
      assigned.on('lookup', this.#onLookup);
      assigned.on('connect', this.#onConnect);
    } else if (!isHttps) {
      this.#markConnected();
      return;
    } else {
      this.#stage = 'handshaking';
    }
    if (isHttps) assigned.on('secureConnect', this.#onSecureConnect);
  }

  /**
   * Whether the TLS socket may carry this request: no pins, a socket already checked against these pins,
   * or a presented chain that matches one. Otherwise the attempt fails `tls` and the socket is destroyed
   * with the error (so an agent of the app's evicts the socket's TLS session too).
   */
  #pinsHold(tlsSocket: Socket): boolean {
    const { pins, pinKey, host } = this.target;
    const { checkedPins } = this.context;
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
    this.settle(errorResult('tls', 'no', message, code));
    return false;
  }

  #detachSocket(): void {
    this.#socket?.removeListener('lookup', this.#onLookup);
    this.#socket?.removeListener('connect', this.#onConnect);
    this.#socket?.removeListener('secureConnect', this.#onSecureConnect);
  }

  #clearConnectTimer(): void {
    if (this.#connectTimer !== undefined) this.context.clock.clearTimeout(this.#connectTimer);
    this.#connectTimer = undefined;
  }

  #markConnected(): void {
    this.#stage = 'sending';
    this.#clearConnectTimer();
    this.#detachSocket();
  }
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
