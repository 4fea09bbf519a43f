import { describe, expect, it } from 'vitest';
import { simulatedClock } from '../../src/clock/simulated-clock.js';
import { manualConnectivity } from '../../src/connectivity/manual-connectivity.js';
import { leanRunner, type MachineRun, type MachineRunner } from '../../src/engine/machine-runner.js';
import { definePolicy } from '../../src/policy/define-policy.js';
import { createOutboxRunner } from '../../src/runtime/outbox-runner.js';
import { memoryStore } from '../../src/stores/memory-store.js';
import type { OutboxEntry } from '../../src/stores/outbox-store.js';

// What the outbox runner hands its machine (events sent to it, what its actors and children
// answer) holds the entry's counters and times, never its request (path and query, headers, body) or key.

/** A lean runner that records every event sent to the machine and every answer of its actors and children. */
function recordingRunner(seen: unknown[]): MachineRunner {
  return {
    prepare(definition, options) {
      const record =
        <A extends unknown[], R>(fn: (...args: A) => R) =>
        (...args: A): R => {
          const answer = fn(...args);
          void Promise.resolve(answer).then((value) => seen.push(value));
          return answer;
        };
      const wrap = <T extends Readonly<Record<string, (...args: never[]) => unknown>>>(fns: T | undefined) =>
        fns &&
        (Object.fromEntries(Object.entries(fns).map(([name, fn]) => [name, record(fn)])) as unknown as T);
      const spawned = wrap(options.spawned);
      const prepared = leanRunner.prepare(definition, {
        ...options,
        actors: wrap(options.actors)!,
        ...(spawned && { spawned }),
      });
      return {
        start: (input, observer) => {
          const run = prepared.start(input, observer);
          const recorded: MachineRun<never> = {
            get status() {
              return run.status;
            },
            get context() {
              return run.context as never;
            },
            get value() {
              return run.value;
            },
            matches: (value) => run.matches(value),
            send: (event) => (seen.push(event), run.send(event)),
            stop: () => run.stop(),
          };
          return recorded;
        },
      };
    },
  };
}

const entry = (id: string, now: number): OutboxEntry => ({
  id,
  createdAt: now,
  request: {
    method: 'POST',
    path: '/v1/orders?token=SECRET-Q',
    headers: { 'x-secret': 'SECRET-H' },
    body: 'SECRET-B',
  },
  idempotencyKey: 'SECRET-K',
  attempts: 0,
  nextAttemptAt: now,
  failures: [],
  status: 'pending',
});

describe('createOutboxRunner and secrets', () => {
  it('gives its machine summaries of loaded, enqueued and moved-on entries, never a request or key', async () => {
    const clock = simulatedClock({ startAt: 1_000 });
    const store = memoryStore();
    await store.add(entry('loaded', clock.now()));
    const connectivity = manualConnectivity('offline');
    const seen: unknown[] = [];
    const sent: OutboxEntry[] = [];
    const runner = createOutboxRunner({
      store,
      clock,
      connectivity,
      policy: definePolicy({}),
      runner: recordingRunner(seen),
      send: (stored) => (sent.push(stored), Promise.resolve({ result: 'sent' })),
    });
    await runner.enqueue(entry('enqueued', clock.now()));
    // Another runner counts an attempt of `loaded` meanwhile: this runner's claim finds the store moved on.
    const loaded = (await store.get('loaded'))!;
    await store.update({ ...loaded, attempts: 1 });
    connectivity.set('online');
    await runner.flush();
    await clock.runAll();
    await runner.flush();
    await runner.close();

    // The runtime's own send read the whole entries from the store, secrets and all.
    expect(sent.map((e) => e.id).sort()).toEqual(['enqueued', 'loaded']);
    expect(JSON.stringify(sent)).toContain('SECRET-K');
    const types = seen.flatMap((e) => (e && typeof e === 'object' && 'type' in e ? [e.type] : []));
    expect(types).toEqual(expect.arrayContaining(['outbox.enqueued', 'commit.succeeded']));
    expect(seen).toContainEqual(
      expect.objectContaining({ type: 'commit.succeeded', id: 'loaded', stored: expect.anything() }),
    );
    expect(seen).toContainEqual(
      expect.objectContaining({ entries: [expect.objectContaining({ id: 'loaded', attempts: 0 })] }),
    );
    const text = JSON.stringify(seen);
    for (const secret of ['SECRET-Q', 'SECRET-H', 'SECRET-B', 'SECRET-K', '/v1/orders'])
      expect(text).not.toContain(secret);
  });
});
