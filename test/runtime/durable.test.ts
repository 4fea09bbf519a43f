import { describe, expect, it } from 'vitest';
import { harness, type Harness } from '../helpers/client-harness.js';
import { fail, respond } from '../helpers/scripted-transport.js';
import { manualConnectivity } from '../../src/connectivity/manual-connectivity.js';
import { memoryStore } from '../../src/stores/memory-store.js';
import type { OutboxEntry, OutboxStore } from '../../src/stores/outbox-store.js';
import { RequestError } from '../../src/errors/request-error.js';
import { FailwiseError } from '../../src/errors/failwise-error.js';
import { RequestFailedError } from '../../src/errors/request-failed-error.js';
import { STORE_ANSWER_MS, STORE_WAIT_MS } from '../../src/runtime/bounded-wait.js';
import type { Outcome } from '../../src/policy/outcome.js';

const order = { method: 'POST', path: '/v1/orders', body: '{"qty":1}', lifetime: 'durable' } as const;
const keyOf = (headers: Record<string, string>) => headers['idempotency-key'];

/** Drives the simulated clock at its current time until `promise` settles: outbox work needs its 0 ms timers run. */
async function settled<T>(h: Harness, promise: Promise<T>): Promise<T> {
  let done = false;
  void promise.then(
    () => (done = true),
    () => (done = true),
  );
  for (let i = 0; i < 100 && !done; i++) await h.clock.increment(0);
  return promise;
}

/** A store that records what it held at each moment a send began. */
function watchedStore() {
  const store = memoryStore();
  const seenAtSend: OutboxEntry[][] = [];
  return { store, seenAtSend, snapshot: async () => seenAtSend.push(await store.list()) };
}

