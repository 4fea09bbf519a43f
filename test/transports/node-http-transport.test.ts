/**
 * nodeHttpTransport against real servers on 127.0.0.1. DNS failures come from an injected `lookup`,
 * so no test touches a network resolver. Each test also checks that the transport let go of what it
 * held: no timer pending on its clock, and (for failures) no socket open on the server.
 */
import type { LookupFunction } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import type { Clock } from '../../src/clock/clock.js';
import { systemClock } from '../../src/clock/system-clock.js';
import {
  nodeHttpTransport,
  type NodeHttpTransportOptions,
} from '../../src/transports/node-http-transport.js';
import type { Transport } from '../../src/transports/transport.js';
import {
  closedPort,
  selfSignedCert,
  startRawServer,
  startServer,
  type LoopbackServer,
  type RawServer,
  type TlsMaterial,
} from '../helpers/loopback-server.js';
import {
  attempt,
  closed,
  expectError,
  expectRedacted,
  expectResponse,
  SECRET_HEADERS,
  SECRET_QUERY,
} from '../helpers/transport-assertions.js';

/** The real clock, counting the timers it holds. */
function countingClock(): Clock & { pending(): number } {
  const active = new Set<unknown>();
  return {
    now: () => systemClock.now(),
    setTimeout(fn, timeoutMs) {
      const handle: unknown = systemClock.setTimeout((...args) => {
        active.delete(handle);
        fn(...args);
      }, timeoutMs);
      active.add(handle);
      return handle;
    },
    clearTimeout(handle) {
      active.delete(handle);
      systemClock.clearTimeout(handle);
    },
    pending: () => active.size,
  };
}

/** A clock whose timers run only when the test says so. */
function manualClock(): Clock & { pending(): number; fireAll(): void } {
  const timers = new Map<number, () => void>();
  let nextId = 0;
  return {
    now: () => 0,
    setTimeout(fn) {
      nextId += 1;
      timers.set(nextId, () => fn());
      return nextId;
    },
    clearTimeout(handle) {
      timers.delete(handle as number);
    },
    pending: () => timers.size,
    fireAll() {
      const due = [...timers.values()];
      timers.clear();
      for (const run of due) run();
    },
  };
}

/** `dns.lookup` failing the way getaddrinfo does for an unknown name, at once or (like the real one) later. */
function notFoundLookup(timing: 'sync' | 'async'): LookupFunction {
  return (hostname, _options, callback) => {
    const error: NodeJS.ErrnoException = Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), {
      code: 'ENOTFOUND',
      errno: -3008,
      syscall: 'getaddrinfo',
    });
    if (timing === 'sync') callback(error, '', 4);
    else setImmediate(() => callback(error, '', 4));
  };
}

/** `dns.lookup` answering 127.0.0.1 for every name, in both of its calling styles. */
const loopbackLookup: LookupFunction = (_hostname, options, callback) => {
  if (options.all === true) callback(null, [{ address: '127.0.0.1', family: 4 }]);
  else callback(null, '127.0.0.1', 4);
};

