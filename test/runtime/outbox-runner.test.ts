import { describe, expect, it } from 'vitest';
import type { OutboxMachineEmitted, SendResult } from '../../machines/outbox/outbox.types.js';
import { simulatedClock } from '../../src/clock/simulated-clock.js';
import { manualConnectivity } from '../../src/connectivity/manual-connectivity.js';
import { definePolicy } from '../../src/policy/define-policy.js';
import type { Failure } from '../../src/policy/failure.js';
import type { PolicyInput } from '../../src/policy/policy.js';
import { STORE_WAIT_MS } from '../../src/runtime/bounded-wait.js';
import { applyCommit, createOutboxRunner, OUTBOX_LEASE_TTL_MS } from '../../src/runtime/outbox-runner.js';
import { memoryStore } from '../../src/stores/memory-store.js';
import type { OutboxEntry, OutboxStore } from '../../src/stores/outbox-store.js';

const T0 = 1_000_000;

const unavailable = (retryAfterMs?: number): Failure => ({
  class: 'unavailable',
  requestSent: 'yes',
  origin: 'primary',
  status: 503,
  message: 'HTTP 503',
  ...(retryAfterMs === undefined ? {} : { retryAfterMs }),
});
const offlineFailure: Failure = {
  class: 'offline',
  requestSent: 'no',
  origin: 'primary',
  message: 'offline',
};

const SENT: SendResult = { result: 'sent' };
const failed = (
  failure: Failure = unavailable(),
  extra: Partial<Extract<SendResult, { result: 'failed' }>> = {},
) => ({ result: 'failed', failure, attempts: 1, retryable: true, ...extra }) as const;

/** How the fake `send` answers one call: a result, after `latencyMs` of simulated time. */
type Reply = SendResult | { reply: SendResult; latencyMs: number };

interface Call {
  id: string;
  /** `entry.attempts` as the send saw it: the store had counted this attempt already. */
  attempts: number;
  at: number;
}

/**
 * A runner on a memory store and a simulated clock, whose `send` answers from `script(entry, call number)`,
 * recording each call and how many ran at once.
 */
function setup(
  options: {
    policy?: PolicyInput;
    online?: boolean;
    script?: (entry: OutboxEntry, call: number) => Reply;
    store?: OutboxStore;
  } = {},
) {
  const clock = simulatedClock({ startAt: T0 });
  const store = options.store ?? memoryStore();
  const connectivity = manualConnectivity(options.online === false ? 'offline' : 'online');
  const calls: Call[] = [];
  const emitted: OutboxMachineEmitted[] = [];
  const active = new Set<string>();
  let maxActive = 0;
  let aborted = 0;
  let overlaps = 0;
  const runner = createOutboxRunner({
    store,
    clock,
    connectivity,
    policy: definePolicy(options.policy ?? {}),
    onEmitted: (event) => emitted.push(event),
    send: (entry, signal) =>
      new Promise<SendResult>((resolve) => {
        if (active.has(entry.id)) overlaps += 1;
        calls.push({ id: entry.id, attempts: entry.attempts, at: clock.now() });
        active.add(entry.id);
        maxActive = Math.max(maxActive, active.size);
        const scripted = (options.script ?? (() => SENT))(entry, calls.length);
        const { reply, latencyMs } = 'reply' in scripted ? scripted : { reply: scripted, latencyMs: 0 };
        const finish = (result: SendResult) => {
          active.delete(entry.id);
          resolve(result);
        };
        // A reply without latency comes as a promise settles, with no timer to step.
        if (latencyMs === 0) return void Promise.resolve().then(() => finish(reply));
        const timer = clock.setTimeout(() => finish(reply), latencyMs);
        signal.addEventListener('abort', () => {
          aborted += 1;
          clock.clearTimeout(timer);
          finish(
            failed({ class: 'cancelled', requestSent: 'unknown', origin: 'primary', message: 'aborted' }),
          );
        });
      }),
  });
  let seq = 0;
  const entry = (overrides: Partial<OutboxEntry> = {}): OutboxEntry => {
    seq += 1;
    return {
      id: `e${seq}`,
      createdAt: clock.now(),
      request: {
        method: 'POST',
        path: '/v1/orders?token=secret',
        headers: { 'x-secret': 'hdr' },
        body: 'BODY',
      },
      idempotencyKey: `key-${seq}`,
      attempts: 0,
      nextAttemptAt: clock.now(),
      failures: [],
      status: 'pending',
      ...overrides,
    };
  };
  return {
    clock,
    store,
    connectivity,
    runner,
    calls,
    emitted,
    entry,
    get maxActive() {
      return maxActive;
    },
    get aborted() {
      return aborted;
    },
    /** Sends of an entry that started while another send of it was running: always 0. */
    get overlaps() {
      return overlaps;
    },
    /** Lets what is due now happen, then fires every timer in order until none is left. */
    async run() {
      await clock.increment(0);
      await clock.runAll();
      expect(overlaps).toBe(0);
    },
    /** Enqueues entries in order. */
    async add(...entries: OutboxEntry[]) {
      for (const e of entries) await runner.enqueue(e);
    },
    /** Send times relative to T0, per entry id. */
    timesOf(id: string) {
      return calls.filter((c) => c.id === id).map((c) => c.at - T0);
    },
  };
}