describe('lifetime: durable', () => {
  it('is written to the store, with a generated key, before its first attempt, and removed once it succeeded', async () => {
    const { store, seenAtSend, snapshot } = watchedStore();
    const h = harness([{ reply: respond(201) }], { store });
    const send = h.transport.send.bind(h.transport);
    h.transport.send = async (request) => (await snapshot(), send(request));
    const outcome = await settled(h, h.client.request(order));
    expect(outcome).toMatchObject({ status: 'succeeded', attempts: 1, origin: 'primary' });
    expect(seenAtSend).toHaveLength(1);
    const [stored] = seenAtSend[0]!;
    expect(stored).toMatchObject({
      status: 'pending',
      request: { method: 'POST', path: '/v1/orders', body: '{"qty":1}' },
    });
    expect(stored!.idempotencyKey).toMatch(/^[0-9a-f-]{36}$/);
    expect(keyOf(h.transport.calls[0]!.headers)).toBe(stored!.idempotencyKey);
    expect(await h.client.outbox.size()).toBe(0);
    await h.client.close();
    expect(h.clock.pending()).toBe(0);
  });

  it('with maxAttempts 10 and no jitter, rides out about 49 minutes of 503s: sends at 0, 40 s, 6 min, 49 min, then dead-lettered (docs/durable.md)', async () => {
    const h = harness([{ reply: respond(503) }], {
      policy: { durable: { maxAttempts: 10, jitter: 'none' } },
    });
    const sentAt: number[] = [];
    const send = h.transport.send.bind(h.transport);
    h.transport.send = (request) => (sentAt.push(h.clock.now()), send(request));
    void h.client.request(order);
    await h.clock.runAll();
    const [entry] = await h.client.outbox.list();
    expect(entry).toMatchObject({ status: 'dead', attempts: 10, deadReason: 'attempts-exhausted' });
    // Each send makes up to 3 attempts (backoff of 100 and 200 ms between them with random 0.5); the fourth
    // has 1 left of durable.maxAttempts. The outbox waits 40 s, 320 s and 2,560 s after sends 1 to 3.
    expect(sentAt).toHaveLength(10);
    const sends = [0, 40_300, 360_600, 2_920_900];
    expect(sentAt).toEqual([
      0,
      100,
      300,
      ...sends.slice(1, 3).flatMap((t) => [t, t + 100, t + 300]),
      sends[3],
    ]);
    expect(sentAt.at(-1)! / 60_000).toBeCloseTo(48.7, 1);
  });

  it('with the defaults, keeps trying for 7 days (maxAgeMs), its waits spread by full jitter, then dead-letters it as expired', async () => {
    const h = harness([{ reply: respond(503) }]);
    const sentAt: number[] = [];
    const send = h.transport.send.bind(h.transport);
    h.transport.send = (request) => (sentAt.push(h.clock.now()), send(request));
    void h.client.request(order);
    await h.clock.runAll(8 * 86_400_000);
    const [entry] = await h.client.outbox.list();
    expect(entry).toMatchObject({ status: 'dead', deadReason: 'expired' });
    // Sends of 3 attempts each (at t, t + 100, t + 300). After send k the backoff is 10 s * 2^(3k - 1), at most
    // 5 h (from send 4 on: 20,480 s), and full jitter with the harness's random 0.5 waits half of it: 20 s,
    // 160 s, 1,280 s, then 9,000 s each time.
    const starts = sentAt.filter((_, i) => i % 3 === 0);
    const gaps = starts.slice(1).map((t, i) => t - starts[i]!);
    expect(gaps.slice(0, 3)).toEqual([20_300, 160_300, 1_280_300]);
    expect(new Set(gaps.slice(3))).toEqual(new Set([9_000_300]));
    // Until the entry is 7 days old: 4 sends in the first 1,460,900 ms, then 67 more 9,000,300 ms apart (the
    // 68th would come at 613,481,300 ms, past 604,800,000), far below maxAttempts (1,000).
    expect(starts).toHaveLength(71);
    expect(starts.at(-1)!).toBeLessThan(604_800_000);
    expect(starts.at(-1)! + 9_000_300).toBeGreaterThanOrEqual(604_800_000);
    expect(entry!.attempts).toBe(sentAt.length);
    expect(entry!.attempts).toBeLessThan(1_000);
    await h.client.close();
  });

  it('keeps the key the request gave', async () => {
    const h = harness([{ reply: respond(201) }]);
    await settled(h, h.client.request({ ...order, idempotencyKey: 'order-42' }));
    expect(keyOf(h.transport.calls[0]!.headers)).toBe('order-42');
  });

  it('is deferred while offline, with nothing sent, and sent as soon as the device is online (rule 6)', async () => {
    const connectivity = manualConnectivity('offline');
    const h = harness([{ reply: respond(201) }], { connectivity });
    const outcome = await settled(h, h.client.request(order));
    expect(outcome).toEqual({ status: 'deferred', entryId: expect.any(String), reason: 'offline' });
    expect(h.transport.calls).toHaveLength(0);
    const [entry] = await h.client.outbox.list();
    expect(entry).toMatchObject({ id: outcome.status === 'deferred' && outcome.entryId, status: 'pending' });
    connectivity.set('online');
    await h.clock.increment(0);
    await settled(h, h.client.outbox.flush());
    expect(h.transport.calls).toHaveLength(1);
    expect(keyOf(h.transport.calls[0]!.headers)).toBe(entry!.idempotencyKey);
    expect(await h.client.outbox.size()).toBe(0);
    expect(h.events.filter((e) => e.type === 'deferred').map((e) => e.reason)).toEqual(['offline']);
  });

  it('a send cut off by the device going offline counts only the attempt sent, and goes again as soon as it is online', async () => {
    const connectivity = manualConnectivity('online');
    const h = harness(
      [{ reply: fail('connection-lost', 'unknown'), latencyMs: 2_000 }, { reply: respond(201) }],
      {
        connectivity,
      },
    );
    const pending = h.client.request(order);
    await h.clock.increment(1_000);
    connectivity.set('offline');
    await h.clock.increment(1_000);
    const outcome = await settled(h, pending);
    expect(outcome).toMatchObject({ status: 'deferred', reason: 'offline' });
    const [entry] = await h.client.outbox.list();
    expect(entry).toMatchObject({ attempts: 1, failures: [{ class: 'connection-lost' }] });
    await h.clock.increment(1_000);
    connectivity.set('online');
    // No backoff wait: the send stopped because the device went offline, not because a server failed.
    for (let i = 0; i < 100 && (await h.client.outbox.size()) > 0; i++) await h.clock.increment(0);
    expect(await h.client.outbox.size()).toBe(0);
    expect(h.clock.now()).toBe(3_000);
    expect(h.transport.calls).toHaveLength(2);
    expect(keyOf(h.transport.calls[1]!.headers)).toBe(entry!.idempotencyKey);
  });

  it('is deferred, not failed, when the retry budget refuses it a retry: a busier moment may give it one', async () => {
    const h = harness([{ reply: respond(503) }, { reply: respond(201) }], {
      policy: { retryBudget: { percent: 0, minConcurrency: 0 } },
    });
    const outcome = await settled(h, h.client.request(order));
    expect(outcome).toMatchObject({ status: 'deferred', reason: 'retry-budget-exhausted' });
    const [entry] = await h.client.outbox.list();
    expect(entry).toMatchObject({ status: 'pending', attempts: 1 });
  });

  it('is deferred, not failed, when the server asks it to wait longer than its budget, carrying its key, attempts and failures', async () => {
    const h = harness([{ reply: respond(503, { 'retry-after': '120' }) }, { reply: respond(201) }], {
      policy: { durable: { initialMs: 1_000 } },
    });
    const outcome = await settled(h, h.client.request(order));
    expect(outcome).toMatchObject({ status: 'deferred', reason: 'retry-after-exceeds-budget' });
    const [entry] = await h.client.outbox.list();
    expect(entry).toMatchObject({
      attempts: 1,
      nextAttemptAt: 120_000,
      failures: [{ class: 'unavailable', status: 503, retryAfterMs: 120_000, requestSent: 'yes' }],
    });
    // Not before the server said.
    await h.clock.increment(119_999);
    expect(h.transport.calls).toHaveLength(1);
    await h.clock.increment(1);
    await settled(h, h.client.outbox.flush());
    expect(h.transport.calls).toHaveLength(2);
    expect(keyOf(h.transport.calls[1]!.headers)).toBe(keyOf(h.transport.calls[0]!.headers));
    expect(await h.client.outbox.size()).toBe(0);
  });

  it('flush sends nothing before a Retry-After the server gave (rule 5), but skips a backoff', async () => {
    const h = harness(
      [
        { reply: respond(503, { 'retry-after': '120' }) },
        { reply: fail('connect') },
        { reply: respond(201) },
      ],
      { policy: { attempts: { max: 1 } } },
    );
    await settled(h, h.client.request(order));
    await settled(h, h.client.outbox.flush());
    expect(h.transport.calls).toHaveLength(1);
    // At 120 s the outbox sends it by itself.
    await h.clock.increment(120_000);
    for (let i = 0; i < 10; i++) await h.clock.increment(0);
    expect(h.transport.calls).toHaveLength(2);
    // The connect failure earned a backoff, not a server's wait: flush sends at once.
    await settled(h, h.client.outbox.flush());
    expect(h.transport.calls).toHaveLength(3);
    expect(await h.client.outbox.size()).toBe(0);
  });

  it('keeps the failure of every live attempt in the entry, with the attempts made', async () => {
    const h = harness(
      [
        { reply: respond(503) },
        { reply: fail('connect') },
        { reply: respond(503, { 'retry-after': '600' }) },
      ],
      { policy: { backoff: { jitter: 'none', initialMs: 100 } } },
    );
    const outcome = h.client.request(order);
    // Backoff waits of 100 and 200 ms between the three attempts; the last one asks for 10 minutes.
    for (let i = 0; i < 20; i++) await h.clock.increment(50);
    expect(await outcome).toMatchObject({ status: 'deferred', reason: 'attempts-exhausted' });
    const [entry] = await h.client.outbox.list();
    expect(entry!.attempts).toBe(3);
    // The outbox waits at least what the server asked, counted from the last attempt (at 300 ms).
    expect(entry!.nextAttemptAt).toBeGreaterThanOrEqual(300 + 600_000);
    expect(entry!.failures.map((failure) => [failure.class, failure.status])).toEqual([
      ['unavailable', 503],
      ['connect', undefined],
      ['unavailable', 503],
    ]);
    expect(new Set(h.transport.calls.map((call) => keyOf(call.headers))).size).toBe(1);
  });

  it('fails visibly on a status that is never retried, and keeps the entry dead-lettered for the app to retry', async () => {
    const h = harness([{ reply: respond(422, {}, 'bad order') }, { reply: respond(201) }]);
    const outcome = await settled(h, h.client.request(order));
    expect(outcome).toMatchObject({ status: 'failed', reason: 'not-retryable', failure: { status: 422 } });
    expect(outcome.status === 'failed' && (await outcome.response?.text())).toBe('bad order');
    const [dead] = await h.client.outbox.list();
    expect(dead).toMatchObject({ status: 'dead', deadReason: 'not-retryable', attempts: 1 });
    expect(await settled(h, h.client.outbox.retry(dead!.id))).toBe(true);
    await settled(h, h.client.outbox.flush());
    expect(h.transport.calls).toHaveLength(2);
    expect(await h.client.outbox.size()).toBe(0);
    expect(await h.client.outbox.retry('no-such-entry')).toBe(false);
  });

  it('ends failed only once its entry is dead-lettered, naming the entry: the app can retry it at once', async () => {
    // A store that answers a write a few turns of the event loop later, as a database on disk does.
    const store = memoryStore();
    const update = store.update.bind(store);
    store.update = async (entry) => {
      for (let i = 0; i < 3; i++) await new Promise((resolve) => setImmediate(resolve));
      return update(entry);
    };
    const h = harness([{ reply: respond(422, {}, 'bad order') }, { reply: respond(201) }], { store });
    const outcome = await settled(h, h.client.request(order));
    // Read with no clock step after the outcome: what the app sees when its await returns.
    const [dead] = await h.client.outbox.list();
    expect(dead).toMatchObject({ status: 'dead', deadReason: 'not-retryable' });
    expect(outcome).toMatchObject({ status: 'failed', reason: 'not-retryable', entryId: dead!.id });
    expect(await settled(h, h.client.outbox.retry(dead!.id))).toBe(true);
    await h.client.close();
  });

  it("ends failed, not deferred, when its first send used up the entry's attempts and the outbox dead-lettered it", async () => {
    const h = harness([{ reply: respond(503) }], {
      policy: { attempts: { max: 2 }, durable: { maxAttempts: 2 } },
    });
    const request = h.client.request(order);
    await h.clock.runAll();
    const outcome = await request;
    const [dead] = await h.client.outbox.list();
    expect(dead).toMatchObject({ status: 'dead', attempts: 2 });
    expect(outcome).toMatchObject({ status: 'failed', reason: 'attempts-exhausted', entryId: dead!.id });
    await h.client.close();
  });

  it('keeps order: a durable request made while an earlier one waits is deferred behind it', async () => {
    const h = harness([{ reply: fail('connect') }, { reply: respond(201) }], {
      policy: { attempts: { max: 1 }, durable: { initialMs: 10_000 } },
    });
    expect(await settled(h, h.client.request(order))).toMatchObject({
      status: 'deferred',
      reason: 'attempts-exhausted',
    });
    expect(await settled(h, h.client.request({ ...order, body: '{"qty":2}' }))).toMatchObject({
      status: 'deferred',
      reason: 'durable',
    });
    expect(h.transport.calls).toHaveLength(1);
    await h.clock.increment(10_000);
    await settled(h, h.client.outbox.flush());
    expect(h.transport.calls.map((call) => call.body)).toEqual(['{"qty":1}', '{"qty":1}', '{"qty":2}']);
    expect(await h.client.outbox.size()).toBe(0);
  });

  it('sends, on taking the lease, what another client on the same store left behind', async () => {
    const shared = memoryStore();
    // Each client closes "its" store on close(): here they share one, which stays open.
    const view = (): OutboxStore => ({ ...shared, close: () => Promise.resolve() });
    const a = harness([{ reply: respond(201) }], { store: view() });
    const b = harness([{ reply: respond(201) }], {
      store: view(),
      clock: a.clock,
      connectivity: manualConnectivity('offline'),
    });
    expect(await settled(b, b.client.request({ ...order, body: '"left behind"' }))).toMatchObject({
      status: 'deferred',
      reason: 'offline',
    });
    await b.client.close();
    expect(await settled(a, a.client.request(order))).toMatchObject({ status: 'succeeded' });
    await settled(a, a.client.outbox.flush());
    expect(a.transport.calls.map((call) => call.body)).toEqual(['"left behind"', '{"qty":1}']);
    expect(await shared.list()).toEqual([]);
  });

  it('two clients on one store send every entry exactly once between them', async () => {
    const shared = memoryStore();
    const view = (): OutboxStore => ({ ...shared, close: () => Promise.resolve() });
    const net = manualConnectivity('offline');
    const a = harness([{ reply: respond(201) }], { store: view(), connectivity: net });
    const b = harness([{ reply: respond(201) }], { store: view(), connectivity: net, clock: a.clock });
    for (let i = 0; i < 5; i++) {
      await settled(a, a.client.request({ ...order, body: `"a${i}"` }));
      await settled(a, b.client.request({ ...order, body: `"b${i}"` }));
    }
    expect(await shared.list()).toHaveLength(10);
    net.set('online');
    // Whoever takes the lease sends; the other's flush waits for it (asking every 100 ms, up to flushWaitMs),
    // takes it once the first is idle, and reads the store again: nothing is left, nothing sent twice.
    const flushed = Promise.all([a.client.outbox.flush(), b.client.outbox.flush()]);
    let done = false;
    void flushed.then(() => (done = true));
    for (let i = 0; i < 50 && !done; i++) await a.clock.increment(100);
    const results = await flushed;
    expect(results.map((r) => r.pending)).toEqual([0, 0]);
    expect(results[0].sent + results[1].sent).toBe(10);
    expect(a.clock.now()).toBeLessThan(5_000);
    const sent = [...a.transport.calls, ...b.transport.calls].map((call) => call.body).sort();
    expect(sent).toEqual(['"a0"', '"a1"', '"a2"', '"a3"', '"a4"', '"b0"', '"b1"', '"b2"', '"b3"', '"b4"']);
    expect(await shared.list()).toEqual([]);
  });

  it('announces outbox changes as redacted outbox-changed events', async () => {
    const connectivity = manualConnectivity('offline');
    const h = harness([{ reply: respond(201) }], { connectivity });
    await settled(h, h.client.request({ ...order, path: '/v1/orders?token=secret' }));
    connectivity.set('online');
    await settled(h, h.client.outbox.flush());
    const changes = h.events.filter((e) => e.type === 'outbox-changed');
    const [entry] = h.transport.calls.map((call) => call.headers['idempotency-key']);
    expect(entry).toBeDefined();
    expect(changes).toEqual([
      { type: 'outbox-changed', change: 'outbox-changed', size: 1 },
      { type: 'outbox-changed', change: 'entry-sent', entryId: expect.any(String), attempt: 1 },
      { type: 'outbox-changed', change: 'outbox-changed', size: 0 },
    ]);
    expect(JSON.stringify(h.events)).not.toContain('secret');
  });

  it('client.fetch rejects a deferred durable write with RequestFailedError carrying the outcome', async () => {
    const h = harness([{ reply: respond(201) }], { connectivity: manualConnectivity('offline') });
    const error: unknown = await h.client
      .fetch('/v1/orders', { method: 'POST', body: '{}', lifetime: 'durable' })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RequestFailedError);
    expect((error as RequestFailedError).outcome).toMatchObject({ status: 'deferred', reason: 'offline' });
    expect(await h.client.outbox.size()).toBe(1);
  });

  it('refuses credentials in the headers of a durable request: they would be stored', async () => {
    const h = harness([{ reply: respond(201) }]);
    await expect(h.client.request({ ...order, headers: { Authorization: 'Bearer t' } })).rejects.toThrow(
      new RequestError(
        'headers',
        'a durable request is stored, so it must not carry authorization: give credentials with `auth`',
      ),
    );
    await expect(h.client.request({ path: '/x', orderKey: 'a' })).rejects.toThrow(RequestError);
    expect(h.transport.calls).toHaveLength(0);
  });

  it('rejects, with nothing sent, when the store cannot take the entry', async () => {
    const broken: OutboxStore = { ...memoryStore(), add: () => Promise.reject(new Error('disk full')) };
    const h = harness([{ reply: respond(201) }], { store: broken });
    await expect(h.client.request(order)).rejects.toThrow(FailwiseError);
    expect(h.transport.calls).toHaveLength(0);
  });

  it('closes the store with the client, durable work left in it', async () => {
    const store = memoryStore();
    const connectivity = manualConnectivity('offline');
    const h = harness([{ reply: respond(201) }], { store, connectivity });
    await settled(h, h.client.request(order));
    await h.client.close();
    await expect(store.list()).rejects.toThrow(/closed/);
    expect(h.clock.pending()).toBe(0);
  });
});

