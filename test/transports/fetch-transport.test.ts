/**
 * fetchTransport against real servers on 127.0.0.1 (Node's fetch is undici). Two failures cannot be
 * produced on loopback without a network or a 10 s wait, so a fake fetch throws the exact error
 * object undici was seen to throw for them: DNS (a `.invalid` lookup goes to this machine's network
 * resolver) and undici's connect timeout (fixed at 10 s without a dispatcher).
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { undiciFetchTransport as fetchTransport } from '../../src/transports/undici-fetch-errors.js';
import { fetchTransport as universalFetchTransport } from '../../src/transports/fetch-transport.js';
import {
  closedPort,
  selfSignedCert,
  startRawServer,
  startServer,
  type LoopbackServer,
  type RawServer,
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

/** The error undici's fetch rejects with: a `TypeError('fetch failed')` whose cause has the code. */
function undiciError(cause: Error, extra: Record<string, unknown>): TypeError {
  return new TypeError('fetch failed', { cause: Object.assign(cause, extra) });
}

function fakeFetch(error: Error): typeof globalThis.fetch {
  return () => Promise.reject(error);
}

describe('fetchTransport', { timeout: 5_000 }, () => {
  const servers: Array<LoopbackServer | RawServer> = [];
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
  afterEach(async () => {
    vi.unstubAllGlobals();
    await Promise.all(servers.splice(0).map((server) => server.close()));
  });

  it('is named fetch', () => {
    expect(fetchTransport().name).toBe('fetch');
  });

  it('sends method, headers and body and resolves with the whole response', async () => {
    const server = await serve(({ res }) => {
      res.writeHead(201, 'Made', { 'content-type': 'text/plain', 'x-order': '42' });
      res.end('created order 42');
    });
    const result = await fetchTransport().send(
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
    expect(await response.text()).toBe('created order 42');
    expect(server.requests).toEqual([
      expect.objectContaining({ method: 'POST', url: '/v1/orders', body: '{"item":1}' }),
    ]);
    expect(server.requests[0]?.headers['idempotency-key']).toBe('k-1');
  });

  it('sends a Uint8Array body byte for byte', async () => {
    const server = await serve(({ res }) => res.end());
    await fetchTransport().send(
      attempt(server.url, { method: 'PUT', body: new TextEncoder().encode('bytes') }),
    );
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
    const response = expectResponse(await fetchTransport().send(attempt(server.url)));
    expect(response.status).toBe(status);
    expect(response.headers.get('retry-after')).toBe('7');
    expect(await response.text()).toBe('{"error":"busy"}');
  });

  it('gives a 204 and a HEAD response a null body', async () => {
    const server = await serve(({ req, res }) => {
      res.writeHead(req.method === 'HEAD' ? 200 : 204, { 'x-seen': req.method ?? '' });
      res.end();
    });
    const transport = fetchTransport();
    const noContent = expectResponse(await transport.send(attempt(server.url, { method: 'DELETE' })));
    expect(noContent.status).toBe(204);
    expect(noContent.body).toBeNull();
    const head = expectResponse(await transport.send(attempt(server.url, { method: 'HEAD' })));
    expect(head.status).toBe(200);
    expect(head.body).toBeNull();
    expect(head.headers.get('x-seen')).toBe('HEAD');
  });

  it('reports dns with requestSent no for undici ENOTFOUND', async () => {
    const error = undiciError(new Error('getaddrinfo ENOTFOUND api.invalid'), {
      errno: -3008,
      code: 'ENOTFOUND',
      syscall: 'getaddrinfo',
      hostname: 'api.invalid',
    });
    const result = expectError(
      await fetchTransport({ fetch: fakeFetch(error) }).send(
        attempt(`https://api.invalid:8443/x${SECRET_QUERY}`),
      ),
    );
    expect(result).toEqual({
      kind: 'error',
      phase: 'dns',
      requestSent: 'no',
      code: 'ENOTFOUND',
      message: 'ENOTFOUND resolving api.invalid',
    });
  });

  it('reports connect with requestSent no when the port refuses', async () => {
    const port = await closedPort();
    const result = expectError(await fetchTransport().send(attempt(`http://127.0.0.1:${port}/x`)));
    expect(result).toEqual({
      kind: 'error',
      phase: 'connect',
      requestSent: 'no',
      code: 'ECONNREFUSED',
      message: `ECONNREFUSED connecting to 127.0.0.1:${port}`,
    });
  });

  it('reports connect with requestSent no when the peer resets the connection as it accepts it', async () => {
    // undici reports `connect ECONNRESET` (syscall 'connect'): the request was never written.
    const server = await serveRaw((socket) => socket.resetAndDestroy());
    const result = expectError(await fetchTransport().send(attempt(`http://127.0.0.1:${server.port}/x`)));
    expect(result).toMatchObject({ phase: 'connect', requestSent: 'no', code: 'ECONNRESET' });
  });

  it('reports connect-timeout with requestSent no for undici UND_ERR_CONNECT_TIMEOUT', async () => {
    const cause = new Error('Connect Timeout Error (attempted address: 127.0.0.1:46245, timeout: 10000ms)');
    cause.name = 'ConnectTimeoutError';
    const error = undiciError(cause, { code: 'UND_ERR_CONNECT_TIMEOUT' });
    const result = expectError(
      await fetchTransport({ fetch: fakeFetch(error) }).send(attempt('https://127.0.0.1:46245/')),
    );
    expect(result).toMatchObject({
      phase: 'connect-timeout',
      requestSent: 'no',
      code: 'UND_ERR_CONNECT_TIMEOUT',
    });
  });

  it('reports tls with requestSent no for an untrusted self-signed certificate', async () => {
    const server = await serve(({ res }) => res.end('never'), { tls: await selfSignedCert() });
    const result = expectError(
      await fetchTransport().send(attempt(`${server.url}/x`, { method: 'POST', body: 'x' })),
    );
    expect(result).toMatchObject({ phase: 'tls', requestSent: 'no', code: 'DEPTH_ZERO_SELF_SIGNED_CERT' });
    expect(server.requests).toEqual([]);
  });

  it('reports tls with requestSent no when the peer hangs up during the TLS handshake', async () => {
    const server = await serveRaw((socket) => socket.once('data', () => socket.end()));
    const result = expectError(await fetchTransport().send(attempt(`https://127.0.0.1:${server.port}/x`)));
    expect(result).toMatchObject({ phase: 'tls', requestSent: 'no', code: 'ECONNRESET' });
  });

  it('reports a reset during the TLS handshake as connection-lost with requestSent unknown', async () => {
    // undici says `read ECONNRESET` here, exactly as for a reset after the request was written
    // (next tests), so fetchTransport cannot tell them apart and stays on the safe side.
    const server = await serveRaw((socket) => socket.once('data', () => socket.resetAndDestroy()));
    const result = expectError(await fetchTransport().send(attempt(`https://127.0.0.1:${server.port}/x`)));
    expect(result).toMatchObject({ phase: 'connection-lost', requestSent: 'unknown', code: 'ECONNRESET' });
  });

  it('reports tls with requestSent no when an https URL reaches a plain-text server', async () => {
    const server = await serveRaw((socket) =>
      socket.once('data', () => socket.end('HTTP/1.1 400 Bad Request\r\n\r\n')),
    );
    const result = expectError(await fetchTransport().send(attempt(`https://127.0.0.1:${server.port}/x`)));
    expect(result).toMatchObject({ phase: 'tls', requestSent: 'no', code: 'ERR_SSL_WRONG_VERSION_NUMBER' });
  });

  it('reports connection-lost with requestSent unknown when the server closes before answering', async () => {
    const server = await serve(({ req }) => req.socket.destroy());
    const result = expectError(await fetchTransport().send(attempt(`${server.url}/x`)));
    expect(result).toMatchObject({
      phase: 'connection-lost',
      requestSent: 'unknown',
      code: 'UND_ERR_SOCKET',
    });
  });

  it('reports connection-lost with requestSent unknown when the server resets after reading the request', async () => {
    const server = await serve(({ req }) => req.socket.resetAndDestroy());
    const result = expectError(
      await fetchTransport().send(attempt(`${server.url}/x`, { method: 'POST', body: 'a' })),
    );
    expect(result).toMatchObject({ phase: 'connection-lost', requestSent: 'unknown', code: 'ECONNRESET' });
  });

  it('reports connection-lost with requestSent unknown when the server applied the write, then dropped the connection', async () => {
    const server = await serve(({ req, markApplied }) => {
      markApplied();
      req.socket.destroy();
    });
    const result = expectError(
      await fetchTransport().send(attempt(`${server.url}/v1/orders`, { method: 'POST', body: '{"item":1}' })),
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
    const result = expectError(await fetchTransport().send(attempt(`${server.url}/x`)));
    expect(result).toMatchObject({ phase: 'connection-lost', requestSent: 'yes', code: 'UND_ERR_SOCKET' });
    expect(result.message).toContain('while reading the response body');
  });

  it('resolves an abort mid-request promptly with the aborted result and closes the socket', async () => {
    const server = await serve(() => undefined);
    const controller = new AbortController();
    const sending = fetchTransport().send(attempt(`${server.url}/slow`, { signal: controller.signal }));
    const socket = await server.nextSocket();
    await server.nextRequest();
    const abortedAt = performance.now();
    controller.abort();
    const result = await sending;
    expect(performance.now() - abortedAt).toBeLessThan(500);
    expect(result).toEqual({ kind: 'error', phase: 'unknown', requestSent: 'unknown', message: 'aborted' });
    await closed(socket);
  });

  it('resolves an attempt whose signal already fired without calling fetch', async () => {
    const fetch = vi.fn<typeof globalThis.fetch>();
    const controller = new AbortController();
    controller.abort();
    const result = await fetchTransport({ fetch }).send(
      attempt('http://127.0.0.1:1/', { signal: controller.signal }),
    );
    expect(result).toEqual({ kind: 'error', phase: 'unknown', requestSent: 'unknown', message: 'aborted' });
    expect(fetch).not.toHaveBeenCalled();
  });

  it('resolves with the aborted result when the signal fires while the body is read', async () => {
    const controller = new AbortController();
    const server = await serve(({ res }) => {
      res.writeHead(200, { 'content-length': '100' });
      res.write('part', () => controller.abort());
    });
    const result = await fetchTransport().send(attempt(server.url, { signal: controller.signal }));
    expect(result).toEqual({ kind: 'error', phase: 'unknown', requestSent: 'unknown', message: 'aborted' });
  });

  it.each([
    ['Chrome', 'Failed to fetch'],
    ['Safari', 'Load failed'],
    ['Firefox', 'NetworkError when attempting to fetch resource.'],
    ['React Native', 'Network request failed'],
  ])('reports the opaque %s TypeError as phase unknown with requestSent unknown', async (_browser, text) => {
    // The same from the universal transport (what browsers get) and from Node's undici-aware one.
    for (const transport of [universalFetchTransport, fetchTransport]) {
      const result = expectError(
        await transport({ fetch: fakeFetch(new TypeError(text)) }).send(
          attempt('https://api.example.com/v1/orders'),
        ),
      );
      expect(result).toEqual({
        kind: 'error',
        phase: 'unknown',
        requestSent: 'unknown',
        message: `fetch to api.example.com failed: TypeError: ${text}`,
      });
    }
  });

  it('in the universal transport, treats even a coded undici error as opaque (browsers never see codes)', async () => {
    const refused = Object.assign(new TypeError('fetch failed'), {
      cause: Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED', syscall: 'connect' }),
    });
    const result = expectError(
      await universalFetchTransport({ fetch: fakeFetch(refused) }).send(attempt('https://api.example.com/')),
    );
    expect(result).toMatchObject({ phase: 'unknown', requestSent: 'unknown' });
    const node = expectError(
      await fetchTransport({ fetch: fakeFetch(refused) }).send(attempt('https://api.example.com/')),
    );
    expect(node).toMatchObject({ phase: 'connect', requestSent: 'no' });
  });

  it('calls the global fetch found at send time, on globalThis', async () => {
    const transport = fetchTransport();
    const stub = vi.fn(() => Promise.resolve(new Response('stubbed')));
    vi.stubGlobal('fetch', stub);
    const response = expectResponse(await transport.send(attempt('https://api.example.com/')));
    expect(await response.text()).toBe('stubbed');
    expect(stub).toHaveBeenCalledOnce();
    expect(stub.mock.contexts[0]).toBe(globalThis);
  });

  describe('messages (rule 9)', () => {
    const init = { method: 'POST', headers: { ...SECRET_HEADERS }, body: 'secret-body' } as const;

    it('leave out the query string and header values when the connection is refused', async () => {
      const port = await closedPort();
      const result = expectError(
        await fetchTransport().send(attempt(`http://127.0.0.1:${port}/x${SECRET_QUERY}`, init)),
      );
      expectRedacted(result.message);
    });

    it('leave out the query string and header values when the connection is lost', async () => {
      const server = await serve(({ req }) => req.socket.destroy());
      const result = expectError(
        await fetchTransport().send(attempt(`${server.url}/x${SECRET_QUERY}`, init)),
      );
      expect(server.requests[0]?.url).toBe(`/x${SECRET_QUERY}`);
      expectRedacted(result.message);
    });

    it('leave out an opaque error message that quotes the URL or a header value', async () => {
      const deno = new TypeError(`error sending request for url (https://api.example.com/x${SECRET_QUERY})`);
      const headers = new TypeError('Headers.append: "Bearer secret-header\n" is an invalid header value.');
      for (const error of [deno, headers]) {
        const result = expectError(
          await fetchTransport({ fetch: fakeFetch(error) }).send(
            attempt(`https://api.example.com/x${SECRET_QUERY}`, init),
          ),
        );
        expect(result.message).toBe('fetch to api.example.com failed: TypeError');
        expectRedacted(result.message);
      }
    });
  });
});
