/**
 * The transport contract: what every `Transport` must do, so a custom transport can run it too
 * (docs/transports.md, "Writing your own transport"). `describeTransportContract(name, make, options)`
 * runs one attempt per case against real servers on 127.0.0.1 and checks that the transport
 *
 * - sends the method, headers and body (a string or a `Uint8Array`, byte for byte) and resolves with
 *   the whole response, whatever its status: a 503 or 429 is a response with its `Retry-After` header
 *   and body, a 204 or a `HEAD` response has a `null` body;
 * - never rejects for a network failure, and reports each one with the phase and `requestSent` the
 *   engine relies on: `no` only when the request certainly did not leave (refused, reset on accept,
 *   the TLS handshake failed), `unknown` once it may have (the server closed or reset after reading
 *   it, even after applying the write), `yes` when the response body was cut mid-way, whether it had
 *   a `Content-Length` or not (a body that is not handed over as a stream is read within the attempt);
 * - resolves once `request.signal` fires, at any stage (already fired: without connecting; during the
 *   TLS handshake; waiting for the response: within 500 ms, closing that socket; reading the body,
 *   of known length or chunked);
 * - never puts the query string or a header value in a message (rule 9);
 * - leaves no timer on the clock it was given once `send` resolves (each case builds its transport
 *   with `make({ clock })` on a counting clock; a transport that takes no clock ignores it), and no
 *   socket open after a failed TLS handshake or a cut body.
 *
 * The options say what differs between honest transports. `phases` says whether the transport tells
 * failures apart at all (`opaque` for a browser's fetch or XMLHttpRequest); `tlsResetPhase` and
 * `statusText` what it can observe; `codes`, `exactResults`, `connectTimeout` and `ownsConnections`
 * turn on stricter checks, off by default, for what it promises beyond that (the built-in transports
 * turn on all they can pass).
 *
 * Not a test file itself: a `*.test.ts` calls it inside its own module.
 */
import { describe, expect, it } from 'vitest';
import type {
  Clock,
  Transport,
  TransportErrorPhase,
  TransportRequest,
  TransportResult,
} from '../../src/index.js';
import { simulatedClock } from '../../src/index.js';
import { closedPort, selfSignedCert, useLoopback, type TlsMaterial } from '../helpers/loopback-server.js';
import {
  attempt,
  closed,
  countingClock,
  expectError,
  expectRedacted,
  expectResponse,
  SECRET_HEADERS,
  SECRET_QUERY,
  type ErrorResult,
} from '../helpers/transport-assertions.js';

type RequestSent = NonNullable<ErrorResult['requestSent']>;

/** The failure cases whose low-level `code` a transport may promise (see `codes`). */
export type ContractCase =
  /** Nothing listens on the port. */
  | 'refused'
  /** The peer resets the TCP connection as it accepts it. */
  | 'resetOnAccept'
  /** An https server with a self-signed certificate nobody trusts. */
  | 'untrustedCertificate'
  /** The peer closes (FIN) on the ClientHello. */
  | 'tlsHangUp'
  /** The peer resets (RST) on the ClientHello. */
  | 'tlsReset'
  /** An https URL reaches a server that answers in plain text. */
  | 'plainTextServer'
  /** The server closes the connection after reading the request (also after applying the write). */
  | 'closedBeforeResponse'
  /** The server resets the connection after reading the request. */
  | 'resetAfterRequest'
  /** The server sends the headers and part of the body, then closes. */
  | 'bodyCut';

export type ContractCodes = Partial<Record<ContractCase, string>>;

