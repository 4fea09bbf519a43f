import { afterEach, describe, expect, it, vi } from 'vitest';
import { harness } from '../helpers/client-harness.js';
import { respond } from '../helpers/scripted-transport.js';
import { manualConnectivity } from '../../src/connectivity/manual-connectivity.js';
import { PolicyError } from '../../src/errors/policy-error.js';
import { createFailoverClient } from '../../src/runtime/create-failover-client.js';
import { memoryStore } from '../../src/stores/memory-store.js';
import type { OutboxStore } from '../../src/stores/outbox-store.js';

// The page side of background delivery: a client with `background: 'service-worker'` asks for a Background Sync
// after each durable entry is stored, on a stand-in `navigator.serviceWorker` (the real one is exercised in
// test/browser/service-worker-outbox.chromium.test.ts).

const note = { method: 'POST', path: '/v1/notes', body: 'note', lifetime: 'durable' } as const;

/** A stand-in `navigator.serviceWorker` whose registration records the sync tags registered. */
function stubServiceWorker(registration: object | undefined) {
  const getRegistration = vi.fn(() => Promise.resolve(registration));
  vi.stubGlobal('navigator', { serviceWorker: { getRegistration } });
  return getRegistration;
}

/** Lets the registration's promise chain run. */
const settle = () => new Promise((resolve) => setImmediate(resolve));

afterEach(() => void vi.unstubAllGlobals());

describe("background: 'service-worker'", () => {
  it('registers the failwise-outbox sync tag once the entry is stored, whether it is sent at once or deferred', async () => {
    const tags: string[] = [];
    stubServiceWorker({ sync: { register: (tag: string) => (tags.push(tag), Promise.resolve()) } });
    const connectivity = manualConnectivity('offline');
    const h = harness([{ reply: respond(201) }], { background: 'service-worker', connectivity });
    const outcome = h.client.request(note);
    for (let i = 0; i < 20; i++) await h.clock.increment(0);
    expect(await outcome).toMatchObject({ status: 'deferred', reason: 'offline' });
    await settle();
    expect(tags).toEqual(['failwise-outbox']);
    connectivity.set('online');
    const sent = h.client.request(note);
    for (let i = 0; i < 20; i++) await h.clock.increment(0);
    expect(await sent).toMatchObject({ status: 'succeeded' });
    await settle();
    expect(tags).toEqual(['failwise-outbox', 'failwise-outbox']);
    await h.client.close();
  });

  it('registers nothing for a write the store refused', async () => {
    const getRegistration = stubServiceWorker({ sync: { register: () => Promise.resolve() } });
    const store: OutboxStore = { ...memoryStore(), add: () => Promise.reject(new Error('quota exceeded')) };
    const h = harness([{ reply: respond(201) }], { background: 'service-worker', store });
    const refused = h.client.request(note).catch((error: unknown) => error);
    for (let i = 0; i < 20; i++) await h.clock.increment(0);
    expect(String(await refused)).toContain('could not be written to the store');
    await settle();
    expect(getRegistration).not.toHaveBeenCalled();
    await h.client.close();
  });

  it('quietly does nothing without Background Sync, a registration, or a service worker at all', async () => {
    for (const setUp of [
      () => stubServiceWorker({}),
      () => stubServiceWorker(undefined),
      () => stubServiceWorker({ sync: { register: () => Promise.reject(new Error('NotAllowedError')) } }),
      () => vi.stubGlobal('navigator', {}),
      () => vi.stubGlobal('navigator', undefined),
    ]) {
      setUp();
      const h = harness([{ reply: respond(201) }], { background: 'service-worker' });
      const outcome = h.client.request(note);
      for (let i = 0; i < 20; i++) await h.clock.increment(0);
      expect(await outcome).toMatchObject({ status: 'succeeded' });
      await settle();
      await h.client.close();
      vi.unstubAllGlobals();
    }
  });

  it('is not asked for without the option', async () => {
    const getRegistration = stubServiceWorker({ sync: { register: () => Promise.resolve() } });
    const h = harness([{ reply: respond(201) }]);
    const outcome = h.client.request(note);
    for (let i = 0; i < 20; i++) await h.clock.increment(0);
    expect(await outcome).toMatchObject({ status: 'succeeded' });
    await settle();
    expect(getRegistration).not.toHaveBeenCalled();
    await h.client.close();
  });

  it('refuses any other value, naming the option', () => {
    const make = () =>
      createFailoverClient({
        origins: [{ id: 'primary', url: 'https://api.example.test' }],
        background: 'workbox' as never,
      });
    expect(make).toThrow(PolicyError);
    expect(make).toThrow(`background: expected 'service-worker', got "workbox"`);
  });
});