describe('createOutboxRunner', () => {
  it('sends entries one at a time in the order they were added (fifo, concurrency 1)', async () => {
    const t = setup({ script: () => ({ reply: SENT, latencyMs: 100 }) });
    await t.add(t.entry(), t.entry(), t.entry());
    await t.run();
    expect(t.calls.map((c) => [c.id, c.at - T0])).toEqual([
      ['e1', 0],
      ['e2', 100],
      ['e3', 200],
    ]);
    expect(t.maxActive).toBe(1);
    expect(await t.runner.size()).toBe(0);
    expect(t.emitted.filter((e) => e.type === 'entry-sent').map((e) => e.id)).toEqual(['e1', 'e2', 'e3']);
    await t.runner.close();
  });

  it('holds the rest of a fifo queue while its head waits for its backoff', async () => {
    const t = setup({ script: (entry, call) => (entry.id === 'e1' && call === 1 ? failed() : SENT) });
    await t.add(t.entry(), t.entry());
    await t.clock.increment(9_999);
    expect(t.calls.map((c) => c.id)).toEqual(['e1']);
    await t.clock.increment(1);
    expect(t.calls.map((c) => [c.id, c.at - T0])).toEqual([
      ['e1', 0],
      ['e1', 10_000],
      ['e2', 10_000],
    ]);
    await t.runner.close();
  });

  it('keeps order within an orderKey only, with order per-key', async () => {
    const t = setup({
      policy: { durable: { order: 'per-key', concurrency: 3 } },
      script: (entry, call) => (entry.id === 'e1' && call === 1 ? failed() : { reply: SENT, latencyMs: 50 }),
    });
    await t.add(
      t.entry({ orderKey: 'cart' }),
      t.entry({ orderKey: 'cart' }),
      t.entry({ orderKey: 'profile' }),
      t.entry(),
    );
    await t.clock.increment(0);
    // e1 failed at once; e2 waits for it, e3 (another key) and e4 (no key) do not.
    expect(t.calls.map((c) => c.id)).toEqual(['e1', 'e3', 'e4']);
    await t.run();
    expect(t.timesOf('e1')).toEqual([0, 10_000]);
    expect(t.timesOf('e2')).toEqual([10_050]);
    await t.runner.close();
  });

  it('sends one entry at a time by default, even when their keys differ', async () => {
    const t = setup({
      policy: { durable: { order: 'per-key' } },
      script: () => ({ reply: SENT, latencyMs: 10 }),
    });
    await t.add(t.entry({ orderKey: 'a' }), t.entry({ orderKey: 'b' }), t.entry());
    await t.run();
    expect(t.calls.map((c) => c.at - T0)).toEqual([0, 10, 20]);
    expect(t.maxActive).toBe(1);
    await t.runner.close();
  });

  it('never runs more than concurrency sends at once', async () => {
    const t = setup({
      policy: { durable: { order: 'per-key', concurrency: 2 } },
      script: () => ({ reply: SENT, latencyMs: 10 }),
    });
    await t.add(...['a', 'b', 'c', 'd', 'e'].map((orderKey) => t.entry({ orderKey })));
    await t.run();
    expect(t.calls.map((c) => c.at - T0)).toEqual([0, 0, 10, 10, 20]);
    expect(t.maxActive).toBe(2);
    await t.runner.close();
  });

  it('waits exactly the exponential backoff after each failed send', async () => {
    const t = setup({ script: (_, call) => (call < 5 ? failed() : SENT) });
    await t.add(t.entry());
    await t.run();
    expect(t.timesOf('e1')).toEqual([0, 10_000, 30_000, 70_000, 150_000]);
    expect(t.calls.map((c) => c.attempts)).toEqual([1, 2, 3, 4, 5]);
    const scheduled = t.emitted.flatMap((e) =>
      e.type === 'entry-retry-scheduled' ? [[e.attempts, e.delayMs]] : [],
    );
    expect(scheduled).toEqual([
      [1, 10_000],
      [2, 20_000],
      [3, 40_000],
      [4, 80_000],
    ]);
    await t.runner.close();
  });

  it('waits the linear backoff, capped at maxMs', async () => {
    const t = setup({
      policy: { durable: { backoff: 'linear', initialMs: 1_000, maxMs: 2_500 } },
      script: (_, call) => (call < 5 ? failed() : SENT),
    });
    await t.add(t.entry());
    await t.run();
    // Waits of 1000, 2000, 2500 (capped), 2500.
    expect(t.timesOf('e1')).toEqual([0, 1_000, 3_000, 5_500, 8_000]);
    await t.runner.close();
  });

  it('counts the attempts a send made itself', async () => {
    const t = setup({ script: (_, call) => (call === 1 ? failed(unavailable(), { attempts: 3 }) : SENT) });
    await t.add(t.entry());
    await t.run();
    // Three attempts made: the next wait is initialMs * 2^2, and the next send is attempt 4.
    expect(t.timesOf('e1')).toEqual([0, 40_000]);
    expect(t.calls[1]!.attempts).toBe(4);
    await t.runner.close();
  });

  it('never sends sooner than a Retry-After, in the failure or in the result', async () => {
    const t = setup({
      script: (_, call) =>
        call === 1
          ? failed(unavailable(90_000))
          : call === 2
            ? failed(unavailable(), { retryAfterMs: 5_000 })
            : SENT,
    });
    await t.add(t.entry());
    await t.run();
    // 90 s asked (more than the 10 s backoff); then 5 s asked, less than the 20 s backoff.
    expect(t.timesOf('e1')).toEqual([0, 90_000, 110_000]);
    await t.runner.close();
  });

  it('dead-letters an entry after maxAttempts attempts, and keeps it with its failures', async () => {
    const t = setup({ policy: { durable: { maxAttempts: 3 } }, script: () => failed() });
    await t.add(t.entry());
    await t.run();
    expect(t.timesOf('e1')).toEqual([0, 10_000, 30_000]);
    const [stored] = await t.runner.list();
    expect(stored).toMatchObject({ id: 'e1', status: 'dead', deadReason: 'attempts-exhausted', attempts: 3 });
    expect(stored!.failures).toHaveLength(3);
    expect(t.emitted).toContainEqual({
      type: 'entry-dead-lettered',
      id: 'e1',
      attempts: 3,
      reason: 'attempts-exhausted',
      failureClass: 'unavailable',
      at: T0 + 30_000,
    });
    expect(t.clock.pending()).toBe(0);
    await t.runner.close();
  });

  it('dead-letters a failure that is not retryable at once', async () => {
    const t = setup({ script: () => failed(unavailable(), { retryable: false }) });
    await t.add(t.entry());
    await t.run();
    expect(t.calls).toHaveLength(1);
    expect((await t.runner.list())[0]).toMatchObject({ status: 'dead', deadReason: 'not-retryable' });
    await t.runner.close();
  });

  it('dead-letters an entry when it expires, before its next attempt comes', async () => {
    const t = setup({
      policy: { durable: { maxAgeMs: 60_000, initialMs: 50_000, maxMs: 500_000 } },
      script: () => failed(),
    });
    await t.add(t.entry());
    await t.clock.increment(50_000);
    expect(t.timesOf('e1')).toEqual([0, 50_000]);
    // The next attempt would be at 150 s; the entry expires at 60 s.
    await t.clock.increment(10_000);
    expect((await t.runner.list())[0]).toMatchObject({ status: 'dead', deadReason: 'expired', attempts: 2 });
    expect(t.emitted.at(-2)).toMatchObject({
      type: 'entry-dead-lettered',
      reason: 'expired',
      at: T0 + 60_000,
    });
    await t.run();
    expect(t.calls).toHaveLength(2);
    await t.runner.close();
  });

  it('dead-letters an expired entry even while offline', async () => {
    const t = setup({ online: false, policy: { durable: { maxAgeMs: 60_000 } } });
    await t.add(t.entry());
    await t.clock.increment(60_000);
    expect(t.calls).toHaveLength(0);
    expect((await t.runner.list())[0]).toMatchObject({ status: 'dead', deadReason: 'expired', attempts: 0 });
    await t.runner.close();
  });

  it('puts a dead entry back in the queue on retry, attempts reset', async () => {
    let healthy = false;
    const t = setup({ policy: { durable: { maxAttempts: 2 } }, script: () => (healthy ? SENT : failed()) });
    await t.add(t.entry());
    await t.run();
    expect((await t.runner.list())[0]).toMatchObject({ status: 'dead', attempts: 2 });
    await t.clock.increment(3_600_000);
    healthy = true;
    expect(await t.runner.retry('e1')).toBe(true);
    await t.clock.increment(0);
    expect(t.calls.at(-1)).toEqual({ id: 'e1', attempts: 1, at: T0 + 3_610_000 });
    expect(await t.runner.size()).toBe(0);
    expect(t.emitted.map((e) => e.type)).toContain('entry-revived');
    expect(await t.runner.retry('e1')).toBe(false);
    expect(await t.runner.retry('unknown')).toBe(false);
    await t.runner.close();
  });

  it('sends nothing while offline and wakes every due entry the moment it is online', async () => {
    const t = setup({ online: false });
    await t.add(t.entry(), t.entry());
    await t.clock.increment(3_600_000);
    expect(t.calls).toHaveLength(0);
    expect(t.clock.pending()).toBe(1); // only the expiry wake-up
    t.connectivity.set('online');
    await t.clock.increment(0);
    expect(t.calls.map((c) => [c.id, c.at - T0])).toEqual([
      ['e1', 3_600_000],
      ['e2', 3_600_000],
    ]);
    await t.runner.close();
  });

  it('sends nothing if it goes offline while the attempt is being counted, and does not count it twice', async () => {
    const base = memoryStore();
    const clock = { wait: (_ms: number) => Promise.resolve() };
    const store: OutboxStore = {
      ...base,
      update: async (entry) => {
        await clock.wait(100);
        return base.update(entry);
      },
    };
    const t = setup({ store });
    clock.wait = (ms) => new Promise((resolve) => t.clock.setTimeout(() => resolve(), ms));
    await t.add(t.entry());
    await t.clock.increment(50); // the claim is being written
    t.connectivity.set('offline');
    await t.clock.increment(1_000);
    expect(t.calls).toHaveLength(0);
    expect((await t.store.get('e1'))!.attempts).toBe(1);
    t.connectivity.set('online');
    await t.clock.increment(0);
    // Sent at once with the attempt already counted: no second claim.
    expect(t.calls).toEqual([{ id: 'e1', attempts: 1, at: T0 + 1_050 }]);
    await t.run();
    expect(await t.runner.size()).toBe(0);
    await t.runner.close();
  });

  it('ends a wait earned by a network failure when it goes online, but keeps a server backoff', async () => {
    const t = setup({
      policy: { durable: { order: 'per-key', concurrency: 2 } },
      script: (entry, call) =>
        call <= 2 ? failed(entry.orderKey === 'net' ? offlineFailure : unavailable()) : SENT,
    });
    await t.add(t.entry({ orderKey: 'net' }), t.entry({ orderKey: 'server' }));
    await t.clock.increment(1_000);
    t.connectivity.set('offline');
    await t.clock.increment(1_000);
    t.connectivity.set('online');
    await t.clock.increment(0);
    expect(t.timesOf('e1')).toEqual([0, 2_000]);
    expect(t.timesOf('e2')).toEqual([0]);
    await t.run();
    expect(t.timesOf('e2')).toEqual([0, 10_000]);
    await t.runner.close();
  });

  it('ignores a network change hint: it neither stops nor wakes anything', async () => {
    const t = setup({ script: (_, call) => (call === 1 ? failed(offlineFailure) : SENT) });
    await t.add(t.entry());
    await t.clock.increment(0);
    t.connectivity.set('changed');
    await t.clock.increment(9_999);
    expect(t.calls).toHaveLength(1);
    await t.clock.increment(1);
    expect(t.calls).toHaveLength(2);
    await t.runner.close();
  });

  it('flush sends every waiting entry now and resolves when those sends have ended', async () => {
    const t = setup({ script: (_, call) => (call <= 2 ? failed() : { reply: SENT, latencyMs: 300 }) });
    await t.add(t.entry());
    await t.clock.increment(10_000); // two failures: the next send is due at 30 s
    expect(t.calls).toHaveLength(2);
    await t.clock.increment(1_000);
    let flushed = false;
    const flushing = t.runner.flush().then(() => (flushed = true));
    await t.clock.increment(299);
    expect(t.timesOf('e1')).toEqual([0, 10_000, 11_000]);
    expect(flushed).toBe(false);
    await t.clock.increment(1);
    await flushing;
    expect(await t.runner.size()).toBe(0);
    await t.runner.close();
  });

  it('flush while offline sends nothing and resolves at once', async () => {
    const t = setup({ online: false });
    await t.add(t.entry());
    expect(await t.runner.flush()).toEqual({ sent: 0, failed: 0, pending: 1, reason: 'offline' });
    expect(t.calls).toHaveLength(0);
    expect(await t.runner.size()).toBe(1);
    await t.runner.close();
  });

  it('flush resolves when the head of a fifo queue fails again, leaving the rest queued', async () => {
    const t = setup({ script: (entry) => (entry.id === 'e1' ? failed() : SENT) });
    await t.add(t.entry(), t.entry());
    await t.clock.increment(1);
    await t.runner.flush();
    expect(t.calls.map((c) => c.id)).toEqual(['e1', 'e1']);
    expect(await t.runner.size()).toBe(2);
    await t.runner.close();
  });

  it('leaves no timer, no lease and no send behind when closed', async () => {
    const t = setup({ script: (_, call) => (call === 1 ? failed() : { reply: SENT, latencyMs: 60_000 }) });
    await t.add(t.entry(), t.entry());
    await t.clock.increment(10_000); // e1's second send is in flight
    expect(t.clock.pending()).toBeGreaterThan(0);
    await t.runner.close();
    expect(t.clock.pending()).toBe(0);
    expect(t.aborted).toBe(1);
    // The entries stay, the aborted attempt counted; the lease is free for another runner.
    expect((await t.store.list()).map((e) => [e.id, e.attempts, e.status])).toEqual([
      ['e1', 2, 'pending'],
      ['e2', 0, 'pending'],
    ]);
    expect(await t.store.acquireLease('another', OUTBOX_LEASE_TTL_MS, t.clock.now())).toBe(true);
    await t.runner.close();
    await expect(t.runner.enqueue(t.entry())).rejects.toThrow(
      'failwise outbox: enqueue() was called after close()',
    );
  });

  it('sends what a previous run left in the store, its attempts counted before each send', async () => {
    const clock = simulatedClock({ startAt: T0 });
    const store = memoryStore();
    const leftover = (id: string, attempts: number): OutboxEntry => ({
      id,
      createdAt: T0 - 1_000,
      request: { method: 'POST', path: '/p', headers: {} },
      idempotencyKey: id,
      attempts,
      nextAttemptAt: T0 - 1,
      failures: [],
      status: 'pending',
    });
    await store.add(leftover('crashed-mid-send', 1));
    await store.add(leftover('out-of-attempts', 10));
    const seen: number[] = [];
    const runner = createOutboxRunner({
      store,
      clock,
      policy: definePolicy({ durable: { maxAttempts: 10 } }),
      send: async (entry) => {
        seen.push(entry.attempts, (await store.get(entry.id))!.attempts);
        return SENT;
      },
    });
    await clock.increment(0);
    expect(seen).toEqual([2, 2]);
    expect(await store.list()).toMatchObject([
      { id: 'out-of-attempts', status: 'dead', deadReason: 'attempts-exhausted' },
    ]);
    await runner.close();
  });

  it('waits while another runner holds the lease, then sends', async () => {
    const t = setup();
    await t.store.acquireLease('other-tab', OUTBOX_LEASE_TTL_MS, t.clock.now());
    await t.add(t.entry());
    await t.clock.increment(29_999);
    expect(t.calls).toHaveLength(0);
    await t.run();
    // Asked every 15 s: refused at 0 and 15 s, granted at 30 s when the other lease ran out.
    expect(t.timesOf('e1')).toEqual([30_000]);
    await t.runner.close();
  });

  it('keeps the lease renewed during a long send', async () => {
    const t = setup({ script: () => ({ reply: SENT, latencyMs: 100_000 }) });
    await t.add(t.entry());
    await t.clock.increment(99_000);
    expect(await t.store.acquireLease('other-tab', OUTBOX_LEASE_TTL_MS, t.clock.now())).toBe(false);
    await t.run();
    expect(await t.store.acquireLease('other-tab', OUTBOX_LEASE_TTL_MS, t.clock.now())).toBe(true);
    await t.runner.close();
  });

  it('keeps an entry as the store had it when its removal fails, and writes the removal again later, unsent', async () => {
    const base = memoryStore();
    let failRemoves = 1;
    const store: OutboxStore = {
      ...base,
      remove: (id) => (failRemoves-- > 0 ? Promise.reject(new Error('disk full')) : base.remove(id)),
    };
    const t = setup({ store });
    await t.add(t.entry());
    await t.clock.increment(0);
    expect(t.calls).toHaveLength(1);
    expect(await t.runner.size()).toBe(1);
    expect(t.emitted).toContainEqual({ type: 'outbox-store-failed', id: 'e1', op: 'remove', at: T0 });
    // Held off for initialMs, then removed: the send succeeded, so it is not sent again.
    await t.run();
    expect(t.timesOf('e1')).toEqual([0]);
    expect(await t.runner.size()).toBe(0);
    expect(await t.store.list()).toEqual([]);
    expect(t.emitted.filter((e) => e.type === 'entry-sent')).toEqual([
      { type: 'entry-sent', id: 'e1', attempts: 1, at: T0 + 10_000 },
    ]);
    await t.runner.close();
  });

  it('does not schedule an entry whose write to the store failed', async () => {
    const base = memoryStore();
    const store: OutboxStore = { ...base, add: () => Promise.reject(new Error('quota exceeded')) };
    const t = setup({ store });
    await expect(t.runner.enqueue(t.entry())).rejects.toThrow('quota exceeded');
    await t.run();
    expect(t.calls).toHaveLength(0);
    await t.runner.close();
  });

  it('drops an entry another runner has finished, without sending it', async () => {
    const t = setup({ online: false });
    await t.add(t.entry());
    await t.store.remove('e1');
    t.connectivity.set('online');
    await t.run();
    expect(t.calls).toHaveLength(0);
    expect(t.emitted.at(-1)).toMatchObject({ type: 'outbox-changed', size: 0 });
    await t.runner.close();
  });

  // Found by the two-runner property (seed -8329846): a dead-lettered entry sent again.
  it.each([
    ['expired, its attempts unchanged', { op: 'dead-letter', attempts: 1, reason: 'expired' }],
    ['not-retryable, after its own attempt', { op: 'dead-letter', attempts: 2, reason: 'not-retryable' }],
  ] as const)(
    'does not send an entry another runner dead-lettered after this one counted its attempt (%s)',
    async (_, deadLetter) => {
      // Between this runner's claim (attempts 0 -> 1, written) and the send's read of the entry, the store waits
      // for `resume`: there, another runner sharing the store dead-letters the entry.
      const base = memoryStore();
      let claimed = false;
      let paused = false;
      let resume!: () => void;
      const gate = new Promise<void>((resolve) => (resume = resolve));
      const store: OutboxStore = {
        ...base,
        update: async (entry) => {
          await base.update(entry);
          if (entry.status === 'pending' && entry.attempts === 1) claimed = true;
        },
        get: async (id) => {
          if (claimed && !paused) {
            paused = true;
            await gate;
          }
          return base.get(id);
        },
      };
      const t = setup({ store });
      await t.add(t.entry());
      await t.clock.increment(0);
      expect(paused).toBe(true);
      expect((await base.get('e1'))!).toMatchObject({ status: 'pending', attempts: 1 });
      // The other runner's dead-letter commit, as it writes it.
      await base.update(applyCommit((await base.get('e1'))!, { ...deadLetter, failure: unavailable() })!);
      resume();
      await t.run();
      expect(t.calls).toHaveLength(0);
      expect(await t.store.list()).toMatchObject([
        { id: 'e1', status: 'dead', deadReason: deadLetter.reason, attempts: deadLetter.attempts },
      ]);
      await t.runner.close();
    },
  );

  it('emits ids, counts and reasons only: never a path, header or body', async () => {
    const t = setup({ policy: { durable: { maxAttempts: 2 } }, script: () => failed() });
    await t.add(t.entry(), t.entry());
    await t.run();
    await t.runner.retry('e1');
    await t.run();
    const log = JSON.stringify(t.emitted);
    for (const secret of ['/v1/orders', 'token', 'secret', 'hdr', 'BODY', 'key-'])
      expect(log).not.toContain(secret);
    expect(new Set(t.emitted.map((e) => e.type))).toEqual(
      new Set(['outbox-changed', 'entry-retry-scheduled', 'entry-dead-lettered', 'entry-revived']),
    );
    await t.runner.close();
  });
});