export interface TransportContractOptions {
  /**
   * `precise`: the transport tells failures apart before a response, with the phases of
   * docs/transports.md. `opaque`: it cannot (a browser's fetch, `XMLHttpRequest`, failwise's
   * universal `fetchTransport`), so each such failure must be phase `unknown` with requestSent
   * `unknown`. A body cut after the headers is `connection-lost` with requestSent `yes` either way.
   * @default 'precise'
   */
  phases?: 'precise' | 'opaque';
  /**
   * The `code` the transport reports in each case; a case left out is not checked for a code. A Node
   * transport that passes on the socket's codes can start from `NODE_SOCKET_CODES`.
   * @default {}
   */
  codes?: ContractCodes;
  /**
   * Results are checked whole, in the built-in transports' wording: an abort is exactly
   * `{ kind: 'error', phase: 'unknown', requestSent: 'unknown', message: 'aborted' }`, a refused port
   * `ECONNREFUSED connecting to host:port`, a cut body says `while reading the response body`, a
   * connect timeout `no TLS handshake to host:port within N ms`. Off: phase, requestSent, code.
   * @default false
   */
  exactResults?: boolean;
  /**
   * The transport honours `request.connectTimeoutMs` itself, timed on the clock it was given:
   * `connect-timeout`, requestSent `no`, exactly when a simulated clock passes a 100 ms limit on a
   * TLS handshake that is never answered (not a millisecond earlier). Off for fetch, which
   * leaves it to the engine's attempt timeout (undici's own is a fixed 10 s).
   * @default false
   */
  connectTimeout?: boolean;
  /**
   * What a precise transport reports for a reset (RST) during the TLS handshake: `tls` (requestSent
   * `no`) if it follows the socket, or `connection-lost` (requestSent `unknown`, the safe side) if the
   * error looks the same as a reset after the request was written, as undici's does.
   * @default 'connection-lost'
   */
  tlsResetPhase?: 'tls' | 'connection-lost';
  /**
   * The transport holds its connections itself, so after an aborted attempt the server is left with
   * no socket and none was opened in its place. Off for a transport over the runtime's pool: undici
   * opens a spare connection after an abort and keeps a half-made one, both its own.
   * @default false
   */
  ownsConnections?: boolean;
  /**
   * `response.statusText` carries the HTTP/1.1 reason phrase. Off for a transport whose protocol has
   * none (HTTP/2).
   * @default true
   */
  statusText?: boolean;
}

/** The codes Node's sockets and OpenSSL give in these cases; both built-in transports pass them on. */
export const NODE_SOCKET_CODES = {
  refused: 'ECONNREFUSED',
  resetOnAccept: 'ECONNRESET',
  untrustedCertificate: 'DEPTH_ZERO_SELF_SIGNED_CERT',
  tlsHangUp: 'ECONNRESET',
  tlsReset: 'ECONNRESET',
  resetAfterRequest: 'ECONNRESET',
} as const satisfies ContractCodes;

const ABORTED = { kind: 'error', phase: 'unknown', requestSent: 'unknown', message: 'aborted' } as const;

/**
 * Declares a `describe` block with the contract's cases for the transports `make` builds (a fresh
 * one per case, closed after it). Call it at the top level of a test file.
 */
