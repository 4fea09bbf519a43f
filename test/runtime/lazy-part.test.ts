import { describe, expect, it, vi } from 'vitest';
import { harness } from '../helpers/client-harness.js';
import { respond } from '../helpers/scripted-transport.js';
import { simulatedClock } from '../../src/clock/simulated-clock.js';
import { memoryCache } from '../../src/cache/memory-cache.js';
import { memoryStore } from '../../src/stores/memory-store.js';
import type { OutboxStore } from '../../src/stores/outbox-store.js';
import { lazyPart } from '../../src/runtime/lazy-part.js';

// How many times the client made each lazily loaded part: the modules are the real ones, counted.
const made = vi.hoisted(() => ({ durable: 0, cached: 0 }));
vi.mock('../../src/runtime/durable-work.js', async (importOriginal) => {
  const actual = await importOriginal<typeof import('../../src/runtime/durable-work.js')>();
  return {
    ...actual,
    createDurableWork: (...args: Parameters<typeof actual.createDurableWork>) => {
      made.durable += 1;
      return actual.createDurableWork(...args);
    },
  };
});
vi.mock('../../src/runtime/cached-reads.js', async (importOriginal) => {
  const actual = await importOriginal<typeof import('../../src/runtime/cached-reads.js')>();
  return {
    ...actual,
    createCachedReads: (...args: Parameters<typeof actual.createCachedReads>) => {
      made.cached += 1;
      return actual.createCachedReads(...args);
    },
  };
});

/** Real event-loop turns: what loading a module takes. */
const realTurns = (n = 20) => new Promise<void>((resolve) => setTimeout(resolve, n));

const order = { method: 'POST', path: '/v1/orders', body: '{"qty":1}', lifetime: 'durable' } as const;

/** A memoryStore that outlives the client that closes it, so that a test can read what it kept. */
function keptStore(): OutboxStore {
  return { ...memoryStore(), close: () => Promise.resolve() };
}

describe('lazyPart', () => {
  it('holds the clock it is given at its instant while it loads, then lets it go on; no timer is left', async () => {
    const clock = simulatedClock();
    let loaded!: (part: string) => void;
    const part = lazyPart(() => new Promise<string>((resolve) => (loaded = resolve)), clock);
    const got = part.get();
    const later = vi.fn();
    clock.setTimeout(later, 1_000);
    const moving = clock.increment(5_000);
    await realTurns();
    expect(clock.now()).toBe(0);
    expect(later).not.toHaveBeenCalled();
    loaded('part');
    await moving;
    expect(await got).toBe('part');
    expect(later).toHaveBeenCalledOnce();
    expect(clock.now()).toBe(5_000);
    expect(clock.pending()).toBe(0);
  });

  it('loads once, however many ask; a failed load is tried again by the next get()', async () => {
    let loads = 0;
    const part = lazyPart(() =>
      ++loads === 1 ? Promise.reject(new Error('chunk')) : Promise.resolve(loads),
    );
    expect(part.started()).toBe(false);
    await expect(part.get()).rejects.toThrow('chunk');
    expect(part.started()).toBe(false);
    expect(await Promise.all([part.get(), part.get()])).toEqual([2, 2]);
    expect(loads).toBe(2);
  });

  it('close() waits for a load in progress and gives the part; afterwards a part never loaded rejects', async () => {
    let loaded!: (part: string) => void;
    const loading = lazyPart(() => new Promise<string>((resolve) => (loaded = resolve)));
    void loading.get();
    const closed = loading.close();
    loaded('part');
    expect(await closed).toBe('part');
    expect(await loading.get()).toBe('part');

    const load = vi.fn(() => Promise.resolve('never'));
    const never = lazyPart(load);
    expect(await never.close()).toBeUndefined();
    await expect(never.get()).rejects.toThrow('failwise: this client is closed');
    expect(load).not.toHaveBeenCalled();
  });
});

