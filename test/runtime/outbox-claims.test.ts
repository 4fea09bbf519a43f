/**
 * The outbox runner on a store with per-entry claims (`postgresStore`): every runner sends from one queue,
 * against a real PostgreSQL server. Real time (the store's claims are compared with the runners' clocks, and
 * the server answers in real time); every wait is bounded.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { SendResult } from '../../machines/outbox/outbox.types.js';
import { systemClock } from '../../src/clock/system-clock.js';
import { definePolicy } from '../../src/policy/define-policy.js';
import { createOutboxRunner, type OutboxRunner } from '../../src/runtime/outbox-runner.js';
import type { OutboxEntry } from '../../src/stores/outbox-store.js';
import { postgresStore } from '../../src/stores/postgres-store.js';
import { startPostgres, type PostgresServer } from '../helpers/postgres-server.js';

let server: PostgresServer;
let schemas = 0;
beforeAll(async () => {
  server = await startPostgres();
}, 60_000);
afterAll(() => server?.stop());

const policy = definePolicy({ durable: { order: 'per-key', concurrency: 4, initialMs: 60_000 } });

interface Send {
  id: string;
  runner: number;
  key: string;
  attempts: number;
  start: number;
  end?: number;
}

const closers: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
});

/** `count` runners on one fresh schema, each with its own store (its own pool and session), sending with `latencyMs`. */
function fleet(count: number, options: { latencyMs?: number; hang?: (id: string) => boolean } = {}) {
  const schema = `claims_${++schemas}`;
  const sends: Send[] = [];
  const open = () => {
    const store = postgresStore(server.url(), { schema });
    closers.push(() => store.close());
    return store;
  };
  const runners: OutboxRunner[] = Array.from({ length: count }, (_, index) => {
    const store = open();
    const runner = createOutboxRunner({
      store,
      clock: systemClock,
      policy,
      owner: `runner-${index}`,
      send: (entry, signal) =>
        new Promise<SendResult>((resolve) => {
          const send: Send = {
            id: entry.id,
            runner: index,
            key: entry.idempotencyKey,
            attempts: entry.attempts,
            start: performance.now(),
          };
          sends.push(send);
          const finish = (result: SendResult) => {
            clearTimeout(timer);
            send.end = performance.now();
            resolve(result);
          };
          const timer = options.hang?.(entry.id)
            ? undefined
            : setTimeout(() => finish({ result: 'sent' }), options.latencyMs ?? 10);
          signal.addEventListener('abort', () =>
            finish({
              result: 'failed',
              failure: { class: 'cancelled', requestSent: 'unknown', origin: 'o', message: 'aborted' },
              attempts: 1,
              retryable: true,
            }),
          );
        }),
    });
    closers.push(() => runner.close());
    return runner;
  });
  return { runners, sends, open };
}

const entry = (id: string, orderKey?: string): OutboxEntry => ({
  id,
  createdAt: Date.now(),
  request: { method: 'POST', path: '/apply', headers: {}, body: id },
  idempotencyKey: `key-${id}`,
  orderKey,
  attempts: 0,
  nextAttemptAt: Date.now(),
  failures: [],
  status: 'pending',
});

