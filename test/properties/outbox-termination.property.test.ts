// What this proves: for ANY durable policy (exponential or linear backoff, any initial and maximum wait, 1 to 5
// attempts, any maximum age, fifo or per-key order, concurrency 1 to 3), ANY sequence of send results (success,
// retryable and non-retryable failures of every kind, Retry-After values, sends that made several attempts,
// latencies), ANY interleaving of enqueues, connectivity changes, flushes, retries of dead entries, failed store
// writes and clock advances, the outbox run through the public runner on a simulated clock:
// - never sends one entry twice at once, and never runs more than `concurrency` sends at once;
// - never sends while the connectivity source says offline;
// - sends an entry at most `maxAttempts` times in one life (a retry of a dead entry starts a new one);
// - drops nothing: once online and time has passed, every enqueued entry is either removed after a `sent`
//   result or kept in the store as dead, and none is left pending;
// - resolves every flush, and leaves no timer once closed.
import { fc, test } from '@fast-check/vitest';
import { expect } from 'vitest';
import type { SendResult } from '../../machines/outbox/outbox.types.js';
import { simulatedClock } from '../../src/clock/simulated-clock.js';
import { manualConnectivity } from '../../src/connectivity/manual-connectivity.js';
import { definePolicy } from '../../src/policy/define-policy.js';
import type { Failure, FailureClass } from '../../src/policy/failure.js';
import { createOutboxRunner } from '../../src/runtime/outbox-runner.js';
import { memoryStore } from '../../src/stores/memory-store.js';
import type { OutboxEntry, OutboxStore } from '../../src/stores/outbox-store.js';

const durableArb = fc
  .record({
    backoff: fc.constantFrom<'exponential' | 'linear'>('exponential', 'linear'),
    initialMs: fc.integer({ min: 1, max: 5_000 }),
    extraMaxMs: fc.integer({ min: 0, max: 60_000 }),
    maxAttempts: fc.integer({ min: 1, max: 5 }),
    maxAgeMs: fc.integer({ min: 1, max: 3_600_000 }),
    order: fc.constantFrom<'fifo' | 'per-key'>('fifo', 'per-key'),
    concurrency: fc.integer({ min: 1, max: 3 }),
  })
  .map(({ extraMaxMs, ...durable }) => ({ ...durable, maxMs: durable.initialMs + extraMaxMs }));

const failureClassArb = fc.constantFrom<FailureClass>(
  'offline',
  'dns',
  'connect',
  'connect-timeout',
  'tls',
  'response-timeout',
  'connection-lost',
  'rate-limited',
  'unavailable',
  'server-error',
  'client-error',
  'unexpected',
);

const replyArb = fc.record({
  result: fc.oneof(
    { weight: 2, arbitrary: fc.constant<SendResult>({ result: 'sent' }) },
    {
      weight: 5,
      arbitrary: fc
        .record({
          failureClass: failureClassArb,
          requestSent: fc.constantFrom<Failure['requestSent']>('no', 'yes', 'unknown'),
          retryAfterMs: fc.option(fc.integer({ min: 0, max: 600_000 }), { nil: undefined }),
          inResult: fc.boolean(),
          attempts: fc.integer({ min: 1, max: 3 }),
          retryable: fc.boolean(),
        })
        .map(({ failureClass, requestSent, retryAfterMs, inResult, attempts, retryable }): SendResult => {
          const failure: Failure = {
            class: failureClass,
            requestSent,
            origin: 'primary',
            message: failureClass,
            ...(retryAfterMs !== undefined && !inResult ? { retryAfterMs } : {}),
          };
          return {
            result: 'failed',
            failure,
            attempts,
            retryable,
            ...(retryAfterMs !== undefined && inResult ? { retryAfterMs } : {}),
          };
        }),
    },
  ),
  latencyMs: fc.oneof(fc.constant(0), fc.integer({ min: 1, max: 20_000 })),
});

type Command =
  | { kind: 'enqueue'; orderKey: string | undefined; attempts: number }
  | { kind: 'advance'; ms: number }
  | { kind: 'connectivity'; online: boolean }
  | { kind: 'flush' }
  | { kind: 'retry'; index: number };

const commandArb: fc.Arbitrary<Command> = fc.oneof(
  {
    weight: 3,
    arbitrary: fc.record({
      kind: fc.constant('enqueue' as const),
      orderKey: fc.option(fc.constantFrom('a', 'b', 'c'), { nil: undefined }),
      attempts: fc.constantFrom(0, 0, 1, 3),
    }),
  },
  {
    weight: 4,
    arbitrary: fc.record({
      kind: fc.constant('advance' as const),
      ms: fc.oneof(fc.integer({ min: 0, max: 2_000 }), fc.integer({ min: 0, max: 400_000 })),
    }),
  },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('connectivity' as const), online: fc.boolean() }) },
  { weight: 1, arbitrary: fc.constant({ kind: 'flush' as const }) },
  {
    weight: 1,
    arbitrary: fc.record({ kind: fc.constant('retry' as const), index: fc.integer({ min: 0, max: 7 }) }),
  },
);