describe('the client loads durable work and cached reads when they are first needed', () => {
  it('without a store, a cache or such requests, loads neither; its outbox answers as an empty one', async () => {
    made.durable = made.cached = 0;
    const h = harness([{ reply: respond(200) }]);
    expect(await h.run({ path: '/v1/items' })).toMatchObject({ status: 'succeeded' });
    expect(await h.client.outbox.size()).toBe(0);
    expect(await h.client.outbox.list()).toEqual([]);
    expect(await h.client.outbox.flush()).toEqual({ sent: 0, failed: 0, pending: 0 });
    expect(await h.client.outbox.remove('nothing')).toBe(false);
    expect(await h.client.outbox.retry('nothing')).toBe(false);
    await h.client.close();
    expect(made).toEqual({ durable: 0, cached: 0 });
    expect(h.clock.pending()).toBe(0);
    // As an empty memoryStore's outbox did once the client was closed.
    await expect(h.client.outbox.size()).rejects.toThrow('memoryStore.list: the store is closed');
    await expect(h.client.outbox.list()).rejects.toThrow('memoryStore.list: the store is closed');
    await expect(h.client.outbox.flush()).rejects.toThrow(
      'failwise outbox: flush() was called after close()',
    );
    await expect(h.client.outbox.retry('x')).rejects.toThrow(
      'failwise outbox: retry() was called after close()',
    );
    expect(made).toEqual({ durable: 0, cached: 0 });
  });

  it('loads durable work on the first durable request, and cached reads on the first cached read, once each', async () => {
    made.durable = made.cached = 0;
    const h = harness([{ reply: respond(200) }]);
    await h.run({ path: '/v1/items', lifetime: 'cached' });
    await h.run({ path: '/v1/items', lifetime: 'cached' });
    expect(made).toEqual({ durable: 0, cached: 1 });
    expect(await h.run(order)).toMatchObject({ status: 'succeeded' });
    expect(await h.run(order)).toMatchObject({ status: 'succeeded' });
    expect(made).toEqual({ durable: 1, cached: 1 });
    await h.client.close();
    expect(h.clock.pending()).toBe(0);
  });

  it('given a store, loads durable work at once, and its outbox sends what a previous process left', async () => {
    made.durable = 0;
    const store = keptStore();
    const first = harness([{ reply: 'hang' }], { store });
    void first.client.request(order);
    await first.clock.increment(0);
    await first.client.close();
    expect(await store.list()).toHaveLength(1);

    // No request: the second client's outbox finds the entry in the store as soon as it is loaded.
    const second = harness([{ reply: respond(201) }], { store });
    for (let i = 0; i < 20 && (await store.list()).length > 0; i++) await second.clock.increment(0);
    expect(made.durable).toBe(2);
    expect(second.transport.calls.map((call) => call.url)).toEqual(['https://api.example.test/v1/orders']);
    expect(await store.list()).toEqual([]);
    await second.client.close();
    expect(second.clock.pending()).toBe(0);
  });

  it('given a cache, loads cached reads at once', async () => {
    made.cached = 0;
    const h = harness([{ reply: respond(200) }], { cache: memoryCache() });
    expect(made.cached).toBe(0);
    await h.clock.increment(0);
    expect(made.cached).toBe(1);
    await h.client.close();
    expect(h.clock.pending()).toBe(0);
  });

  it('writes a durable request made just before close() to the store, and sends nothing', async () => {
    const store = keptStore();
    const h = harness([{ reply: respond(201) }], { store });
    const outcome = h.client.request(order);
    await h.client.close();
    expect(await outcome).toMatchObject({ status: 'deferred' });
    expect(await store.list()).toMatchObject([{ request: { path: '/v1/orders' }, status: 'pending' }]);
    expect(h.transport.calls).toEqual([]);
    expect(h.clock.pending()).toBe(0);
  });

  it('ends a cached read made just before close() as cancelled, as close() ends every request', async () => {
    const h = harness([{ reply: 'hang' }]);
    const outcome = h.client.request({ path: '/v1/items', lifetime: 'cached' });
    await h.client.close();
    expect(await outcome).toMatchObject({ status: 'failed', reason: 'cancelled' });
    expect(h.clock.pending()).toBe(0);
  });
});
