// Loading the client's lazy parts slowly, or not at all: each test makes the first import() of durable work
// and cached reads wait for a gate it opens (or fails) itself.
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { harness } from '../helpers/client-harness.js';
import { respond, scriptedTransport } from '../helpers/scripted-transport.js';
import { systemClock } from '../../src/clock/system-clock.js';
import { createFailoverClient } from '../../src/runtime/create-failover-client.js';
import type { DecisionEvent } from '../../src/runtime/decision-events.js';
import { FailwiseError } from '../../src/errors/failwise-error.js';
import { memoryStore } from '../../src/stores/memory-store.js';
import type { OutboxStore } from '../../src/stores/outbox-store.js';

/** The first import() of each part waits for it: `open()` lets the load go on, `fail()` makes it fail. */
const gate = {
  open: () => {},
  fail: (_error: Error) => {},
  opened: Promise.resolve(),
  reset() {
    gate.opened = new Promise<void>((resolve, reject) => {
      gate.open = resolve;
      gate.fail = reject;
    });
    // Awaited by the module factories; a test that fails the gate is not an unhandled rejection.
    gate.opened.catch(() => undefined);
  },
};
beforeEach(() => {
  gate.reset();
  // Each test loads the parts afresh (the real modules), through its own gate.
  vi.resetModules();
  for (const part of ['../../src/runtime/durable-work.js', '../../src/runtime/cached-reads.js'])
    vi.doMock(part, async (importOriginal) => {
      await gate.opened;
      return importOriginal();
    });
});
afterEach(() => gate.open());

/** Real event-loop turns: the time a module takes to load, here as long as the gate stays shut. */
const realTurns = (ms = 30) => new Promise<void>((resolve) => setTimeout(resolve, ms));

const order = { method: 'POST', path: '/v1/orders', body: '{"qty":1}', lifetime: 'durable' } as const;

/** A memoryStore that outlives the client that closes it, so that a test can read what it kept. */
function keptStore(): OutboxStore {
  return { ...memoryStore(), close: () => Promise.resolve() };
}

describe('a durable request while durable work loads', () => {
  it('counts the load against its budget (system clock): deferred, budget-exhausted, once written', async () => {
    const events: DecisionEvent[] = [];
    const client = createFailoverClient({
      origins: [{ id: 'primary', url: 'https://api.example.test' }],
      clock: systemClock,
      transport: scriptedTransport(systemClock, [{ reply: 'hang' }]),
      onEvent: (event) => events.push(event),
    });
    const outcome = client.request({ ...order, deadlineMs: 20 });
    let settled = false;
    void outcome.finally(() => (settled = true));
    await realTurns(60);
    // Nothing is answered before the request is written (rule 10).
    expect(settled).toBe(false);
    gate.open();
    expect(await outcome).toMatchObject({ status: 'deferred', reason: 'budget-exhausted' });
    expect(await client.outbox.list()).toMatchObject([{ request: { path: '/v1/orders' } }]);
    expect(events.filter((event) => event.type === 'deferred')).toHaveLength(1);
    await client.close();
  });

  it('takes no simulated time: the clock driven meanwhile stays at its instant until it is loaded', async () => {
    const h = harness([{ reply: respond(201), latencyMs: 100 }]);
    const outcome = h.client.request(order);
    const driven = h.clock.runAll();
    await realTurns();
    expect(h.clock.now()).toBe(0);
    gate.open();
    await driven;
    expect(await outcome).toMatchObject({ status: 'succeeded', attempts: 1, elapsedMs: 100 });
    await h.client.close();
    expect(h.clock.pending()).toBe(0);
  });

  it('close() waits for the load, then the request made before it is in the store; no timer is left', async () => {
    const store = keptStore();
    const h = harness([{ reply: respond(201) }], { store });
    const outcome = h.client.request(order);
    const closing = h.client.close();
    await realTurns();
    gate.open();
    await closing;
    expect(await outcome).toMatchObject({ status: 'deferred' });
    expect(await store.list()).toMatchObject([{ request: { path: '/v1/orders' }, status: 'pending' }]);
    expect(h.transport.calls).toEqual([]);
    expect(h.clock.pending()).toBe(0);
  });

  it('rejects, saying nothing was stored or sent, when durable work cannot be loaded; the next one loads it', async () => {
    const h = harness([{ reply: respond(201) }]);
    const outcome = h.client.request(order);
    gate.fail(new Error('chunk load failed'));
    const error: unknown = await outcome.catch((e: unknown) => e);
    expect(error).toBeInstanceOf(FailwiseError);
    expect((error as Error).message).toBe(
      'failwise: durable work could not be loaded; nothing was stored or sent',
    );
    // The cause is the import()'s own error (vitest wraps the module factory's).
    expect((error as Error).cause).toBeInstanceOf(Error);
    expect(h.clock.pending()).toBe(0);
    expect(h.transport.calls).toEqual([]);

    gate.reset();
    vi.resetModules();
    gate.open();
    expect(await h.run(order)).toMatchObject({ status: 'succeeded' });
    await h.client.close();
    expect(h.clock.pending()).toBe(0);
  });
});

describe('a cached read while cached reads load', () => {
  it('is sent as an interactive request when cached reads cannot be loaded, as on a cache miss', async () => {
    const h = harness([{ reply: respond(200) }]);
    const outcome = h.client.request({ path: '/v1/items', lifetime: 'cached' });
    gate.fail(new Error('chunk load failed'));
    await h.clock.runAll();
    expect(await outcome).toMatchObject({ status: 'succeeded', origin: 'primary' });
    expect(h.transport.calls).toHaveLength(1);
    await h.client.close();
    expect(h.clock.pending()).toBe(0);
  });
});
