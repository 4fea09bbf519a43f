/**
 * `responseFromBytes` (src/transports/bytes-response.ts) against a plain `Response` over the same bytes: for random
 * bodies and random sequences of what an app does with a response (reads, clones, `body`, `bodyUsed`), both must
 * give the same results and refuse the same things, step by step. Then what the comparison cannot show: a Node
 * Buffer cut from a shared pool, which transports use it, and the runtimes where a plain `Response` is made.
 */
import { fc } from '@fast-check/vitest';
import { afterEach, describe, expect, it, vi } from 'vitest';

import { answersFromBytes, responseFromBytes } from '../../src/transports/bytes-response.js';
import { fetchTransport as universalFetchTransport } from '../../src/transports/fetch-transport.js';
import { nodeHttpTransport } from '../../src/transports/node-http-transport.js';
import { undiciFetchTransport } from '../../src/transports/undici-fetch-errors.js';
import { useLoopback } from '../helpers/loopback-server.js';
import { attempt, expectResponse } from '../helpers/transport-assertions.js';
import type { Transport } from '../../src/transports/transport.js';
import { RESPONSE_STEPS, runResponseStep } from '../helpers/response-steps.js';

const init = (contentType: string): ResponseInit => ({
  status: 200,
  statusText: 'OK',
  headers: { 'content-type': contentType, 'x-request-id': 'r-1' },
});

const encode = (text: string): Uint8Array<ArrayBuffer> => new TextEncoder().encode(text);

/** Bodies an API gives, and ones that test the edges of decoding and parsing. */
const bodies: fc.Arbitrary<{ bytes: Uint8Array<ArrayBuffer>; contentType: string }> = fc.oneof(
  fc.json().map((text) => ({ bytes: encode(text), contentType: 'application/json' })),
  fc.string().map((text) => ({ bytes: encode(text), contentType: 'text/plain;charset=UTF-8' })),
  fc.dictionary(fc.string({ minLength: 1, maxLength: 5 }), fc.string({ maxLength: 5 })).map((fields) => ({
    bytes: encode(new URLSearchParams(fields).toString()),
    contentType: 'application/x-www-form-urlencoded',
  })),
  // A UTF-8 byte-order mark before JSON: text() and json() drop it.
  fc.json().map((text) => ({ bytes: encode(`\uFEFF${text}`), contentType: 'application/json' })),
  // Any bytes at all: invalid UTF-8 decodes to U+FFFD, and is no JSON.
  fc
    .uint8Array({ maxLength: 64 })
    .map((bytes) => ({ bytes: new Uint8Array(bytes), contentType: 'application/octet-stream' })),
);

/** A response answered from `bytes` (checked to be one). */
function fromBytes(bytes: Uint8Array<ArrayBuffer>, contentType: string): Response {
  const response = responseFromBytes(bytes, init(contentType));
  expect(answersFromBytes(response)).toBe(true);
  return response;
}

