/*
 * Without `crypto.randomUUID` (React Native's Hermes), a client is made and serves requests that need no key;
 * the first one that needs a generated key rejects with a RequestError naming `generateIdempotencyKey`.
 * `globalThis.crypto` is stubbed per test and restored after.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { simulatedClock } from '../../src/clock/simulated-clock.js';
import { RequestError } from '../../src/errors/request-error.js';
import { createFailoverClient } from '../../src/runtime/create-failover-client.js';
import type { FailoverClientOptions } from '../../src/runtime/client-options.js';
import type { FailoverRequest } from '../../src/runtime/prepare-request.js';
import { memoryStore } from '../../src/stores/memory-store.js';
import { respond, scriptedTransport } from '../helpers/scripted-transport.js';

afterEach(() => {
  vi.unstubAllGlobals();
});

/** A runtime whose `crypto` has no randomUUID, as Hermes has: calling it would be a TypeError. */
const withoutRandomUUID = () =>
  vi.stubGlobal('crypto', { getRandomValues: crypto.getRandomValues.bind(crypto) });

function setUp(options: Partial<FailoverClientOptions> = {}) {
  const clock = simulatedClock();
  const transport = scriptedTransport(clock, [{ reply: respond(201) }]);
  const client = createFailoverClient({
    origins: [{ id: 'primary', url: 'https://api.example.test' }],
    clock,
    transport,
    ...options,
  });
  const run = async (request: FailoverRequest) => {
    const outcome = client.request(request).catch((error: unknown) => error);
    for (let i = 0; i < 20; i++) {
      await clock.runAll();
      await new Promise((resolve) => setImmediate(resolve));
    }
    return outcome;
  };
  return { client, transport, run };
}

const missing =
  'no crypto.randomUUID here (React Native: Hermes) to make a key: pass generateIdempotencyKey to createFailoverClient';

describe('without crypto.randomUUID', () => {
  it('makes a client, with a store of its own too, and sends requests that need no key', async () => {
    withoutRandomUUID();
    const { client, run } = setUp({ store: memoryStore() });
    expect(await run({ path: '/items' })).toMatchObject({ status: 'succeeded' });
    expect(await run({ method: 'POST', path: '/orders', idempotencyKey: 'k-1' })).toMatchObject({
      status: 'succeeded',
    });
    await client.close();
  });

  it("rejects an 'auto' key with a RequestError naming generateIdempotencyKey, sending nothing", async () => {
    withoutRandomUUID();
    const { client, transport, run } = setUp();
    const error = await run({ method: 'POST', path: '/orders', idempotencyKey: 'auto' });
    expect(error).toBeInstanceOf(RequestError);
    expect((error as RequestError).message).toBe(`request.idempotencyKey: ${missing}`);
    expect(transport.calls).toHaveLength(0);
    await client.close();
  });

  it('rejects a durable request without a key the same way; with its own key, its entry id still needs one', async () => {
    withoutRandomUUID();
    const { client, transport, run } = setUp();
    const error = await run({ method: 'POST', path: '/orders', lifetime: 'durable' });
    expect((error as RequestError).message).toBe(`request.idempotencyKey: ${missing}`);
    const keyed = await run({ method: 'POST', path: '/orders', lifetime: 'durable', idempotencyKey: 'k-2' });
    expect(keyed).toBeInstanceOf(RequestError);
    expect((keyed as RequestError).message).toBe(`request.lifetime: ${missing}`);
    expect(transport.calls).toHaveLength(0);
    expect(await client.outbox.size()).toBe(0);
    await client.close();
  });

  it('uses generateIdempotencyKey for keys and durable entries', async () => {
    withoutRandomUUID();
    let n = 0;
    const { client, transport, run } = setUp({ generateIdempotencyKey: () => `key-${++n}` });
    expect(await run({ method: 'POST', path: '/orders', idempotencyKey: 'auto' })).toMatchObject({
      status: 'succeeded',
    });
    expect(transport.calls[0]!.headers['idempotency-key']).toBe('key-1');
    expect(await run({ method: 'POST', path: '/orders', lifetime: 'durable' })).toMatchObject({
      status: 'succeeded',
    });
    // The durable request's key, its entry id and this client's name on the lease, in some order.
    expect(transport.calls[1]!.headers['idempotency-key']).toMatch(/^key-[2-4]$/);
    await client.close();
  });
});

describe('generateIdempotencyKey', () => {
  it.each([
    [
      'throws',
      () => {
        throw new Error('no entropy');
      },
      'request.idempotencyKey: generateIdempotencyKey threw',
    ],
    [
      'returns an empty string',
      () => '',
      'request.idempotencyKey: generateIdempotencyKey returned no key (a non-empty string of printable ASCII)',
    ],
    [
      'returns a line break',
      () => 'a\r\nb',
      'request.idempotencyKey: generateIdempotencyKey returned no key (a non-empty string of printable ASCII)',
    ],
  ])('that %s makes the request reject with a RequestError', async (_, generateIdempotencyKey, message) => {
    const { client, transport, run } = setUp({
      generateIdempotencyKey,
    });
    const error = await run({ method: 'POST', path: '/orders', idempotencyKey: 'auto' });
    expect(error).toBeInstanceOf(RequestError);
    expect((error as Error).message).toBe(message);
    expect(transport.calls).toHaveLength(0);
    await client.close();
  });

  it('is not called when the client is made', () => {
    let calls = 0;
    const { client } = setUp({ generateIdempotencyKey: () => `key-${++calls}`, store: memoryStore() });
    expect(calls).toBe(0);
    return client.close();
  });
});
