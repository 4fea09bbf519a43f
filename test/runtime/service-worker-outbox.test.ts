import { describe, expect, it } from 'vitest';
import { leftBehind } from '../helpers/left-behind-store.js';
import { simulatedClock, type SimulatedClock } from '../../src/clock/simulated-clock.js';
import { ArgumentError } from '../../src/errors/argument-error.js';
import { FailwiseError } from '../../src/errors/failwise-error.js';
import {
  serviceWorkerOutbox,
  type OutboxSyncEvent,
  type ServiceWorkerScope,
} from '../../src/runtime/service-worker-outbox.js';
import { memoryStore } from '../../src/stores/memory-store.js';
import type { OutboxStore } from '../../src/stores/outbox-store.js';
import type { PolicyInput } from '../../src/policy/policy.js';
import { respond, scriptedTransport, type ScriptedReply } from '../helpers/scripted-transport.js';

// serviceWorkerOutbox's handling of the worker's events, on a stand-in `self` and a simulated clock (the real
// worker, in Chromium, is test/browser/service-worker-outbox.chromium.test.ts).

/** A stand-in for the worker's `self`: its listeners, and the tags registered with `registration.sync`. */
function fakeScope() {
  const listeners = new Map<string, Set<(event: OutboxSyncEvent) => void>>();
  const registered: string[] = [];
  const scope: ServiceWorkerScope = {
    addEventListener: (type, listener) =>
      void listeners.set(type, (listeners.get(type) ?? new Set()).add(listener)),
    removeEventListener: (type, listener) => void listeners.get(type)?.delete(listener),
    registration: { sync: { register: (tag: string) => (registered.push(tag), Promise.resolve()) } },
  };
  /** Fires an event; what it was given to wait for, if anything. */
  const fire = (type: 'sync' | 'periodicsync', tag: string, lastChance = false) => {
    const waited: Promise<unknown>[] = [];
    for (const listener of listeners.get(type) ?? [])
      listener({ tag, lastChance, waitUntil: (p) => waited.push(p) });
    return waited;
  };
  return {
    scope,
    registered,
    fire,
    listening: () => [...listeners.values()].reduce((n, s) => n + s.size, 0),
  };
}

/** Moves the simulated clock on in 100 ms steps until `promise` settles. */
async function drive<T>(clock: SimulatedClock, promise: Promise<T>): Promise<T> {
  let done = false;
  void promise.then(
    () => (done = true),
    () => (done = true),
  );
  for (let i = 0; i < 2_000 && !done; i++) await clock.increment(i === 0 ? 0 : 100);
  return promise;
}

function worker(
  store: OutboxStore,
  script: ScriptedReply[],
  timeLimitMs?: number,
  policy: PolicyInput = { attempts: { max: 1 } },
) {
  const clock = simulatedClock();
  const transport = scriptedTransport(clock, script);
  const fake = fakeScope();
  const outbox = serviceWorkerOutbox(fake.scope, {
    origins: [{ id: 'api', url: 'https://api.example.test' }],
    store,
    clock,
    transport,
    random: () => 0.5,
    policy,
    ...(timeLimitMs === undefined ? {} : { timeLimitMs }),
  });
  return { clock, transport, outbox, ...fake };
}

describe('serviceWorkerOutbox', () => {
  it('drains as the worker starts', async () => {
    const w = worker(await leftBehind(2), [{ reply: respond(201) }]);
    expect(await drive(w.clock, w.outbox.started)).toEqual({ sent: 2, failed: 0, pending: 0 });
    await w.outbox.close();
  });

  it("drains on a 'failwise-outbox' sync event, within event.waitUntil, and ignores other tags", async () => {
    const store = await leftBehind(0);
    const w = worker(store, [{ reply: respond(201) }]);
    await drive(w.clock, w.outbox.started);
    expect(w.fire('sync', 'someone-else')).toEqual([]);
    // A page stored an entry since the worker started.
    await store.add((await leftBehind(1).then((s) => s.list()))[0]!);
    const waited = w.fire('sync', 'failwise-outbox');
    expect(waited).toHaveLength(1);
    await drive(w.clock, waited[0]!);
    expect(w.transport.calls.map((c) => c.body)).toEqual(['note 1']);
    expect(await w.outbox.client.outbox.size()).toBe(0);
    await w.outbox.close();
  });

  it('fails the sync event while entries are left, so the browser fires it again later', async () => {
    const w = worker(await leftBehind(1), [{ reply: respond(503) }]);
    await drive(w.clock, w.outbox.started);
    const [waited] = w.fire('sync', 'failwise-outbox');
    await expect(drive(w.clock, waited!)).rejects.toThrow(FailwiseError);
    await expect(waited).rejects.toThrow(
      'failwise: 1 outbox entries still pending (backoff); the browser fires this sync again later',
    );
    expect(w.registered).toEqual([]);
    await w.outbox.close();
  });

  it('on its last chance, registers the sync tag again instead of failing the event', async () => {
    const w = worker(await leftBehind(1), [{ reply: respond(503) }]);
    await drive(w.clock, w.outbox.started);
    const [waited] = w.fire('sync', 'failwise-outbox', true);
    await drive(w.clock, waited!);
    expect(w.registered).toEqual(['failwise-outbox']);
    await w.outbox.close();
  });

  it('drains on a periodicsync event with the tag', async () => {
    const store = await leftBehind(0);
    const w = worker(store, [{ reply: respond(201) }]);
    await drive(w.clock, w.outbox.started);
    await store.add((await leftBehind(1).then((s) => s.list()))[0]!);
    const [waited] = w.fire('periodicsync', 'failwise-outbox');
    expect(await drive(w.clock, waited!)).toEqual({ sent: 1, failed: 0, pending: 0 });
    await w.outbox.close();
  });

  it('stops each drain from starting sends after timeLimitMs (2 minutes by default)', async () => {
    // Each send takes 50 s: they start at 0, 50 and 100 s.
    const slow = [{ reply: respond(201), latencyMs: 50_000 }];
    const patient = { attempts: { max: 1 }, budgetMs: 60_000, timeouts: { attemptMs: 60_000 } };
    const byDefault = worker(await leftBehind(5), slow, undefined, patient);
    expect(await drive(byDefault.clock, byDefault.outbox.started)).toEqual({
      sent: 3,
      failed: 0,
      pending: 2,
      reason: 'time-limit',
    });
    await byDefault.outbox.close();
    const given = worker(await leftBehind(5), slow, 60_000, patient);
    expect(await drive(given.clock, given.outbox.started)).toMatchObject({ sent: 2, pending: 3 });
    await given.outbox.close();
  });

  it('stops listening and closes its client on close()', async () => {
    const w = worker(await leftBehind(0), [{ reply: respond(201) }]);
    expect(w.listening()).toBe(2);
    await w.outbox.close();
    expect(w.listening()).toBe(0);
    expect(w.fire('sync', 'failwise-outbox')).toEqual([]);
    await expect(w.outbox.drain()).rejects.toThrow('failwise outbox: drain() was called after close()');
  });

  it('refuses a bad timeLimitMs', async () => {
    expect(() => worker(memoryStore(), [{ reply: respond(201) }], 0)).toThrow(ArgumentError);
    expect(() => worker(memoryStore(), [{ reply: respond(201) }], 0)).toThrow(
      'client.outbox.drain: options.timeLimitMs: expected a whole number of ms from 1 to 2147483647, got 0',
    );
  });
});
