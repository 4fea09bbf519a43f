/**
 * fetchTransport over a fetch that gives no stream (whatwg-fetch's `body` is undefined on React Native) and on a
 * runtime with no `TransformStream`: the responses are made in this worker, with that one member or global taken
 * away for the test (vi.stubGlobal, undone after each). The whole environment is in test/react-native.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { fetchTransport } from '../../src/transports/fetch-transport.js';
import type { TransportRequest } from '../../src/transports/transport.js';

afterEach(() => {
  vi.unstubAllGlobals();
});

const request = (more: Partial<TransportRequest> = {}): TransportRequest => ({
  url: 'https://api.example.test/items',
  method: 'GET',
  headers: {},
  signal: new AbortController().signal,
  connectTimeoutMs: 1000,
  attemptsLeft: 1,
  ...more,
});

/** A fetch's response as whatwg-fetch makes it: the whole body already here, and no `body` member to stream it. */
function withoutBody(text: string, headers: Record<string, string>): Response {
  const response = new Response(text, { status: 200, statusText: 'OK', headers });
  Object.defineProperty(response, 'body', { value: undefined });
  return response;
}

describe('fetchTransport where fetch gives no stream', () => {
  it.each([
    ['no Content-Length, with a signal', {}, { bodySignal: new AbortController().signal }],
    ['stream: true', { 'content-length': '10' }, { stream: true }],
    ['text/event-stream', { 'content-type': 'text/event-stream' }, {}],
  ])('reads the body within the attempt: %s', async (_, headers, more) => {
    const transport = fetchTransport({ fetch: () => Promise.resolve(withoutBody('café ☕ ok', headers)) });
    const result = await transport.send(request(more));
    expect(result.kind).toBe('response');
    const response = (result as { response: Response }).response;
    expect(response.status).toBe(200);
    expect(await response.text()).toBe('café ☕ ok');
  });

  it('answers a 204 with no body', async () => {
    const none = new Response(null, { status: 204 });
    Object.defineProperty(none, 'body', { value: undefined });
    const result = await fetchTransport({ fetch: () => Promise.resolve(none) }).send(request());
    const response = (result as { response: Response }).response;
    expect([response.status, response.body, await response.text()]).toEqual([204, null, '']);
  });

  it('reports a failed body read as connection-lost, sent yes', async () => {
    const broken = withoutBody('x', {});
    Object.defineProperty(broken, 'blob', {
      value: () => Promise.reject(new TypeError('Network request failed')),
    });
    const result = await fetchTransport({ fetch: () => Promise.resolve(broken) }).send(request());
    expect(result).toEqual({
      kind: 'error',
      phase: 'connection-lost',
      requestSent: 'yes',
      message:
        'TypeError: Network request failed: connection to api.example.test lost while reading the response body',
    });
  });
});

describe('fetchTransport where the runtime has no TransformStream', () => {
  it("hands a streamed body over, bounded by the caller's signal, without one", async () => {
    vi.stubGlobal('TransformStream', undefined);
    const caller = new AbortController();
    const streamed = new Response('streamed', { status: 200 });
    const result = await fetchTransport({ fetch: () => Promise.resolve(streamed) }).send(
      request({ stream: true, bodySignal: caller.signal }),
    );
    const response = (result as { response: Response }).response;
    expect(await response.text()).toBe('streamed');
    const cut = (
      (await fetchTransport({
        fetch: () => Promise.resolve(new Response(new ReadableStream({ pull: () => new Promise(() => {}) }))),
      }).send(request({ stream: true, bodySignal: caller.signal }))) as { response: Response }
    ).response.text();
    caller.abort(new Error('left the screen'));
    await expect(cut).rejects.toThrow('left the screen');
  });
});
