import { describe, expect, it } from 'vitest';
import { harness } from '../helpers/client-harness.js';
import { fail, respond } from '../helpers/scripted-transport.js';
import { manualConnectivity } from '../../src/connectivity/manual-connectivity.js';
import { memoryCache } from '../../src/cache/memory-cache.js';
import { RequestError } from '../../src/errors/request-error.js';

const items = { path: '/v1/items', lifetime: 'cached' } as const;
const ok = (body: string, headers: Record<string, string> = {}) => ({
  reply: respond(200, { 'content-type': 'application/json', ...headers }, body),
});

describe("lifetime: 'cached'", () => {
  it('answers from the network while it works, and from the cache, stale with its age, when the network path fails', async () => {
    const h = harness([ok('[1,2]'), { reply: fail('connect') }], { policy: { attempts: { max: 1 } } });
    const fresh = await h.run(items);
    expect(fresh).toMatchObject({ status: 'succeeded', origin: 'primary' });
    expect(fresh.status === 'succeeded' && fresh.stale).toBeUndefined();
    expect(fresh.status === 'succeeded' && (await fresh.response.text())).toBe('[1,2]');
    await h.clock.increment(5_000);
    const stale = await h.run(items);
    expect(stale).toMatchObject({
      status: 'succeeded',
      stale: true,
      ageMs: 5_000,
      origin: 'primary',
      attempts: 1,
    });
    expect(stale.status === 'succeeded' && (await stale.response.text())).toBe('[1,2]');
    expect(stale.status === 'succeeded' && stale.response.headers.get('content-type')).toBe(
      'application/json',
    );
    expect(h.events.filter((e) => e.type === 'succeeded').map((e) => e.stale)).toEqual([undefined, true]);
  });

  it('answers from the cache while offline, sending nothing', async () => {
    const connectivity = manualConnectivity('online');
    const h = harness([ok('[1]')], { connectivity });
    await h.run(items);
    connectivity.set('offline');
    expect(await h.run(items)).toMatchObject({ status: 'succeeded', stale: true, attempts: 0 });
    expect(h.transport.calls).toHaveLength(1);
  });

  it('never answers a 4xx or a 401 from the cache: the server answered', async () => {
    const h = harness([ok('[1]'), { reply: respond(404) }]);
    await h.run(items);
    expect(await h.run(items)).toMatchObject({
      status: 'failed',
      reason: 'not-retryable',
      failure: { status: 404 },
    });
  });

  it('never serves a response older than policy.cache.maxAgeMs', async () => {
    const h = harness([ok('[1]'), { reply: fail('connect') }], {
      policy: { attempts: { max: 1 }, cache: { maxAgeMs: 60_000 } },
    });
    await h.run(items);
    await h.clock.increment(60_001);
    expect(await h.run(items)).toMatchObject({ status: 'failed', reason: 'attempts-exhausted' });
  });

  it('answers from the cache at once while a refresh of the same key runs', async () => {
    const h = harness([ok('[1]'), { reply: ok('[2]').reply, latencyMs: 1_000 }]);
    await h.run(items);
    const refresh = h.client.request(items);
    await h.clock.increment(10);
    const meanwhile = await h.client.request(items);
    expect(meanwhile).toMatchObject({ status: 'succeeded', stale: true, ageMs: 10, attempts: 0 });
    expect(h.transport.calls).toHaveLength(2);
    await h.clock.increment(1_000);
    const refreshed = await refresh;
    expect(refreshed.status === 'succeeded' && (await refreshed.response.text())).toBe('[2]');
  });

  it('keeps nothing marked no-store, and keys by cacheKey when given', async () => {
    const h = harness([ok('[1]', { 'cache-control': 'no-store' }), ok('[2]'), { reply: fail('connect') }], {
      policy: { attempts: { max: 1 } },
    });
    await h.run(items);
    await h.run({ ...items, path: '/v1/items?user=7', cacheKey: 'items' });
    expect(await h.run(items)).toMatchObject({ status: 'failed' });
    const stale = await h.run({ ...items, path: '/v1/items?user=7&page=1', cacheKey: 'items' });
    expect(stale.status === 'succeeded' && (await stale.response.text())).toBe('[2]');
  });

  it('is for GET and HEAD only', async () => {
    const h = harness([ok('[1]')]);
    await expect(h.client.request({ ...items, method: 'POST', body: '{}' })).rejects.toThrow(
      new RequestError('lifetime', '"cached" is for GET and HEAD requests, got POST'),
    );
    await expect(h.client.request({ path: '/x', cacheKey: 'x' })).rejects.toThrow(RequestError);
  });
});

describe('memoryCache', () => {
  const entry = (storedAt: number) => ({
    status: 200,
    statusText: 'OK',
    headers: [] as [string, string][],
    body: new Uint8Array([storedAt]),
    origin: 'primary',
    storedAt,
  });

  it('keeps at most maxEntries, dropping the least recently used', async () => {
    const cache = memoryCache({ maxEntries: 2 });
    await cache.put('a', entry(1));
    await cache.put('b', entry(2));
    await cache.get('a');
    await cache.put('c', entry(3));
    expect(await cache.get('b')).toBeUndefined();
    expect((await cache.get('a'))?.storedAt).toBe(1);
    expect((await cache.get('c'))?.storedAt).toBe(3);
    await cache.clear();
    expect(await cache.get('a')).toBeUndefined();
  });

  it('refuses a bad maxEntries', () => {
    expect(() => memoryCache({ maxEntries: 0 })).toThrow(
      'memoryCache: options.maxEntries: expected an integer >= 1, got 0',
    );
  });
});