/** A memory store whose `add` (and, once `stuck`, every call) waits until `release()` or forever. */
/**
 * A memory store whose writes wait until `release()`. `writeBegun`: each add is already under way when it is
 * called, as in a store that cannot see the request give up (it is not told `abandoned`).
 */
function stuckStore({ writeBegun = false } = {}) {
  const base = memoryStore();
  const waiting: Array<() => void> = [];
  const hold =
    <A extends unknown[], R>(fn: (...args: A) => Promise<R>) =>
    (...args: A) =>
      new Promise<R>((resolve, reject) => waiting.push(() => void fn(...args).then(resolve, reject)));
  const add: OutboxStore['add'] = writeBegun
    ? (entry, replaces) => base.add(entry, replaces)
    : (entry, replaces, abandoned) => base.add(entry, replaces, abandoned);
  const store: OutboxStore = { ...base, add: hold(add), close: () => new Promise(() => undefined) };
  return { store, base, release: () => waiting.splice(0).forEach((go) => go()) };
}

describe('durable work with a store that never answers', () => {
  it('a durable request whose store.add never answers ends failed within its budget, nothing sent', async () => {
    const { store, base, release } = stuckStore();
    const h = harness([{ reply: respond(201) }], { store });
    const outcome = h.client.request({ ...order, deadlineMs: 2_000 });
    await h.clock.increment(2_000);
    expect(await outcome).toMatchObject({
      status: 'failed',
      reason: 'budget-exhausted',
      attempts: 0,
      elapsedMs: 2_000,
      failure: { class: 'unexpected', requestSent: 'no' },
    });
    // The write comes once the request has given up: the store writes nothing, and nothing is ever sent for it.
    release();
    await h.clock.runAll();
    expect(await base.list()).toEqual([]);
    expect(h.transport.calls).toHaveLength(0);
    expect(h.events.filter((e) => e.type === 'deferred')).toEqual([]);
    const closing = h.client.close();
    await h.clock.runAll();
    await closing;
  });

  it('a request that ends as its write lands says failed only once the store no longer has the entry', async () => {
    // The caller aborts in the same turn as store.add answers, and the store takes a while to remove: a process
    // that died right after a `failed` must not leave the entry behind to be sent on its next start.
    const base = memoryStore();
    const caller = new AbortController();
    let removing: (() => void) | undefined;
    const store: OutboxStore = {
      ...base,
      add: async (entry) => {
        await base.add(entry);
        caller.abort();
      },
      remove: (id) => new Promise((resolve) => (removing = () => void base.remove(id).then(resolve))),
    };
    const h = harness([{ reply: respond(201) }], { store });
    let outcome: Outcome | undefined;
    void h.client.request({ ...order, signal: caller.signal }).then((o) => (outcome = o));
    for (let i = 0; i < 20; i++) await h.clock.increment(0);
    // Either the entry is being taken back (no outcome while the store still has it), or it was kept (deferred).
    if (outcome === undefined) {
      expect(await base.list()).toHaveLength(1);
      removing!();
      for (let i = 0; i < 20; i++) await h.clock.increment(0);
      expect(outcome).toMatchObject({ status: 'failed', reason: 'cancelled', attempts: 0 });
      expect(await base.list()).toEqual([]);
    } else {
      expect(outcome).toMatchObject({ status: 'deferred' });
      expect(await base.list()).toHaveLength(1);
    }
    const closing = h.client.close();
    await h.clock.runAll();
    await closing;
  });

  it('close() ends a durable request stuck in store.add (cancelled) and resolves though store.close never does', async () => {
    const { store } = stuckStore();
    const h = harness([{ reply: respond(201) }], { store });
    const outcome = h.client.request(order);
    await h.clock.increment(1);
    let closed = false;
    const closing = h.client.close().then(() => (closed = true));
    // Two waits, each cut off at STORE_WAIT_MS: the add close() found in flight (the request ends with it),
    // then store.close().
    await h.clock.increment(STORE_WAIT_MS);
    expect(await outcome).toMatchObject({ status: 'failed', reason: 'cancelled', attempts: 0 });
    for (let i = 0; i < 20; i++) await h.clock.increment(0);
    expect(closed).toBe(false);
    await h.clock.increment(STORE_WAIT_MS);
    await closing;
    expect(h.clock.pending()).toBe(0);
  });
});