describe('nodeHttpTransport', { timeout: 5_000 }, () => {
  const servers: Array<LoopbackServer | RawServer> = [];
  const transports: Transport[] = [];
  async function serve(...args: Parameters<typeof startServer>): Promise<LoopbackServer> {
    const server = await startServer(...args);
    servers.push(server);
    return server;
  }
  async function serveRaw(...args: Parameters<typeof startRawServer>): Promise<RawServer> {
    const server = await startRawServer(...args);
    servers.push(server);
    return server;
  }
  function transport(options: NodeHttpTransportOptions = {}): Transport {
    const made = nodeHttpTransport(options);
    transports.push(made);
    return made;
  }
  let tls: TlsMaterial | undefined;
  async function cert(): Promise<TlsMaterial> {
    tls ??= await selfSignedCert();
    return tls;
  }
  afterEach(async () => {
    for (const made of transports.splice(0)) await made.close?.();
    await Promise.all(servers.splice(0).map((server) => server.close()));
  });

  it('is named node:http', () => {
    expect(transport().name).toBe('node:http');
  });

  it('sends method, headers and body and resolves with the whole response', async () => {
    const server = await serve(({ res }) => {
      res.setHeader('set-cookie', ['a=1', 'b=2']);
      res.writeHead(201, 'Made', { 'content-type': 'text/plain', 'x-order': '42' });
      res.end('created order 42');
    });
    const clock = countingClock();
    const result = await transport({ clock }).send(
      attempt(`${server.url}/v1/orders`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'idempotency-key': 'k-1' },
        body: '{"item":1}',
      }),
    );
    const response = expectResponse(result);
    expect(response.status).toBe(201);
    expect(response.statusText).toBe('Made');
    expect(response.headers.get('x-order')).toBe('42');
    expect(response.headers.getSetCookie()).toEqual(['a=1', 'b=2']);
    expect(await response.text()).toBe('created order 42');
    expect(server.requests).toEqual([
      expect.objectContaining({ method: 'POST', url: '/v1/orders', body: '{"item":1}' }),
    ]);
    expect(server.requests[0]?.headers['idempotency-key']).toBe('k-1');
    expect(clock.pending()).toBe(0);
  });

  it('sends a Uint8Array body byte for byte', async () => {
    const server = await serve(({ res }) => res.end());
    await transport().send(attempt(server.url, { method: 'PUT', body: new TextEncoder().encode('bytes') }));
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
    const response = expectResponse(await transport().send(attempt(server.url)));
    expect(response.status).toBe(status);
    expect(response.statusText).toBe(text);
    expect(response.headers.get('retry-after')).toBe('7');
    expect(await response.text()).toBe('{"error":"busy"}');
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
    expect(head.body).toBeNull();
    expect(head.headers.get('x-seen')).toBe('HEAD');
  });

  it('keeps the connection for the next attempt and closes it on close()', async () => {
    const server = await serve(({ res }) => res.end('ok'));
    const made = transport();
    expectResponse(await made.send(attempt(server.url)));
    expectResponse(await made.send(attempt(server.url)));
    expect(server.sockets).toHaveLength(1);
    await made.close?.();
    await server.waitForNoSockets();
  });

  it('opens a connection per attempt with keepAlive false', async () => {
    const server = await serve(({ res }) => res.end('ok'));
    const made = transport({ keepAlive: false });
    expectResponse(await made.send(attempt(server.url)));
    await server.waitForNoSockets();
    expectResponse(await made.send(attempt(server.url)));
    expect(server.sockets).toHaveLength(2);
  });

  it('resolves host names with the given lookup', async () => {
    const server = await serve(({ req, res }) => res.end(req.headers.host));
    const result = await transport({ lookup: loopbackLookup }).send(
      attempt(`http://api.test:${server.port}/`),
    );
    expect(await expectResponse(result).text()).toBe(`api.test:${server.port}`);
  });

  it.each([
    ['https', 'sync'],
    ['https', 'async'],
    ['http', 'sync'],
    ['http', 'async'],
  ] as const)(
    'reports dns with requestSent no when the lookup fails (%s, %s lookup)',
    async (scheme, timing) => {
      const clock = countingClock();
      const result = expectError(
        await transport({ lookup: notFoundLookup(timing), clock }).send(
          attempt(`${scheme}://api.test:8443/x${SECRET_QUERY}`),
        ),
      );
      expect(result).toEqual({
        kind: 'error',
        phase: 'dns',
        requestSent: 'no',
        code: 'ENOTFOUND',
        message: 'ENOTFOUND resolving api.test',
      });
      expect(clock.pending()).toBe(0);
    },
  );

  it('reports connect with requestSent no when the port refuses', async () => {
    const port = await closedPort();
    const clock = countingClock();
    const result = expectError(await transport({ clock }).send(attempt(`http://127.0.0.1:${port}/x`)));
    expect(result).toEqual({
      kind: 'error',
      phase: 'connect',
      requestSent: 'no',
      code: 'ECONNREFUSED',
      message: `ECONNREFUSED connecting to 127.0.0.1:${port}`,
    });
    expect(clock.pending()).toBe(0);
  });

  it('reports connect-timeout with requestSent no when the TLS handshake never finishes', async () => {
    // The peer accepts the TCP connection but never answers the ClientHello.
    const server = await serveRaw((socket) => socket.resume());
    const clock = countingClock();
    const startedAt = performance.now();
    const result = expectError(
      await transport({ clock }).send(
        attempt(`https://127.0.0.1:${server.port}/x`, { connectTimeoutMs: 100 }),
      ),
    );
    expect(result).toEqual({
      kind: 'error',
      phase: 'connect-timeout',
      requestSent: 'no',
      message: `no TLS handshake to 127.0.0.1:${server.port} within 100 ms`,
    });
    expect(performance.now() - startedAt).toBeLessThan(1_000);
    expect(clock.pending()).toBe(0);
    await server.waitForNoSockets();
  });

  it('times the connect timeout on the injected clock', async () => {
    const server = await serveRaw((socket) => socket.resume());
    const clock = manualClock();
    const sending = transport({ clock }).send(
      attempt(`https://127.0.0.1:${server.port}/x`, { connectTimeoutMs: 60_000 }),
    );
    await server.nextSocket();
    expect(clock.pending()).toBe(1);
    clock.fireAll();
    expect(expectError(await sending)).toMatchObject({ phase: 'connect-timeout', requestSent: 'no' });
    await server.waitForNoSockets();
  });

  it('clears the connect timer once connected, so a slow response is not a connect-timeout', async () => {
    const clock = manualClock();
    let answer: (() => void) | undefined;
    const server = await serve(({ res }) => {
      answer = () => res.end('late');
    });
    const sending = transport({ clock }).send(attempt(server.url, { connectTimeoutMs: 60_000 }));
    await server.nextRequest();
    expect(clock.pending()).toBe(0);
    answer?.();
    expect(await expectResponse(await sending).text()).toBe('late');
  });

  it('reports tls with requestSent no for an untrusted self-signed certificate', async () => {
    const server = await serve(({ res }) => res.end('never'), { tls: await cert() });
    const result = expectError(
      await transport().send(attempt(`${server.url}/x`, { method: 'POST', body: 'x' })),
    );
    expect(result).toMatchObject({ phase: 'tls', requestSent: 'no', code: 'DEPTH_ZERO_SELF_SIGNED_CERT' });
    expect(server.requests).toEqual([]);
    await server.waitForNoSockets();
  });

  it('trusts the certificate authorities given in tls.ca', async () => {
    const material = await cert();
    const server = await serve(({ res }) => res.end('secure'), { tls: material });
    const result = await transport({ tls: { ca: material.cert } }).send(attempt(server.url));
    expect(await expectResponse(result).text()).toBe('secure');
  });

  it('reports tls with requestSent no when the peer hangs up during the TLS handshake', async () => {
    const server = await serveRaw((socket) => socket.once('data', () => socket.end()));
    const result = expectError(await transport().send(attempt(`https://127.0.0.1:${server.port}/x`)));
    expect(result).toMatchObject({ phase: 'tls', requestSent: 'no', code: 'ECONNRESET' });
  });

  it('reports tls with requestSent no when the peer resets during the TLS handshake', async () => {
    const server = await serveRaw((socket) => socket.once('data', () => socket.resetAndDestroy()));
    const result = expectError(await transport().send(attempt(`https://127.0.0.1:${server.port}/x`)));
    expect(result).toMatchObject({ phase: 'tls', requestSent: 'no', code: 'ECONNRESET' });
  });

  it('reports connection-lost with requestSent unknown when the server closes before answering', async () => {
    const server = await serve(({ req }) => req.socket.destroy());
    const clock = countingClock();
    const result = expectError(await transport({ clock }).send(attempt(`${server.url}/x`)));
    expect(result).toMatchObject({ phase: 'connection-lost', requestSent: 'unknown', code: 'ECONNRESET' });
    expect(clock.pending()).toBe(0);
  });

  it('reports connection-lost with requestSent unknown when the server resets after reading the request', async () => {
    const server = await serve(({ req }) => req.socket.resetAndDestroy());
    const result = expectError(
      await transport().send(attempt(`${server.url}/x`, { method: 'POST', body: 'a' })),
    );
    expect(result).toMatchObject({ phase: 'connection-lost', requestSent: 'unknown', code: 'ECONNRESET' });
  });

  it('reports connection-lost with requestSent unknown when the server applied the write, then dropped the connection', async () => {
    const server = await serve(({ req, markApplied }) => {
      markApplied();
      req.socket.destroy();
    });
    const result = expectError(
      await transport().send(attempt(`${server.url}/v1/orders`, { method: 'POST', body: '{"item":1}' })),
    );
    expect(result).toMatchObject({ phase: 'connection-lost', requestSent: 'unknown' });
    expect(server.appliedWrites).toBe(1);
    expect(server.requests[0]?.body).toBe('{"item":1}');
  });

  it('reports connection-lost with requestSent yes when the body is cut mid-way', async () => {
    const server = await serve(({ req, res }) => {
      res.writeHead(200, { 'content-length': '100' });
      res.write('only part', () => req.socket.destroy());
    });
    const clock = countingClock();
    const result = expectError(await transport({ clock }).send(attempt(`${server.url}/x`)));
    expect(result).toMatchObject({ phase: 'connection-lost', requestSent: 'yes' });
    expect(result.message).toContain('while reading the response body');
    expect(clock.pending()).toBe(0);
    await server.waitForNoSockets();
  });

  it('resolves an abort mid-request promptly with the aborted result and leaves no socket or timer', async () => {
    const server = await serve(() => undefined);
    const clock = countingClock();
    const controller = new AbortController();
    const sending = transport({ clock }).send(attempt(`${server.url}/slow`, { signal: controller.signal }));
    const socket = await server.nextSocket();
    await server.nextRequest();
    const abortedAt = performance.now();
    controller.abort();
    const result = await sending;
    expect(performance.now() - abortedAt).toBeLessThan(500);
    expect(result).toEqual({ kind: 'error', phase: 'unknown', requestSent: 'unknown', message: 'aborted' });
    expect(clock.pending()).toBe(0);
    await closed(socket);
    await server.waitForNoSockets();
    expect(server.sockets).toHaveLength(1);
  });

  it('resolves an abort during the connect phase and clears the connect timer', async () => {
    const server = await serveRaw((socket) => socket.resume());
    const clock = countingClock();
    const controller = new AbortController();
    const sending = transport({ clock }).send(
      attempt(`https://127.0.0.1:${server.port}/x`, { signal: controller.signal, connectTimeoutMs: 60_000 }),
    );
    await server.nextSocket();
    controller.abort();
    expect(await sending).toMatchObject({ phase: 'unknown', message: 'aborted' });
    expect(clock.pending()).toBe(0);
    await server.waitForNoSockets();
  });

  it('resolves an attempt whose signal already fired without connecting', async () => {
    const server = await serve(({ res }) => res.end());
    const controller = new AbortController();
    controller.abort();
    const result = await transport().send(attempt(server.url, { signal: controller.signal }));
    expect(result).toEqual({ kind: 'error', phase: 'unknown', requestSent: 'unknown', message: 'aborted' });
    expect(server.sockets).toHaveLength(0);
  });

  it('reports an unsupported protocol without sending', async () => {
    const result = expectError(await transport().send(attempt('ftp://127.0.0.1/file')));
    expect(result).toMatchObject({
      phase: 'unknown',
      requestSent: 'no',
      message: 'node:http: unsupported protocol ftp:',
    });
  });

  describe('messages (rule 9)', () => {
    const init = { method: 'POST', headers: { ...SECRET_HEADERS }, body: 'secret-body' } as const;

    it('leave out the query string and header values when the connection is refused', async () => {
      const port = await closedPort();
      const result = expectError(
        await transport().send(attempt(`http://127.0.0.1:${port}/x${SECRET_QUERY}`, init)),
      );
      expectRedacted(result.message);
    });

    it('leave out the query string and header values when the connection is lost', async () => {
      const server = await serve(({ req }) => req.socket.destroy());
      const result = expectError(await transport().send(attempt(`${server.url}/x${SECRET_QUERY}`, init)));
      expect(server.requests[0]?.url).toBe(`/x${SECRET_QUERY}`);
      expectRedacted(result.message);
    });

    it('leave out a header value Node refuses', async () => {
      const server = await serve(({ res }) => res.end());
      const result = expectError(
        await transport().send(
          attempt(`${server.url}/x${SECRET_QUERY}`, { headers: { authorization: 'Bearer secret-header\n' } }),
        ),
      );
      expect(result).toMatchObject({ phase: 'unknown', requestSent: 'no', code: 'ERR_INVALID_CHAR' });
      expectRedacted(result.message);
      expect(server.sockets).toHaveLength(0);
    });
  });
});