describe('responseFromBytes on Node', () => {
  afterEach(() => {
    vi.unstubAllGlobals();
  });

  it('gives what a plain Response over the same bytes gives, step by step (fast-check, 300 runs)', async () => {
    await fc.assert(
      fc.asyncProperty(
        bodies,
        fc.array(fc.constantFrom(...RESPONSE_STEPS), { minLength: 1, maxLength: 5 }),
        async ({ bytes, contentType }, steps) => {
          const plain = new Response(bytes.slice(), init(contentType));
          const answered = fromBytes(bytes.slice(), contentType);
          for (const step of steps) {
            const expected = await runResponseStep(plain, step);
            expect({ step, got: await runResponseStep(answered, step) }).toEqual({ step, got: expected });
          }
        },
      ),
      { numRuns: 300 },
    );
  });

  it('is a Response: instanceof, status, headers, and nothing of its own for JSON.stringify or Object.keys', () => {
    const response = fromBytes(encode('{"a":1}'), 'application/json');
    expect(response).toBeInstanceOf(Response);
    expect(Object.prototype.toString.call(response)).toBe('[object Response]');
    expect([response.status, response.statusText, response.ok]).toEqual([200, 'OK', true]);
    expect(response.headers.get('x-request-id')).toBe('r-1');
    expect(JSON.stringify(response)).toBe(JSON.stringify(new Response('{"a":1}')));
    expect(Object.keys(response)).toEqual([]);
  });

  it('marks its body used as a read starts, before the read resolves, and refuses a second read as fetch does', async () => {
    const response = fromBytes(encode('"x"'), 'application/json');
    const plain = new Response('"x"');
    const reading = response.json();
    void plain.json();
    expect(response.bodyUsed).toBe(true);
    const [second, plainSecond] = await Promise.allSettled([response.text(), plain.text()]);
    // The runtime's own TypeError, word for word: failwise makes none of its own.
    expect(second).toEqual(plainSecond);
    expect(second.status).toBe('rejected');
    await expect(reading).resolves.toBe('x');
  });

  it('rejects bad JSON with the SyntaxError JSON.parse throws, and counts the body read', async () => {
    const response = fromBytes(encode('{"a":'), 'application/json');
    await expect(response.json()).rejects.toThrow(SyntaxError);
    expect(response.bodyUsed).toBe(true);
  });

  it('gives a clone bytes of its own: changing what one read gives does not change the other', async () => {
    const response = fromBytes(encode('abc'), 'text/plain');
    const copy = response.clone();
    const first = new Uint8Array(await response.arrayBuffer());
    first[0] = 0x7a;
    expect(await copy.text()).toBe('abc');
    expect(() => response.clone()).toThrow(TypeError);
  });

  it('copies a Node Buffer cut from the shared pool: its reads give exactly its bytes, never the pool', async () => {
    const pooled = Buffer.from('{"ok":true}');
    expect(pooled.buffer.byteLength).toBeGreaterThan(pooled.byteLength); // a slice of Node's 8 KiB pool
    const response = fromBytes(pooled, 'application/json');
    pooled[6] = 0x78; // the transport's Buffer changed later: the response's bytes are its own
    const buffer = await response.arrayBuffer();
    expect(buffer.byteLength).toBe(pooled.byteLength);
    expect(new TextDecoder().decode(buffer)).toBe('{"ok":true}');
  });

  it('follows a Response that replaces the global one: a subclass of it, or a plain one where it has no accessors', async () => {
    class Replacement extends Response {}
    vi.stubGlobal('Response', Replacement);
    const over = responseFromBytes(encode('[1]'), init('application/json'));
    expect(over).toBeInstanceOf(Replacement);
    expect(answersFromBytes(over)).toBe(true);
    expect(await over.json()).toEqual([1]);
    // The shape of whatwg-fetch's Response (React Native): `bodyUsed` a data property, no `body` accessor.
    class PolyfillResponse {
      bodyUsed = false;
      constructor(private readonly bodyInit: Uint8Array) {}
      text(): Promise<string> {
        this.bodyUsed = true;
        return Promise.resolve(new TextDecoder().decode(this.bodyInit));
      }
    }
    vi.stubGlobal('Response', PolyfillResponse);
    const plain = responseFromBytes(encode('hi'), init('text/plain'));
    expect(plain).toBeInstanceOf(PolyfillResponse);
    expect(await plain.text()).toBe('hi');
  });

  it('is made when first needed: the Node entry imports where there is no global Response (Jest with jsdom)', async () => {
    vi.stubGlobal('Response', undefined);
    vi.resetModules();
    const entry = await import('../../src/index.node.js');
    expect(typeof entry.createFailoverClient).toBe('function');
  });

  it('makes a plain Response in Bun and Deno (they run the Node entry too), and without a TextDecoder', () => {
    for (const [name, value] of [
      ['Bun', {}],
      ['Deno', {}],
      ['TextDecoder', undefined],
    ] as const) {
      vi.stubGlobal(name, value);
      const response = responseFromBytes(encode('x'), init('text/plain'));
      expect(response).toBeInstanceOf(Response);
      expect(answersFromBytes(response), name).toBe(false);
      vi.unstubAllGlobals();
    }
  });

  it("leaves bytes() out where the runtime's Response has none", () => {
    const { bytes } = Response.prototype;
    Reflect.deleteProperty(Response.prototype, 'bytes');
    try {
      class Older extends Response {} // a new global, so the class is made again over it
      vi.stubGlobal('Response', Older);
      const response = fromBytes(encode('x'), 'text/plain');
      expect('bytes' in response).toBe(false);
    } finally {
      Object.defineProperty(Response.prototype, 'bytes', {
        value: bytes,
        writable: true,
        configurable: true,
      });
    }
  });
});

describe('the transports that answer from bytes', () => {
  const { serve } = useLoopback();

  it("are Node's: its fetchTransport and nodeHttpTransport; the universal fetchTransport makes a plain Response", async () => {
    const server = await serve(({ res }) => {
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': '11' }).end('{"ok":true}');
    });
    const answered = async (transport: Transport) => {
      const response = expectResponse(await transport.send(attempt(`${server.url}/x`)));
      const from = answersFromBytes(response);
      expect(await response.json()).toEqual({ ok: true });
      await transport.close?.();
      return from;
    };
    expect(await answered(undiciFetchTransport())).toBe(true);
    expect(await answered(nodeHttpTransport())).toBe(true);
    expect(await answered(universalFetchTransport())).toBe(false);
  });
});
