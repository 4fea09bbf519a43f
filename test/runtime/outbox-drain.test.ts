import { describe, expect, it } from 'vitest';
import { leftBehind } from '../helpers/left-behind-store.js';
import { harness } from '../helpers/client-harness.js';
import { respond } from '../helpers/scripted-transport.js';
import { ArgumentError } from '../../src/errors/argument-error.js';
import { StateError } from '../../src/errors/state-error.js';
import { memoryStore } from '../../src/stores/memory-store.js';
import type { SimulatedClock } from '../../src/clock/simulated-clock.js';

/** Moves the simulated clock on in `stepMs` steps until `promise` settles. */
async function drive<T>(clock: SimulatedClock, promise: Promise<T>, stepMs: number): Promise<T> {
  let done = false;
  void promise.then(
    () => (done = true),
    () => (done = true),
  );
  for (let i = 0; i < 2_000 && !done; i++) await clock.increment(i === 0 ? 0 : stepMs);
  return promise;
}

describe('client.outbox.drain', () => {
  it('in a background task: sends what the app left, stops starting sends at the limit, and close() ends it', async () => {
    const store = await leftBehind(5);
    const h = harness([{ reply: respond(201), latencyMs: 1_000 }], { store });
    // The task's body: `const result = await client.outbox.drain(...); await client.close();`.
    const task = h.client.outbox
      .drain({ timeLimitMs: 1_500 })
      .then(async (result) => (await h.client.close(), { result, at: h.clock.now() }));
    const { result, at } = await drive(h.clock, task, 100);
    expect(result).toEqual({ sent: 2, failed: 0, pending: 3, reason: 'time-limit' });
    expect(at).toBe(2_000);
    expect(h.transport.calls.map((c) => c.body)).toEqual(['note 1', 'note 2']);
    expect(h.clock.pending()).toBe(0);
  });

  it('stops starting sends after 15 s by default', async () => {
    const store = await leftBehind(10);
    const h = harness([{ reply: respond(201), latencyMs: 4_000 }], { store });
    const result = await drive(h.clock, h.client.outbox.drain(), 100);
    expect(result).toEqual({ sent: 4, failed: 0, pending: 6, reason: 'time-limit' });
    // Sends began at 0, 4, 8 and 12 s; the one in flight at 15 s ended at 16 s.
    expect(h.clock.now()).toBe(16_000);
    await h.client.close();
  });

  it('resolves at once with nothing to send, stored or not', async () => {
    const withStore = harness([{ reply: respond(201) }], { store: memoryStore() });
    expect(await drive(withStore.clock, withStore.client.outbox.drain(), 100)).toEqual({
      sent: 0,
      failed: 0,
      pending: 0,
    });
    expect(withStore.clock.now()).toBe(0);
    await withStore.client.close();
    const withoutStore = harness([{ reply: respond(201) }]);
    expect(await withoutStore.client.outbox.drain({ timeLimitMs: 1_000 })).toEqual({
      sent: 0,
      failed: 0,
      pending: 0,
    });
    await withoutStore.client.close();
  });

  it.each([
    [-1, '-1'],
    [0, '0'],
    [1.5, '1.5'],
    [Number.NaN, 'NaN'],
    [Number.POSITIVE_INFINITY, 'Infinity'],
    [2_147_483_648, '2147483648'],
    ['100', '"100"'],
  ])('refuses timeLimitMs %s, naming it', async (timeLimitMs, shown) => {
    for (const store of [memoryStore(), undefined]) {
      const h = harness([{ reply: respond(201) }], store ? { store } : {});
      const drained = h.client.outbox.drain({ timeLimitMs: timeLimitMs as number });
      await expect(drained).rejects.toThrow(ArgumentError);
      await expect(drained).rejects.toThrow(
        `client.outbox.drain: options.timeLimitMs: expected a whole number of ms from 1 to 2147483647, got ${shown}`,
      );
      await expect(drained).rejects.toMatchObject({ argument: 'options.timeLimitMs' });
      await h.client.close();
    }
  });

  it('refuses options that are not an object', async () => {
    const h = harness([{ reply: respond(201) }]);
    await expect(h.client.outbox.drain(null as never)).rejects.toThrow(
      'client.outbox.drain: options: expected an object, got null',
    );
    await h.client.close();
  });

  it('is refused once the client is closed, with a store or without', async () => {
    for (const store of [memoryStore(), undefined]) {
      const h = harness([{ reply: respond(201) }], store ? { store } : {});
      await h.client.close();
      const drained = h.client.outbox.drain();
      await expect(drained).rejects.toThrow(StateError);
      await expect(drained).rejects.toThrow('failwise outbox: drain() was called after close()');
    }
  });
});