it('close() lets a durable write under way land within STORE_WAIT_MS: the request is deferred, its entry kept', async () => {
  const { store, base, release } = stuckStore();
  const h = harness([{ reply: respond(201) }], { store });
  const outcome = h.client.request(order);
  await h.clock.increment(1);
  const closing = h.client.close();
  await h.clock.increment(STORE_WAIT_MS - 1);
  release();
  const ended = await outcome;
  expect(ended).toMatchObject({ status: 'deferred', reason: 'cancelled' });
  // Stored for the next start, and not sent by this closing client.
  expect((await base.list()).map((entry) => entry.id)).toEqual([
    ended.status === 'deferred' ? ended.entryId : '',
  ]);
  expect(h.transport.calls).toHaveLength(0);
  await h.clock.increment(STORE_WAIT_MS);
  await closing;
});

it('flush() on a store whose lease call never answers resolves after STORE_ANSWER_MS: store-failed, nothing lost', async () => {
  const base = memoryStore();
  const store: OutboxStore = { ...base, acquireLease: () => new Promise<boolean>(() => undefined) };
  const connectivity = manualConnectivity('offline');
  const h = harness([{ reply: respond(201) }], { store, connectivity });
  expect((await settled(h, h.client.request(order))).status).toBe('deferred');
  connectivity.set('online');
  let result: unknown;
  void h.client.outbox.flush().then((value) => (result = value));
  await h.clock.increment(STORE_ANSWER_MS - 1);
  expect(result).toBeUndefined();
  await h.clock.increment(1);
  for (let i = 0; i < 20 && result === undefined; i++) await h.clock.increment(0);
  expect(result).toEqual({ sent: 0, failed: 0, pending: 1, reason: 'store-failed' });
  expect(await base.list()).toHaveLength(1);
  expect(h.transport.calls).toHaveLength(0);
  const closing = h.client.close();
  await h.clock.increment(STORE_WAIT_MS);
  await closing;
  expect(h.clock.pending()).toBe(0);
});