describe('createOutboxRunner: drain', () => {
  it('sends what is due and resolves at once, keeping the backoff of what is not (unlike flush)', async () => {
    const t = setup({ policy: { durable: { order: 'per-key' } } });
    await t.add(t.entry(), t.entry({ nextAttemptAt: T0 + 60_000 }));
    const result = await drive(t.clock, t.runner.drain(30_000), 100);
    expect(result).toEqual({ sent: 1, failed: 0, pending: 1, reason: 'backoff' });
    expect(t.calls.map((c) => c.id)).toEqual(['e1']);
    expect(t.clock.now()).toBe(T0);
    await t.runner.close();
  });

  it('waits for an entry that falls due within the limit, and no longer', async () => {
    const t = setup({ script: (_, call) => (call === 1 ? failed() : SENT) });
    await t.add(t.entry());
    // The first send fails: the next one is due 10 s later (durable.initialMs).
    expect(await drive(t.clock, t.runner.drain(30_000), 100)).toEqual({ sent: 1, failed: 0, pending: 0 });
    expect(t.timesOf('e1')).toEqual([0, 10_000]);
    expect(t.clock.now() - T0).toBe(10_000);
    await t.runner.close();
  });

  it('starts no send once its limit is spent, awaits the one in flight, then the outbox goes on', async () => {
    const t = setup({ script: () => ({ reply: SENT, latencyMs: 1_000 }) });
    await t.add(...Array.from({ length: 10 }, () => t.entry()));
    // What the caller sees as it resumes from `await drain()`.
    const seen = t.runner.drain(3_500).then((result) => ({
      result,
      at: t.clock.now() - T0,
      sendsAt: t.calls.map((c) => c.at - T0),
    }));
    const { result, at, sendsAt } = await drive(t.clock, seen, 100);
    expect(result).toEqual({ sent: 4, failed: 0, pending: 6, reason: 'time-limit' });
    // Resolved when the send started at 3 s ended, and nothing started meanwhile.
    expect(sendsAt).toEqual([0, 1_000, 2_000, 3_000]);
    expect(at).toBe(4_000);
    await t.clock.increment(0);
    expect(t.calls.map((c) => c.at - T0)).toEqual([0, 1_000, 2_000, 3_000, 4_000]);
    await t.runner.close();
    expect(t.clock.pending()).toBe(0);
  });

  it('a flush while a drain past its limit holds the sends says so: time-limit, not backoff', async () => {
    const t = setup({ script: () => ({ reply: SENT, latencyMs: 1_000 }) });
    await t.add(...Array.from({ length: 10 }, () => t.entry()));
    const drained = t.runner.drain(3_500);
    // 3.6 s: the drain's time is spent, the send begun at 3 s is still out, and the app asks for a flush.
    await drive(t.clock, new Promise<void>((resolve) => t.clock.setTimeout(() => resolve(), 3_600)), 100);
    const flushed = await drive(t.clock, t.runner.flush(), 100);
    expect(flushed).toEqual({ sent: 1, failed: 0, pending: 6, reason: 'time-limit' });
    expect(await drained).toEqual({ sent: 4, failed: 0, pending: 6, reason: 'time-limit' });
    // Nothing started while the drain held the sends (from its limit until it resolved at 4 s).
    expect(t.calls.map((c) => c.at - T0).filter((at) => at > 3_000 && at < 4_000)).toEqual([]);
    await t.runner.close();
    expect(t.clock.pending()).toBe(0);
  });

  it('starts nothing more when closed at once after it resolves', async () => {
    const t = setup({ script: () => ({ reply: SENT, latencyMs: 1_000 }) });
    await t.add(t.entry(), t.entry(), t.entry());
    // An OS task: `await client.outbox.drain(); await client.close();`.
    await drive(
      t.clock,
      t.runner.drain(500).then(() => t.runner.close()),
      100,
    );
    await t.clock.increment(10_000);
    expect(t.calls).toHaveLength(1);
    // Not even an attempt counted for the next one.
    expect((await t.store.list()).map((e) => e.attempts)).toEqual([0, 0]);
    expect(t.clock.pending()).toBe(0);
  });

  it('sends what another runner wrote to the store after this one read it', async () => {
    const t = setup();
    await t.clock.increment(0);
    const written = t.entry();
    await t.store.add(written); // a page's write, after the worker's runner started
    expect(await drive(t.clock, t.runner.drain(30_000), 100)).toEqual({ sent: 1, failed: 0, pending: 0 });
    expect(t.calls.map((c) => c.id)).toEqual([written.id]);
    await t.runner.close();
  });

  it('sends nothing while offline and resolves at once', async () => {
    const t = setup({ online: false });
    await t.add(t.entry());
    expect(await drive(t.clock, t.runner.drain(30_000), 100)).toEqual({
      sent: 0,
      failed: 0,
      pending: 1,
      reason: 'offline',
    });
    expect(t.calls).toHaveLength(0);
    expect(t.clock.now()).toBe(T0);
    await t.runner.close();
  });

  it('waits for the lease another live runner holds, and sends as soon as it is given back', async () => {
    const t = setup();
    await t.store.acquireLease('other-tab', OUTBOX_LEASE_TTL_MS, t.clock.now());
    await t.add(t.entry());
    t.clock.setTimeout(() => void t.store.releaseLease('other-tab'), 2_050);
    expect(await drive(t.clock, t.runner.drain(10_000), 50)).toEqual({ sent: 1, failed: 0, pending: 0 });
    // Asked again every 100 ms, well before the machine's own retry (half the lease's 30 s).
    expect(t.timesOf('e1')).toEqual([2_100]);
    await t.runner.close();
  });

  it('says lease-held when another live runner keeps the lease for the whole limit', async () => {
    const t = setup();
    await t.store.acquireLease('other-tab', OUTBOX_LEASE_TTL_MS, t.clock.now());
    await t.add(t.entry());
    const result = await drive(t.clock, t.runner.drain(2_000), 50);
    expect(result).toEqual({ sent: 0, failed: 0, pending: 1, reason: 'lease-held' });
    expect(t.clock.now() - T0).toBe(2_000);
    expect(t.calls).toHaveLength(0);
    await t.runner.close();
    expect(t.clock.pending()).toBe(0);
  });

  it('says store-failed, at once, when the store cannot be read', async () => {
    const base = memoryStore();
    await base.add({ ...setup().entry(), createdAt: T0, nextAttemptAt: T0 });
    const t = setup({ store: { ...base, list: () => Promise.reject(new Error('disk I/O error')) } });
    expect(await drive(t.clock, t.runner.drain(30_000), 100)).toEqual({ sent: 0, failed: 0, pending: 0 });
    expect(t.clock.now()).toBe(T0);
    await t.runner.close();
  });

  it('says store-failed when the store does not grant or refuse the lease', async () => {
    const base = memoryStore();
    const t = setup({ store: { ...base, acquireLease: () => Promise.reject(new Error('disk I/O error')) } });
    await t.add(t.entry());
    expect(await drive(t.clock, t.runner.drain(30_000), 100)).toEqual({
      sent: 0,
      failed: 0,
      pending: 1,
      reason: 'store-failed',
    });
    expect(t.calls).toHaveLength(0);
    await t.runner.close();
  });

  it('counts what it dead-lettered', async () => {
    const t = setup({ script: () => failed(unavailable(), { retryable: false }) });
    await t.add(t.entry());
    expect(await drive(t.clock, t.runner.drain(30_000), 100)).toEqual({ sent: 0, failed: 1, pending: 0 });
    await t.runner.close();
  });

  it('is refused after close()', async () => {
    const t = setup();
    await t.runner.close();
    await expect(t.runner.drain(1_000)).rejects.toThrow('failwise outbox: drain() was called after close()');
  });
});