test.prop(
  {
    durable: durableArb,
    replies: fc.array(replyArb, { minLength: 1, maxLength: 12 }),
    commands: fc.array(commandArb, { minLength: 1, maxLength: 30 }),
    startOnline: fc.boolean(),
    /** Which of the first store writes (updates and removes, in order) fail; later ones succeed. */
    writeFailures: fc.array(fc.boolean(), { maxLength: 12 }),
  },
  { numRuns: 1_000 },
)(
  'every entry ends sent or dead within maxAttempts sends, none is dropped, sends never overlap',
  async ({ durable, replies, commands, startOnline, writeFailures }) => {
    const policy = definePolicy({ durable });
    const clock = simulatedClock({ startAt: 1_000_000 });
    const base = memoryStore();
    let writes = 0;
    const flaky = () => writeFailures[writes++] === true;
    const store: OutboxStore = {
      ...base,
      update: (entry) => (flaky() ? Promise.reject(new Error('injected')) : base.update(entry)),
      remove: (id) => (flaky() ? Promise.reject(new Error('injected')) : base.remove(id)),
    };
    const connectivity = manualConnectivity(startOnline ? 'online' : 'offline');

    const enqueued: string[] = [];
    const sentIds = new Set<string>();
    const sendsThisLife = new Map<string, number>();
    const active = new Set<string>();
    const violations: string[] = [];
    let calls = 0;

    const runner = createOutboxRunner({
      store,
      clock,
      policy,
      connectivity,
      send: (entry, signal) => {
        // The contract's rules, checked as each send starts (collected: a throw here would be a failed send).
        const broken = (rule: string) => violations.push(`${rule} (entry ${entry.id} at ${clock.now()})`);
        if (active.has(entry.id)) broken('two sends of one entry at once');
        if (connectivity.current() === 'offline') broken('a send while offline');
        active.add(entry.id);
        if (active.size > durable.concurrency) broken(`${active.size} sends at once`);
        const sends = (sendsThisLife.get(entry.id) ?? 0) + 1;
        sendsThisLife.set(entry.id, sends);
        if (sends > durable.maxAttempts) broken(`send ${sends} of one life`);
        if (entry.attempts > durable.maxAttempts) broken(`attempt ${entry.attempts} counted`);

        const { result, latencyMs } = replies[calls++ % replies.length]!;
        return new Promise<SendResult>((resolve) => {
          const finish = () => {
            active.delete(entry.id);
            if (result.result === 'sent') sentIds.add(entry.id);
            resolve(result);
          };
          if (latencyMs === 0) return void Promise.resolve().then(finish);
          const timer = clock.setTimeout(finish, latencyMs);
          signal.addEventListener('abort', () => {
            clock.clearTimeout(timer);
            active.delete(entry.id);
            resolve({ result: 'sent' });
          });
        });
      },
    });

    const flushes: Promise<void>[] = [];
    let flushed = 0;
    for (const command of commands) {
      switch (command.kind) {
        case 'enqueue': {
          const id = `e${enqueued.length}`;
          const entry: OutboxEntry = {
            id,
            createdAt: clock.now(),
            request: { method: 'POST', path: '/p', headers: {} },
            idempotencyKey: id,
            orderKey: command.orderKey,
            attempts: Math.min(command.attempts, durable.maxAttempts - 1),
            nextAttemptAt: clock.now(),
            failures: [],
            status: 'pending',
          };
          await runner.enqueue(entry);
          enqueued.push(id);
          sendsThisLife.set(id, 0);
          break;
        }
        case 'advance':
          await clock.increment(command.ms);
          break;
        case 'connectivity':
          connectivity.set(command.online ? 'online' : 'offline');
          await clock.increment(0);
          break;
        case 'flush':
          flushes.push(runner.flush().then(() => void (flushed += 1)));
          break;
        case 'retry': {
          const id = enqueued[command.index % Math.max(1, enqueued.length)];
          if (id !== undefined && (await runner.retry(id))) sendsThisLife.set(id, 0);
          break;
        }
      }
    }

    // Online, and time: everything must end.
    connectivity.set('online');
    for (let i = 0; ; i++) {
      await clock.increment(0);
      if (clock.pending() === 0 && active.size === 0) break;
      await clock.runAll(7 * 86_400_000);
      expect(i).toBeLessThan(100); // harness guard: the loop itself must end
    }

    expect(violations).toEqual([]);
    const stored = await store.list();
    const storedIds = new Set(stored.map((e) => e.id));
    for (const entry of stored) expect(entry.status).toBe('dead');
    for (const id of enqueued) expect(storedIds.has(id) || sentIds.has(id)).toBe(true);
    expect(flushed).toBe(flushes.length);

    await runner.close();
    expect(clock.pending()).toBe(0);
  },
);
