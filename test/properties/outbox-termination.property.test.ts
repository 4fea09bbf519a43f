// What this proves: for ANY durable policy (exponential or linear backoff, any initial and maximum wait, 1 to 5
// attempts, any maximum age, fifo or per-key order, concurrency 1 to 3), ANY sequence of send results (success,
// retryable and non-retryable failures of every kind, Retry-After values, sends that made several attempts,
// latencies), ANY interleaving of enqueues, connectivity changes, flushes, retries of dead entries, removals
// (through a runner's `remove(id)` or straight from the store, as another tab's app would), another owner
// holding the lease for a while, failed store writes and clock advances, TWO outbox runners (two tabs or
// processes) on one store, through the public runner on a simulated clock:
// - never sends one entry twice at once (across both runners), and never runs more than `concurrency` sends
//   at once in one runner;
// - never sends while the connectivity source says offline;
// - sends an entry at most `maxAttempts` times in one life (a retry of a dead entry starts a new one);
// - drops nothing: once online and time has passed, every enqueued entry is either removed after a `sent`
//   result, removed by the app, or kept in the store as dead, and none is left pending;
// - resolves every flush, with a reason whenever something is still pending, and leaves no timer once both
//   runners are closed.
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
import { propertyRuns } from '../setup/property-runs.js';

const RUNS = 1_000;

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
  | { kind: 'enqueue'; runner: number; orderKey: string | undefined; attempts: number }
  | { kind: 'advance'; ms: number }
  | { kind: 'connectivity'; online: boolean }
  | { kind: 'flush'; runner: number }
  | { kind: 'retry'; runner: number; index: number }
  | { kind: 'remove'; runner: number; via: 'runner' | 'store'; index: number }
  | { kind: 'holdLease'; ms: number };

/** Which of the two runners a command goes to. */
const runnerArb = fc.integer({ min: 0, max: 1 });

const commandArb: fc.Arbitrary<Command> = fc.oneof(
  {
    weight: 3,
    arbitrary: fc.record({
      kind: fc.constant('enqueue' as const),
      runner: runnerArb,
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
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('flush' as const), runner: runnerArb }) },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant('retry' as const),
      runner: runnerArb,
      index: fc.integer({ min: 0, max: 7 }),
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant('remove' as const),
      runner: runnerArb,
      via: fc.constantFrom<'runner' | 'store'>('runner', 'store'),
      index: fc.integer({ min: 0, max: 7 }),
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant('holdLease' as const),
      ms: fc.oneof(fc.integer({ min: 1, max: 500 }), fc.integer({ min: 1, max: 60_000 })),
    }),
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
    /**
     * Which of the first lease requests (to take or renew it, either runner's) fail: a runner that loses the lease
     * while a decision waits to be written again must forget that decision, not write it over the other's work.
     */
    leaseFailures: fc.array(fc.boolean(), { maxLength: 8 }),
  },
  { numRuns: propertyRuns(RUNS) },
)(
  'every entry ends sent or dead within maxAttempts sends, none is dropped, sends never overlap',
  async ({ durable, replies, commands, startOnline, writeFailures, leaseFailures }) => {
    const policy = definePolicy({ durable });
    const clock = simulatedClock({ startAt: 1_000_000 });
    const base = memoryStore();
    let writes = 0;
    const flaky = () => writeFailures[writes++] === true;
    let leaseCalls = 0;
    const store: OutboxStore = {
      ...base,
      update: (entry) => (flaky() ? Promise.reject(new Error('injected')) : base.update(entry)),
      remove: (id) => (flaky() ? Promise.reject(new Error('injected')) : base.remove(id)),
      acquireLease: (owner, ttlMs, now) =>
        leaseFailures[leaseCalls++] === true
          ? Promise.reject(new Error('injected'))
          : base.acquireLease(owner, ttlMs, now),
    };
    const connectivity = manualConnectivity(startOnline ? 'online' : 'offline');

    const enqueued: string[] = [];
    const sentIds = new Set<string>();
    const removed = new Set<string>();
    const sendsThisLife = new Map<string, number>();
    /** Sends in flight, across both runners (an entry is never sent twice at once, by one or the other). */
    const active = new Set<string>();
    const activePerRunner = [new Set<string>(), new Set<string>()];
    const violations: string[] = [];
    let calls = 0;

    const runners = [0, 1].map((index) =>
      createOutboxRunner({
        store,
        clock,
        policy,
        connectivity,
        owner: `runner-${index}`,
        send: (entry, signal) => {
          // The contract's rules, checked as each send starts (collected: a throw here would be a failed send).
          const broken = (rule: string) =>
            violations.push(`${rule} (entry ${entry.id}, runner ${index}, at ${clock.now()})`);
          const mine = activePerRunner[index]!;
          if (active.has(entry.id)) broken('two sends of one entry at once');
          if (connectivity.current() === 'offline') broken('a send while offline');
          active.add(entry.id);
          mine.add(entry.id);
          if (mine.size > durable.concurrency) broken(`${mine.size} sends at once`);
          const sends = (sendsThisLife.get(entry.id) ?? 0) + 1;
          sendsThisLife.set(entry.id, sends);
          if (sends > durable.maxAttempts) broken(`send ${sends} of one life`);
          if (entry.attempts > durable.maxAttempts) broken(`attempt ${entry.attempts} counted`);

          const { result, latencyMs } = replies[calls++ % replies.length]!;
          const end = () => {
            active.delete(entry.id);
            mine.delete(entry.id);
          };
          return new Promise<SendResult>((resolve) => {
            const finish = () => {
              end();
              if (result.result === 'sent') sentIds.add(entry.id);
              resolve(result);
            };
            if (latencyMs === 0) return void Promise.resolve().then(finish);
            const timer = clock.setTimeout(finish, latencyMs);
            signal.addEventListener('abort', () => {
              clock.clearTimeout(timer);
              end();
              resolve({ result: 'sent' });
            });
          });
        },
      }),
    );

    const flushes: Promise<void>[] = [];
    let flushed = 0;
    const idAt = (index: number) => enqueued[index % Math.max(1, enqueued.length)];
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
          await runners[command.runner]!.enqueue(entry);
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
          flushes.push(
            runners[command.runner]!.flush().then((result) => {
              if (result.pending > 0 && result.reason === undefined)
                violations.push(`a flush left ${result.pending} pending without a reason`);
              flushed += 1;
            }),
          );
          break;
        case 'retry': {
          const id = idAt(command.index);
          if (id !== undefined && (await runners[command.runner]!.retry(id))) sendsThisLife.set(id, 0);
          break;
        }
        case 'remove': {
          const id = idAt(command.index);
          if (id === undefined) break;
          // A failed (injected) store write leaves the entry where it was.
          const done =
            command.via === 'runner'
              ? runners[command.runner]!.remove(id).then(
                  () => true,
                  () => false,
                )
              : base.remove(id).then(() => true);
          if (await done) removed.add(id);
          break;
        }
        case 'holdLease': {
          // Another tab takes the lease when it is free, and gives it back after `ms`.
          if (await base.acquireLease('other-tab', command.ms, clock.now()))
            clock.setTimeout(() => void base.releaseLease('other-tab'), command.ms);
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
    for (const id of enqueued) expect(storedIds.has(id) || sentIds.has(id) || removed.has(id)).toBe(true);
    expect(flushed).toBe(flushes.length);

    await Promise.all(runners.map((runner) => runner.close()));
    expect(clock.pending()).toBe(0);
  },
);
