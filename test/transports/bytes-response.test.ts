/**
 * `BytesResponse` (src/transports/bytes-response.ts) against a plain `Response` over the same bytes: for random
 * bodies and random sequences of what an app does with a response (reads, clones, `body`, `bodyUsed`), both must
 * give the same results and refuse the same things, step by step. Then what the comparison cannot show: a Node
 * Buffer cut from a shared pool, and the runtimes where a plain `Response` is made instead.
 */
import { fc } from '@fast-check/vitest';
import { afterEach, describe, expect, it, vi } from 'vitest';

import { BytesResponse, canAnswerFromBytes } from '../../src/transports/bytes-response.js';
import { bufferedResponse } from '../../src/transports/buffered-response.js';
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

describe('BytesResponse', () => {
  it('gives what a plain Response over the same bytes gives, step by step (fast-check, 300 runs)', async () => {
    await fc.assert(
      fc.asyncProperty(
        bodies,
        fc.array(fc.constantFrom(...RESPONSE_STEPS), { minLength: 1, maxLength: 5 }),
        async ({ bytes, contentType }, steps) => {
          const plain = new Response(bytes.slice(), init(contentType));
          const answered = new BytesResponse(bytes.slice(), init(contentType));
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
    const response = new BytesResponse(encode('{"a":1}'), init('application/json'));
    expect(response).toBeInstanceOf(Response);
    expect([response.status, response.statusText, response.ok]).toEqual([200, 'OK', true]);
    expect(response.headers.get('x-request-id')).toBe('r-1');
    expect(JSON.stringify(response)).toBe(JSON.stringify(new Response('{"a":1}')));
    expect(Object.keys(response)).toEqual([]);
  });

  it('marks its body used as a read starts, before the read resolves, as fetch does', async () => {
    const response = new BytesResponse(encode('"x"'), init('application/json'));
    const reading = response.json();
    expect(response.bodyUsed).toBe(true);
    await expect(response.text()).rejects.toThrow(TypeError);
    await expect(reading).resolves.toBe('x');
  });

  it('rejects bad JSON with the SyntaxError JSON.parse throws, and counts the body read', async () => {
    const response = new BytesResponse(encode('{"a":'), init('application/json'));
    await expect(response.json()).rejects.toThrow(SyntaxError);
    expect(response.bodyUsed).toBe(true);
  });

  it('gives a clone bytes of its own: reading one does not change the other', async () => {
    const response = new BytesResponse(encode('abc'), init('text/plain'));
    const copy = response.clone();
    const first = new Uint8Array(await response.arrayBuffer());
    first[0] = 0x7a;
    expect(await copy.text()).toBe('abc');
    expect(() => response.clone()).toThrow(TypeError);
  });

  it('gives exactly its bytes from a Node Buffer cut from the shared pool, never the pool around them', async () => {
    const pooled = Buffer.from('{"ok":true}');
    expect(pooled.buffer.byteLength).toBeGreaterThan(pooled.byteLength); // a slice of Node's 8 KiB pool
    const buffer = await new BytesResponse(pooled, init('application/json')).arrayBuffer();
    expect(buffer.byteLength).toBe(pooled.byteLength);
    expect(new TextDecoder().decode(buffer)).toBe('{"ok":true}');
    expect(buffer).not.toBe(pooled.buffer);
  });
});

describe('bufferedResponse', () => {
  afterEach(() => {
    vi.unstubAllGlobals();
  });

  it('answers from the bytes where the runtime allows, and has no body for a 204 or a HEAD', async () => {
    expect(canAnswerFromBytes()).toBe(true);
    const headers = new Headers({ 'content-type': 'application/json' });
    const response = bufferedResponse('GET', 200, 'OK', headers, encode('[1,2]').buffer);
    expect(response).toBeInstanceOf(BytesResponse);
    expect(await response.json()).toEqual([1, 2]);
    for (const [method, status] of [
      ['GET', 204],
      ['HEAD', 200],
    ] as const) {
      const empty = bufferedResponse(method, status, '', headers, encode('x'));
      expect(empty).not.toBeInstanceOf(BytesResponse);
      expect(empty.body).toBeNull();
    }
  });

  it("makes a plain Response where Response sets bodyUsed on each instance (React Native's whatwg-fetch)", async () => {
    // The shape of whatwg-fetch's Response: `bodyUsed` a data property each instance gets, no `body` accessor.
    class PolyfillResponse {
      bodyUsed = false;
      readonly status: number;
      constructor(
        private readonly bodyInit: unknown,
        init: ResponseInit,
      ) {
        this.status = init.status ?? 200;
      }
      text(): Promise<string> {
        this.bodyUsed = true;
        return Promise.resolve(new TextDecoder().decode(this.bodyInit as Uint8Array));
      }
    }
    vi.stubGlobal('Response', PolyfillResponse);
    expect(canAnswerFromBytes()).toBe(false);
    const response = bufferedResponse('GET', 200, 'OK', new Headers(), encode('hi'));
    expect(response).toBeInstanceOf(PolyfillResponse);
    expect(await response.text()).toBe('hi');
    vi.unstubAllGlobals();
    expect(canAnswerFromBytes()).toBe(true);
  });

  it('makes a plain Response where there is no TextDecoder', () => {
    vi.stubGlobal('TextDecoder', undefined);
    expect(canAnswerFromBytes()).toBe(false);
    const response = bufferedResponse('GET', 200, 'OK', new Headers(), encode('hi'));
    expect(response).not.toBeInstanceOf(BytesResponse);
    expect(response).toBeInstanceOf(Response);
  });
});