describe('applyCommit', () => {
  const stored: OutboxEntry = {
    id: 'x',
    createdAt: 0,
    request: { method: 'POST', path: '/p', headers: {} },
    idempotencyKey: 'k',
    attempts: 20,
    nextAttemptAt: 0,
    failures: Array.from({ length: 20 }, (_, i) => ({ ...unavailable(), message: `f${i}` })),
    status: 'pending',
  };

  it('keeps the last 20 failures', () => {
    const next = applyCommit(stored, {
      op: 'reschedule',
      attempts: 21,
      nextAttemptAt: 5,
      delayMs: 5,
      failure: { ...unavailable(), message: 'new' },
    })!;
    expect(next.failures).toHaveLength(20);
    expect(next.failures[0]!.message).toBe('f1');
    expect(next.failures.at(-1)!.message).toBe('new');
  });

  it('revives a dead entry: pending, attempts reset, no dead reason, age counted from now', () => {
    const dead = { ...stored, status: 'dead' as const, deadReason: 'expired' };
    const next = applyCommit(dead, { op: 'revive', createdAt: 99, nextAttemptAt: 99 })!;
    expect(next).toMatchObject({ status: 'pending', attempts: 0, createdAt: 99, nextAttemptAt: 99 });
    expect('deadReason' in next).toBe(false);
  });

  it('removes a sent entry', () => {
    expect(applyCommit(stored, { op: 'remove', attempts: 1 })).toBeUndefined();
  });
});

