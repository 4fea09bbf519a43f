/**
 * Both fetch transports against real servers on 127.0.0.1 (Node's fetch is undici), through the
 * shared contract (./transport-contract.ts): the Node one (`undiciFetchTransport`, the `fetchTransport`
 * of the `failwise` entry on Node) with undici's codes and exact results, and the universal one (what
 * browsers get) as an opaque transport, since it reads no codes. fetch leaves the connect timeout to
 * the engine and the connections to undici's pool, which opens a spare one after an abort.
 *
 * This file keeps what is specific to fetch: failures that cannot be produced on loopback without a
 * network or a 10 s wait, for which a fake fetch throws the exact error object undici was seen to
 * throw (DNS: a `.invalid` lookup goes to this machine's network resolver; undici's connect timeout,
 * fixed at 10 s without a dispatcher), the opaque errors of browsers and other runtimes, and how the
 * fetch function is found.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { undiciFetchTransport as fetchTransport } from '../../src/transports/undici-fetch-errors.js';
import { fetchTransport as universalFetchTransport } from '../../src/transports/fetch-transport.js';
import {
  attempt,
  expectError,
  expectRedacted,
  expectResponse,
  SECRET_HEADERS,
  SECRET_QUERY,
} from '../helpers/transport-assertions.js';
import { describeTransportContract, NODE_SOCKET_CODES } from './transport-contract.js';
import { useLoopback } from '../helpers/loopback-server.js';

describeTransportContract('fetchTransport (Node, undici codes)', ({ clock }) => fetchTransport({ clock }), {
  codes: {
    ...NODE_SOCKET_CODES,
    plainTextServer: 'ERR_SSL_WRONG_VERSION_NUMBER',
    closedBeforeResponse: 'UND_ERR_SOCKET',
    bodyCut: 'UND_ERR_SOCKET',
  },
  exactResults: true,
});

describeTransportContract('fetchTransport (universal)', ({ clock }) => universalFetchTransport({ clock }), {
  phases: 'opaque',
  exactResults: true,
});

/** The error undici's fetch rejects with: a `TypeError('fetch failed')` whose cause has the code. */
function undiciError(cause: Error, extra: Record<string, unknown>): TypeError {
  return new TypeError('fetch failed', { cause: Object.assign(cause, extra) });
}

function fakeFetch(error: Error): typeof globalThis.fetch {
  return () => Promise.reject(error);
}

describe('fetchTransport', { timeout: 5_000 }, () => {
  afterEach(() => {
    vi.unstubAllGlobals();
  });

  describe('the Response it hands over', () => {
    const { serve } = useLoopback();

    it("hands over fetch's own Response when there is no body to read, and a rebuilt one over a short body", async () => {
      const server = await serve(({ req, res }) => {
        if (req.url === '/empty') res.writeHead(204, { 'x-seen': 'empty' }).end();
        else res.writeHead(200, { 'content-type': 'text/plain', 'content-length': '5' }).end('hello');
      });
      const made = fetchTransport();
      // No body (a 204): nothing could be cut mid-way, so fetch's own Response, its url set and its headers
      // immutable as fetch makes them; nothing of it is copied.
      const empty = expectResponse(await made.send(attempt(`${server.url}/empty`, { method: 'DELETE' })));
      expect(empty.status).toBe(204);
      expect(empty.body).toBeNull();
      expect(empty.url).toBe(`${server.url}/empty`);
      expect(empty.headers.get('x-seen')).toBe('empty');
      expect(() => empty.headers.set('x-app', '1')).toThrow(TypeError);
      // A short body is read within the attempt: the Response is a new one over those bytes (url '', docs/transports.md).
      const short = expectResponse(await made.send(attempt(`${server.url}/short`)));
      expect(short.url).toBe('');
      expect(await short.text()).toBe('hello');
    });
  });

  describe('a fetch whose Response has no body stream (React Native: whatwg-fetch over XMLHttpRequest)', () => {
    /** What whatwg-fetch resolves with: the whole body already read, `body` undefined, reads from it. */
    const whatwgResponse = (contentType: string, text: string) =>
      ({
        status: 200,
        statusText: 'OK',
        headers: new Headers({ 'content-type': contentType }), // no Content-Length
        body: undefined,
        text: () => Promise.resolve(text),
        arrayBuffer: () => Promise.resolve(new TextEncoder().encode(text).buffer),
      }) as unknown as Response;

    it('takes a body of unknown length with arrayBuffer() and hands back a Response over its bytes', async () => {
      const made = universalFetchTransport({
        fetch: () => Promise.resolve(whatwgResponse('application/json', '{"items":[1,2,3]}')),
      });
      const response = expectResponse(
        await made.send(attempt('https://api.example.test/items', { idleMs: 10 })),
      );
      expect(await response.json()).toEqual({ items: [1, 2, 3] });
    });

    it('hands over an event stream as fetch gave it: there is nothing left to wait for', async () => {
      const given = whatwgResponse('text/event-stream', 'data: one\n\n');
      const made = universalFetchTransport({ fetch: () => Promise.resolve(given) });
      const response = expectResponse(
        await made.send(attempt('https://api.example.test/events', { idleMs: 10 })),
      );
      expect(response).toBe(given);
    });
  });

  it('is named fetch', () => {
    expect(fetchTransport().name).toBe('fetch');
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