export function describeTransportContract(
  name: string,
  make: (context: { clock: Clock }) => Transport,
  options: TransportContractOptions = {},
): void {
  const {
    phases = 'precise',
    codes = {},
    exactResults = false,
    connectTimeout = false,
    tlsResetPhase = 'connection-lost',
    ownsConnections = false,
    statusText = true,
  } = options;

  /** What the transport must report where a precise one says `phase` and `requestSent`. */
  const outcome = (phase: TransportErrorPhase, requestSent: RequestSent) =>
    phases === 'opaque' && requestSent !== 'yes'
      ? ({ phase: 'unknown', requestSent: 'unknown' } as const)
      : { phase, requestSent };
  const titled = (phase: TransportErrorPhase, requestSent: RequestSent) => {
    const expected = outcome(phase, requestSent);
    return `${expected.phase} with requestSent ${expected.requestSent}`;
  };

  function expectFailure(
    result: TransportResult,
    failure: ContractCase | undefined,
    phase: TransportErrorPhase,
    requestSent: RequestSent,
  ): ErrorResult {
    const error = expectError(result);
    expect(error).toMatchObject(outcome(phase, requestSent));
    const code = failure === undefined ? undefined : codes[failure];
    if (code !== undefined) expect(error.code).toBe(code);
    return error;
  }

  function expectAborted(result: TransportResult): void {
    // The engine has moved on when the signal fires and ignores the result: it must only resolve.
    if (exactResults) expect(result).toEqual(ABORTED);
    else expectError(result);
  }

  describe(`${name} (transport contract)`, { timeout: 5_000 }, () => {
    const { serve, serveRaw, closeAfter } = useLoopback();
    let tls: TlsMaterial | undefined;
    async function cert(): Promise<TlsMaterial> {
      tls ??= await selfSignedCert();
      return tls;
    }

    /** A fresh transport on a counting clock; each of its sends must leave no timer behind. */
    function transport(): Pick<Transport, 'send'> {
      const clock = countingClock();
      const made = closeAfter(make({ clock }));
      return {
        send: async (request) => {
          const result = await made.send(request);
          expect(clock.pending(), 'timers left on the clock once send resolved').toBe(0);
          return result;
        },
      };
    }
    const send = (request: TransportRequest): Promise<TransportResult> => transport().send(request);

    describe('responses', () => {
      it('sends method, headers and body and resolves with the whole response', async () => {
        const server = await serve(({ res }) => {
          res.setHeader('set-cookie', ['a=1', 'b=2']);
          res.writeHead(201, 'Made', { 'content-type': 'text/plain', 'x-order': '42' });
          res.end('created order 42');
        });
        const response = expectResponse(
          await send(
            attempt(`${server.url}/v1/orders`, {
              method: 'POST',
              headers: { 'content-type': 'application/json', 'idempotency-key': 'k-1' },
              body: '{"item":1}',
            }),
          ),
        );
        expect(response.status).toBe(201);
        if (statusText) expect(response.statusText).toBe('Made');
        expect(response.headers.get('x-order')).toBe('42');
        expect(response.headers.getSetCookie()).toEqual(['a=1', 'b=2']);
        expect(await response.text()).toBe('created order 42');
        expect(server.requests).toEqual([
          expect.objectContaining({ method: 'POST', url: '/v1/orders', body: '{"item":1}' }),
        ]);
        expect(server.requests[0]?.headers['idempotency-key']).toBe('k-1');
      });

      it('sends a Uint8Array body byte for byte', async () => {
        const server = await serve(({ res }) => res.end());
        await send(attempt(server.url, { method: 'PUT', body: new TextEncoder().encode('bytes') }));
        expect(server.requests[0]?.body).toBe('bytes');
      });

      it.each([
        [503, 'Service Unavailable'],
        [429, 'Too Many Requests'],
      ])('resolves a %i as a response and keeps its Retry-After header and body', async (status, text) => {
        const server = await serve(({ res }) => {
          res.writeHead(status, text, { 'retry-after': '7' });
          res.end('{"error":"busy"}');
        });
        const response = expectResponse(await send(attempt(server.url)));
        expect(response.status).toBe(status);
        if (statusText) expect(response.statusText).toBe(text);
        expect(response.headers.get('retry-after')).toBe('7');
        expect(await response.text()).toBe('{"error":"busy"}');
      });

      it('reads a body of unknown length whole within the attempt: chunked, or ended by the connection closing', async () => {
        const chunked = await serve(({ res }) => {
          res.writeHead(200, { 'content-type': 'text/plain' }); // no Content-Length: chunked
          res.write('first part, ');
          res.end('then the rest');
        });
        const response = expectResponse(await send(attempt(chunked.url)));
        expect(await response.text()).toBe('first part, then the rest');
        const closing = await serveRaw((socket) =>
          socket.once('data', () =>
            socket.end(
              'HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Type: text/plain\r\n\r\nuntil the close',
            ),
          ),
        );
        const ended = expectResponse(await send(attempt(`http://127.0.0.1:${closing.port}/x`)));
        expect(await ended.text()).toBe('until the close');
      });

      it('gives a 204 and a HEAD response a null body', async () => {
        const server = await serve(({ req, res }) => {
          res.writeHead(req.method === 'HEAD' ? 200 : 204, { 'x-seen': req.method ?? '' });
          res.end();
        });
        const made = transport();
        const noContent = expectResponse(await made.send(attempt(server.url, { method: 'DELETE' })));
        expect(noContent.status).toBe(204);
        expect(noContent.body).toBeNull();
        const head = expectResponse(await made.send(attempt(server.url, { method: 'HEAD' })));
        expect(head.status).toBe(200);
        expect(head.body).toBeNull();
        expect(head.headers.get('x-seen')).toBe('HEAD');
      });
    });

    describe('failures before the request goes out', () => {
      it(`reports ${titled('connect', 'no')} when the port refuses`, async () => {
        const port = await closedPort();
        const result = await send(attempt(`http://127.0.0.1:${port}/x`));
        expectFailure(result, 'refused', 'connect', 'no');
        if (exactResults && phases === 'precise') {
          expect(result).toEqual({
            kind: 'error',
            phase: 'connect',
            requestSent: 'no',
            code: 'ECONNREFUSED',
            message: `ECONNREFUSED connecting to 127.0.0.1:${port}`,
          });
        }
      });

      it(`reports ${titled('connect', 'no')} when the peer resets the connection as it accepts it`, async () => {
        const server = await serveRaw((socket) => socket.resetAndDestroy());
        const result = await send(attempt(`http://127.0.0.1:${server.port}/x`));
        expectFailure(result, 'resetOnAccept', 'connect', 'no');
      });

      if (connectTimeout) {
        it('reports connect-timeout with requestSent no when the TLS handshake never finishes, at connectTimeoutMs on its clock', async () => {
          // The peer accepts the TCP connection but never answers the ClientHello. The transport times
          // this itself, so it knows the phase even when it is otherwise opaque. Its clock is simulated:
          // the limit passes when the test moves it, not after a real wait.
          let helloSeen = (): void => {};
          const hello = new Promise<void>((resolve) => (helloSeen = resolve));
          const server = await serveRaw((socket) => {
            socket.once('data', helloSeen);
            socket.resume();
          });
          const clock = simulatedClock();
          const made = closeAfter(make({ clock }));
          let settled = false;
          const sending = made.send(attempt(`https://127.0.0.1:${server.port}/x`, { connectTimeoutMs: 100 }));
          void sending.then(() => (settled = true));
          await hello; // the handshake has begun, and is never answered
          await clock.increment(99);
          expect(settled, 'settled before connectTimeoutMs').toBe(false);
          await clock.increment(1);
          expect(settled, 'not settled at connectTimeoutMs').toBe(true);
          const result = expectError(await sending);
          expect(result).toMatchObject({ phase: 'connect-timeout', requestSent: 'no' });
          if (exactResults) {
            expect(result).toEqual({
              kind: 'error',
              phase: 'connect-timeout',
              requestSent: 'no',
              message: `no TLS handshake to 127.0.0.1:${server.port} within 100 ms`,
            });
          }
          expect(clock.pending(), 'timers left on the clock once send resolved').toBe(0);
          await server.waitForNoSockets();
        });
      }

      it(`reports ${titled('tls', 'no')} for an untrusted self-signed certificate`, async () => {
        const server = await serve(({ res }) => res.end('never'), { tls: await cert() });
        const result = await send(attempt(`${server.url}/x`, { method: 'POST', body: 'x' }));
        expectFailure(result, 'untrustedCertificate', 'tls', 'no');
        expect(server.requests).toEqual([]);
        await server.waitForNoSockets();
      });

      it(`reports ${titled('tls', 'no')} when the peer hangs up during the TLS handshake`, async () => {
        const server = await serveRaw((socket) => socket.once('data', () => socket.end()));
        const result = await send(attempt(`https://127.0.0.1:${server.port}/x`));
        expectFailure(result, 'tlsHangUp', 'tls', 'no');
      });

      const resetSent = tlsResetPhase === 'tls' ? 'no' : 'unknown';
      it(`reports ${titled(tlsResetPhase, resetSent)} when the peer resets during the TLS handshake`, async () => {
        const server = await serveRaw((socket) => socket.once('data', () => socket.resetAndDestroy()));
        const result = await send(attempt(`https://127.0.0.1:${server.port}/x`));
        expectFailure(result, 'tlsReset', tlsResetPhase, resetSent);
      });

      it(`reports ${titled('tls', 'no')} when an https URL reaches a plain-text server`, async () => {
        const server = await serveRaw((socket) =>
          socket.once('data', () => socket.end('HTTP/1.1 400 Bad Request\r\n\r\n')),
        );
        const result = await send(attempt(`https://127.0.0.1:${server.port}/x`));
        expectFailure(result, 'plainTextServer', 'tls', 'no');
      });
    });

    describe('failures once the request may have gone out', () => {
      it(`reports ${titled('connection-lost', 'unknown')} when the server closes before answering`, async () => {
        const server = await serve(({ req }) => req.socket.destroy());
        const result = await send(attempt(`${server.url}/x`));
        expectFailure(result, 'closedBeforeResponse', 'connection-lost', 'unknown');
      });

      it(`reports ${titled('connection-lost', 'unknown')} when the server resets after reading the request`, async () => {
        const server = await serve(({ req }) => req.socket.resetAndDestroy());
        const result = await send(attempt(`${server.url}/x`, { method: 'POST', body: 'a' }));
        expectFailure(result, 'resetAfterRequest', 'connection-lost', 'unknown');
      });

      it(`reports ${titled('connection-lost', 'unknown')} when the server applied the write, then dropped the connection`, async () => {
        const server = await serve(({ req, markApplied }) => {
          markApplied();
          req.socket.destroy();
        });
        const result = await send(attempt(`${server.url}/v1/orders`, { method: 'POST', body: '{"item":1}' }));
        expectFailure(result, 'closedBeforeResponse', 'connection-lost', 'unknown');
        expect(server.appliedWrites).toBe(1);
        expect(server.requests[0]?.body).toBe('{"item":1}');
      });

      it('reports connection-lost with requestSent yes when the body is cut mid-way', async () => {
        const server = await serve(({ req, res }) => {
          res.writeHead(200, { 'content-length': '100' });
          res.write('only part', () => req.socket.destroy());
        });
        const result = await send(attempt(`${server.url}/x`));
        const error = expectFailure(result, 'bodyCut', 'connection-lost', 'yes');
        if (exactResults) expect(error.message).toContain('while reading the response body');
        await server.waitForNoSockets();
      });

      it('reports connection-lost with requestSent yes when a body of unknown length (chunked) is cut mid-way', async () => {
        const server = await serve(({ req, res }) => {
          res.writeHead(200, { 'content-type': 'application/json' }); // no Content-Length: chunked
          res.write('{"items":[1,2,', () => req.socket.destroy());
        });
        const result = await send(attempt(`${server.url}/x`));
        const error = expectFailure(result, 'bodyCut', 'connection-lost', 'yes');
        if (exactResults) expect(error.message).toContain('while reading the response body');
        await server.waitForNoSockets();
      });
    });

    describe('aborts', () => {
      it('resolves an abort mid-request promptly and closes the socket', async () => {
        const server = await serve(() => undefined);
        const controller = new AbortController();
        const sending = send(attempt(`${server.url}/slow`, { signal: controller.signal }));
        const socket = await server.nextSocket();
        await server.nextRequest();
        const abortedAt = performance.now();
        controller.abort();
        const result = await sending;
        expect(performance.now() - abortedAt).toBeLessThan(500);
        expectAborted(result);
        await closed(socket);
        if (ownsConnections) {
          await server.waitForNoSockets();
          expect(server.sockets).toHaveLength(1);
        }
      });

      it('resolves an abort during the TLS handshake', async () => {
        const server = await serveRaw((socket) => socket.resume());
        const controller = new AbortController();
        const sending = send(
          attempt(`https://127.0.0.1:${server.port}/x`, {
            signal: controller.signal,
            connectTimeoutMs: 60_000,
          }),
        );
        await server.nextSocket();
        controller.abort();
        expectAborted(await sending);
        if (ownsConnections) await server.waitForNoSockets();
      });

      it('resolves an abort while the body is read', async () => {
        const controller = new AbortController();
        const server = await serve(({ res }) => {
          res.writeHead(200, { 'content-length': '100' });
          res.write('part', () => controller.abort());
        });
        expectAborted(await send(attempt(server.url, { signal: controller.signal })));
        if (ownsConnections) {
          await server.waitForNoSockets();
          expect(server.sockets).toHaveLength(1);
        }
      });

      it('resolves an abort while a body of unknown length (chunked) is read', async () => {
        const controller = new AbortController();
        const server = await serve(({ res }) => {
          res.writeHead(200, { 'content-type': 'text/plain' }); // no Content-Length: chunked
          res.write('part', () => controller.abort());
        });
        expectAborted(await send(attempt(server.url, { signal: controller.signal })));
        if (ownsConnections) {
          await server.waitForNoSockets();
          expect(server.sockets).toHaveLength(1);
        }
      });

      it('resolves an attempt whose signal already fired without connecting', async () => {
        const server = await serve(({ res }) => res.end());
        const controller = new AbortController();
        controller.abort();
        expectAborted(await send(attempt(server.url, { signal: controller.signal })));
        expect(server.sockets).toHaveLength(0);
      });
    });

    describe('messages (rule 9)', () => {
      const init = { method: 'POST', headers: { ...SECRET_HEADERS }, body: 'secret-body' } as const;

      it('leave out the query string and header values when the connection is refused', async () => {
        const port = await closedPort();
        const result = expectError(await send(attempt(`http://127.0.0.1:${port}/x${SECRET_QUERY}`, init)));
        expectRedacted(result.message);
      });

      it('leave out the query string and header values when the connection is lost', async () => {
        const server = await serve(({ req }) => req.socket.destroy());
        const result = expectError(await send(attempt(`${server.url}/x${SECRET_QUERY}`, init)));
        expect(server.requests[0]?.url).toBe(`/x${SECRET_QUERY}`);
        expectRedacted(result.message);
      });
    });
  });
}