/** Resolves once `check` holds, checking every 50 ms; rejects after `limitMs`. */
async function eventually(check: () => Promise<boolean>, limitMs: number): Promise<void> {
  const deadline = Date.now() + limitMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`not within ${limitMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

describe('outbox runners on a store with per-entry claims (PostgreSQL)', () => {
  it('share one queue: every entry sent once, orderKey order kept, entries a dead process left picked up', async () => {
    const { runners, sends, open } = fleet(3, { latencyMs: 15 });
    const keys = ['a', 'b', 'c', 'd', 'e'];
    const ids: Array<{ id: string; key: string | undefined }> = [];
    // Written by a process that is gone: no runner was told of these; they find them by reading the store.
    const orphanStore = open();
    for (let i = 0; i < 15; i++) {
      ids.push({ id: `orphan-${i}`, key: keys[i % keys.length] });
      await orphanStore.add(entry(`orphan-${i}`, keys[i % keys.length]));
    }
    // Each runner writes its own, as each instance of a service does, in turns (so this list is the store's
    // order); each starts sending at once, and a key's entries are spread over all three.
    for (let i = 0; i < 20; i++) {
      for (const [r, runner] of runners.entries()) {
        const key = i % 4 === 3 ? undefined : keys[(i + r) % keys.length];
        ids.push({ id: `r${r}-${i}`, key });
        await runner.enqueue(entry(`r${r}-${i}`, key));
      }
    }
    await eventually(async () => (await orphanStore.list()).length === 0, 15_000);

    // Every entry sent exactly once (no failures here, so no resend is ever due).
    const perId = new Map<string, number>();
    for (const send of sends) perId.set(send.id, (perId.get(send.id) ?? 0) + 1);
    expect([...perId.keys()].sort()).toEqual(ids.map(({ id }) => id).sort());
    expect([...perId.values()].every((n) => n === 1)).toBe(true);
    // Every runner sent some of them.
    expect(new Set(sends.map((send) => send.runner))).toEqual(new Set([0, 1, 2]));
    // Per key: each send starts after the previous entry of its key (in the store's order) ended.
    for (const key of keys) {
      const chain = ids.filter((item) => item.key === key);
      expect(chain.length).toBe(12); // 3 orphans and 9 of the runners' 60 (every 4th has no key)
      for (let i = 1; i < chain.length; i++) {
        const before = sends.find((send) => send.id === chain[i - 1]!.id)!;
        const after = sends.find((send) => send.id === chain[i]!.id)!;
        expect(after.start, `${chain[i]!.id} after ${chain[i - 1]!.id}`).toBeGreaterThanOrEqual(before.end!);
      }
    }
  }, 60_000);

  it('leaves an entry another runner holds alone, says so from flush(), and sends it once the claim is given back', async () => {
    const { runners, sends, open } = fleet(1);
    const other = open();
    await other.add(entry('held', 'k'));
    await other.add(entry('after', 'k'));
    await other.add(entry('free'));
    expect(
      await other.claims.claim({
        id: 'held',
        owner: 'elsewhere',
        attempts: 1,
        claimMs: 60_000,
        now: Date.now(),
        order: 'per-key',
        ignoreBackoff: false,
      }),
    ).toMatchObject({ status: 'claimed', stored: { id: 'held', attempts: 1 } });
    const runner = runners[0]!;
    // `after` waits for `held` (its key's earlier entry); `free` goes.
    expect(await runner.flush()).toEqual({ sent: 1, failed: 0, pending: 2, reason: 'lease-held' });
    expect(sends.map((send) => send.id)).toEqual(['free']);
    await other.claims.releaseAll('elsewhere');
    await eventually(async () => (await other.list()).length === 0, 10_000);
    // In order, and `held` with the attempt the other runner counted: a resend under the same key.
    expect(sends.map(({ id, attempts }) => [id, attempts])).toEqual([
      ['free', 1],
      ['held', 2],
      ['after', 1],
    ]);
  }, 30_000);

  it('gives its claims back on close(), so another runner resends a cut-short entry at once, same key', async () => {
    const { runners, sends } = fleet(2, { hang: (id) => id === 'slow' });
    const [first, second] = runners as [OutboxRunner, OutboxRunner];
    await first.enqueue(entry('slow'));
    expect(await first.started('slow')).toBe(true);
    await eventually(async () => sends.length === 1, 5_000);
    await first.close();
    // The claim lasts 30 s; given back, the second runner sends it in its next read of the store (about 1 s).
    const start = Date.now();
    await eventually(async () => sends.length === 2, 5_000);
    expect(Date.now() - start).toBeLessThan(5_000);
    expect(sends.map(({ id, runner, key, attempts }) => [id, runner, key, attempts])).toEqual([
      ['slow', 0, 'key-slow', 1],
      ['slow', 1, 'key-slow', 2],
    ]);
    void second;
  }, 30_000);

  it('forgets, in one store call, every entry of its queue another runner finished, once it finds one gone', async () => {
    const schema = `claims_${++schemas}`;
    const other = postgresStore(server.url(), { schema });
    const store = postgresStore(server.url(), { schema });
    closers.push(
      () => other.close(),
      () => store.close(),
    );
    // Each its own key: keyed entries keep the store's order (claim-spread.ts moves only entries without one).
    for (let i = 0; i < 10; i++) await other.add(entry(`e${i}`, `key-${i}`));
    const calls: string[] = [];
    const claims = store.claims;
    const counted = Object.assign(Object.create(store) as typeof store, {
      claims: {
        ...claims,
        claim: (request: Parameters<typeof claims.claim>[0]) => {
          calls.push(`claim ${request.id}`);
          return claims.claim(request);
        },
        gone: (ids: readonly string[]) => {
          calls.push(`gone ${ids.length}`);
          return claims.gone(ids);
        },
      },
    });
    const sent: string[] = [];
    let releaseFirst = () => {};
    const runner = createOutboxRunner({
      store: counted,
      clock: systemClock,
      policy: definePolicy({ durable: { order: 'per-key', concurrency: 1 } }),
      owner: 'late',
      send: (stored) => {
        sent.push(stored.id);
        if (stored.id !== 'e0') return Promise.resolve({ result: 'sent' });
        return new Promise((resolve) => (releaseFirst = () => resolve({ result: 'sent' })));
      },
    });
    closers.push(() => runner.close());
    // While it sends its first entry, another runner sends all the others but the last.
    await eventually(() => Promise.resolve(sent.length === 1), 5_000);
    for (let i = 1; i < 9; i++) await other.remove(`e${i}`);
    releaseFirst();
    await eventually(async () => (await other.list()).length === 0, 10_000);
    expect(sent).toEqual(['e0', 'e9']);
    // One claim finds e1 gone; one call finds the other seven gone (of the eight it still had); the next claim
    // is the one that is left.
    expect(calls).toEqual(['claim e0', 'claim e1', 'gone 8', 'claim e9']);
  }, 30_000);
});