describe('client.outbox.flush and remove', () => {
  it('answer for an outbox never loaded: nothing sent, nothing pending, nothing removed', async () => {
    const h = harness([{ reply: respond(201) }]);
    expect(await h.client.outbox.flush()).toEqual({ sent: 0, failed: 0, pending: 0 });
    expect(await h.client.outbox.remove('x')).toBe(false);
    await h.client.close();
  });

  it('remove(id) drops a deferred entry from the store: it is never sent', async () => {
    const connectivity = manualConnectivity('offline');
    const h = harness([{ reply: respond(201) }], { connectivity });
    const outcome = await settled(h, h.client.request(order));
    expect(outcome.status).toBe('deferred');
    const id = outcome.status === 'deferred' ? outcome.entryId : '';
    expect(await h.client.outbox.remove(id)).toBe(true);
    expect(await h.client.outbox.size()).toBe(0);
    connectivity.set('online');
    expect(await settled(h, h.client.outbox.flush())).toEqual({ sent: 0, failed: 0, pending: 0 });
    expect(h.transport.calls).toHaveLength(0);
    await h.client.close();
  });
});

describe('replaceKey', () => {
  const draft = (text: string) =>
    ({
      method: 'PUT',
      path: '/v1/drafts/7',
      body: JSON.stringify({ text }),
      lifetime: 'durable',
      replaceKey: 'draft-7',
    }) as const;

  it('sends a draft saved five times offline once, the last, and tells each older one it was replaced', async () => {
    const connectivity = manualConnectivity('offline');
    const h = harness([{ reply: respond(200) }], { connectivity });
    const outcomes: Outcome[] = [];
    for (const text of ['a', 'ab', 'abc', 'abcd', 'abcde'])
      outcomes.push(await settled(h, h.client.request(draft(text))));
    expect(outcomes.map((outcome) => outcome.status)).toEqual(Array(5).fill('deferred'));
    const ids = outcomes.map((outcome) => (outcome as { entryId: string }).entryId);
    const stored = await h.client.outbox.list();
    expect(stored.map((entry) => [entry.id, entry.request.body])).toEqual([[ids[4], '{"text":"abcde"}']]);
    expect(stored[0]!.replaceKey).toBe('draft-7');
    const replaced = h.events.filter((event) => event.type === 'outbox-changed' && 'reason' in event);
    expect(replaced).toEqual(
      [0, 1, 2, 3].map((i) => ({
        type: 'outbox-changed',
        change: 'entry-replaced',
        entryId: ids[i],
        reason: 'replaced',
        replacedBy: ids[i + 1],
      })),
    );

    connectivity.set('online');
    await settled(h, h.client.outbox.flush());
    expect(h.transport.calls.map((call) => call.body)).toEqual(['{"text":"abcde"}']);
    expect(await h.client.outbox.size()).toBe(0);
    await h.client.close();
  });

  it('replaces only entries with its own key, and leaves an entry with it that is being sent', async () => {
    const h = harness([
      { reply: respond(200), latencyMs: 1_000 },
      { reply: respond(200) },
      { reply: respond(200) },
    ]);
    // The first save is sent at once and takes a second: in flight, it is not replaced.
    const first = h.client.request(draft('a'));
    await h.clock.increment(10);
    expect(h.transport.calls).toHaveLength(1);
    const other = { ...draft('other'), path: '/v1/drafts/8', replaceKey: 'draft-8' };
    const second = h.client.request(draft('ab'));
    const third = h.client.request(other);
    await h.clock.runAll();
    expect(await first).toMatchObject({ status: 'succeeded' });
    await Promise.all([second, third]);
    expect(h.transport.calls.map((call) => call.body)).toEqual([
      '{"text":"a"}',
      '{"text":"ab"}',
      '{"text":"other"}',
    ]);
    expect(h.events.some((event) => event.type === 'outbox-changed' && 'reason' in event)).toBe(false);
    await h.client.close();
  });

  it('puts back what it replaced when its request ended before its write landed: no draft is lost', async () => {
    const { store, base, release } = stuckStore({ writeBegun: true });
    await base.add({
      id: 'older',
      createdAt: 0,
      request: { method: 'PUT', path: '/v1/drafts/7', headers: {}, body: '{"text":"a"}' },
      idempotencyKey: 'key-older',
      replaceKey: 'draft-7',
      attempts: 1,
      nextAttemptAt: 60_000,
      failures: [],
      status: 'pending',
    });
    const h = harness([], { store, connectivity: manualConnectivity('offline') });
    const outcome = h.client.request({ ...draft('ab'), deadlineMs: 2_000 });
    await h.clock.increment(2_000);
    expect(await outcome).toMatchObject({ status: 'failed', reason: 'budget-exhausted', attempts: 0 });
    // The write lands late, replacing the older draft: it is taken back, and the older draft is written again
    // (an add of this store, which answers once released).
    release();
    await h.clock.runAll();
    expect(await base.list()).toEqual([]);
    release();
    await h.clock.runAll();
    expect((await base.list()).map((entry) => [entry.id, entry.request.body])).toEqual([
      ['older', '{"text":"a"}'],
    ]);
    expect(h.events.some((event) => event.type === 'outbox-changed' && 'reason' in event)).toBe(false);
    const closing = h.client.close();
    await h.clock.runAll();
    await closing;
  });

  it('refuses a replaceKey that is not a non-empty string, or on a request that is not durable, naming it', async () => {
    const h = harness([]);
    await expect(h.client.request({ ...draft('a'), replaceKey: '' })).rejects.toThrow(RequestError);
    await expect(h.client.request({ ...draft('a'), replaceKey: 5 as never })).rejects.toThrow(
      'request.replaceKey: expected a non-empty string, got 5',
    );
    await expect(h.client.request({ path: '/v1/drafts/7', replaceKey: 'draft-7' })).rejects.toThrow(
      'request.replaceKey: only a durable request has a replace key',
    );
    expect(h.transport.calls).toHaveLength(0);
    await h.client.close();
  });
});