/** Moves the simulated clock on in `stepMs` steps until `promise` settles (at most `maxSteps`). */
async function drive<T>(clock: ReturnType<typeof simulatedClock>, promise: Promise<T>, stepMs: number) {
  let done = false;
  void promise.then(
    () => (done = true),
    () => (done = true),
  );
  for (let i = 0; i < 1_000 && !done; i++) await clock.increment(i === 0 ? 0 : stepMs);
  return promise;
}

describe('createOutboxRunner: flush results, removal, bounded waits', () => {
  it('flush says what it sent and dead-lettered, with no reason when nothing is left', async () => {
    const t = setup({
      online: false,
      script: (entry) => (entry.id === 'e2' ? failed(unavailable(), { retryable: false }) : SENT),
    });
    await t.add(t.entry(), t.entry(), t.entry());
    t.connectivity.set('online');
    expect(await drive(t.clock, t.runner.flush(), 1)).toEqual({ sent: 2, failed: 1, pending: 0 });
    await t.runner.close();
  });

  it.each([
    ['offline', { online: false }, undefined],
    ['backoff', {}, failed()],
    ['retry-after', {}, failed(unavailable(60_000))],
  ] as const)('flush says why an entry is still pending: %s', async (reason, options, reply) => {
    const t = setup({ ...options, ...(reply ? { script: () => reply } : {}) });
    await t.add(t.entry());
    expect(await drive(t.clock, t.runner.flush(), 1)).toEqual({ sent: 0, failed: 0, pending: 1, reason });
    await t.runner.close();
  });

  it('flush says store-failed when the store does not grant or refuse the lease', async () => {
    const base = memoryStore();
    const t = setup({
      store: { ...base, acquireLease: () => Promise.reject(new Error('disk I/O error')) },
    });
    await t.add(t.entry());
    expect(await drive(t.clock, t.runner.flush(), 1)).toEqual({
      sent: 0,
      failed: 0,
      pending: 1,
      reason: 'store-failed',
    });
    await t.runner.close();
  });

  it('flush waits up to flushWaitMs for a lease another live runner holds, then says lease-held', async () => {
    const t = setup({ policy: { durable: { flushWaitMs: 1_000 } } });
    await t.store.acquireLease('other-tab', OUTBOX_LEASE_TTL_MS, t.clock.now());
    await t.add(t.entry());
    const result = await drive(t.clock, t.runner.flush(), 50);
    expect(result).toEqual({ sent: 0, failed: 0, pending: 1, reason: 'lease-held' });
    expect(t.clock.now() - T0).toBe(1_000);
    expect(t.calls).toHaveLength(0);
    await t.runner.close();
    expect(t.clock.pending()).toBe(0);
  });

  it('flush takes the lease as soon as the other runner gives it back, and sends', async () => {
    const t = setup();
    await t.store.acquireLease('other-tab', OUTBOX_LEASE_TTL_MS, t.clock.now());
    await t.add(t.entry());
    t.clock.setTimeout(() => void t.store.releaseLease('other-tab'), 250);
    expect(await drive(t.clock, t.runner.flush(), 50)).toEqual({ sent: 1, failed: 0, pending: 0 });
    // Asked again every 100 ms: the first ask after the release is at 300 ms, long before the lease's 30 s.
    expect(t.timesOf('e1')).toEqual([300]);
    await t.runner.close();
  });

  it('flush with flushWaitMs 0 does not wait for the lease', async () => {
    const t = setup({ policy: { durable: { flushWaitMs: 0 } } });
    await t.store.acquireLease('other-tab', OUTBOX_LEASE_TTL_MS, t.clock.now());
    await t.add(t.entry());
    expect(await drive(t.clock, t.runner.flush(), 50)).toMatchObject({ reason: 'lease-held' });
    expect(t.clock.now()).toBe(T0);
    await t.runner.close();
  });

  it('remove takes a pending entry out of the store and the queue: it is never sent', async () => {
    const t = setup({ online: false });
    await t.add(t.entry(), t.entry());
    expect(await t.runner.remove('e1')).toBe(true);
    expect(await t.runner.remove('nope')).toBe(false);
    expect(t.emitted.at(-1)).toMatchObject({ type: 'outbox-changed', size: 1 });
    t.connectivity.set('online');
    await t.run();
    expect(t.calls.map((c) => c.id)).toEqual(['e2']);
    expect(await t.runner.size()).toBe(0);
    await t.runner.close();
  });

  it('remove aborts a send in flight for the entry, and nothing is written back for it', async () => {
    const t = setup({ script: () => ({ reply: SENT, latencyMs: 5_000 }) });
    await t.add(t.entry());
    await t.clock.increment(1);
    expect(t.calls).toHaveLength(1);
    expect(await t.runner.remove('e1')).toBe(true);
    await t.run();
    expect(t.aborted).toBe(1);
    expect(await t.store.list()).toEqual([]);
    expect(t.emitted.at(-1)).toMatchObject({ type: 'outbox-changed', size: 0 });
    await t.runner.close();
  });

  it('forgets, on reading the store again, an entry that waits for its backoff and was removed meanwhile', async () => {
    const t = setup({
      policy: { durable: { order: 'per-key' } },
      script: (entry, call) => (entry.id === 'e1' && call === 1 ? failed() : SENT),
    });
    await t.add(t.entry());
    await t.clock.increment(1); // e1 failed once: due again at 10 s
    await t.store.remove('e1'); // another tab's app removed it
    await t.add(t.entry()); // e2 takes the lease, which reads the store again
    await t.clock.increment(1);
    expect(t.calls.map((c) => c.id)).toEqual(['e1', 'e2']);
    expect(t.emitted.filter((e) => e.type === 'outbox-changed').map((e) => e.size)).toEqual([1, 1, 2, 1, 0]);
    expect(await drive(t.clock, t.runner.flush(), 1)).toEqual({ sent: 0, failed: 0, pending: 0 });
    await t.runner.close();
  });

  it('close() waits for a store that never answers at most STORE_WAIT_MS a call, and leaves no timer', async () => {
    const base = memoryStore();
    let stuck = false;
    const never = new Promise<never>(() => undefined);
    const store: OutboxStore = {
      ...base,
      update: (entry) => (stuck ? never : base.update(entry)),
      releaseLease: (owner) => (stuck ? never : base.releaseLease(owner)),
    };
    const t = setup({ store, script: () => ({ reply: SENT, latencyMs: 100 }) });
    await t.add(t.entry());
    await t.clock.increment(1); // claimed and sending
    stuck = true;
    let closed = false;
    const closing = t.runner.close().then(() => (closed = true));
    await t.clock.increment(STORE_WAIT_MS - 1);
    expect(closed).toBe(false);
    await t.clock.increment(1);
    await t.clock.increment(STORE_WAIT_MS);
    await closing;
    expect(t.clock.pending()).toBe(0);
  });
});
