import { describe, expect, it } from 'vitest';
import { simulatedClock, type SimulatedClock } from '../../src/clock/simulated-clock.js';
import type { Clock } from '../../src/clock/clock.js';
import { TimerQueue } from '../../src/engine/timer-queue.js';
import { TimerTarget } from '../../src/engine/timers.js';
import { StateError } from '../../src/errors/state-error.js';
import { runNode } from '../helpers/run-node.js';

/** A timer target that calls `fn`. */
class Call extends TimerTarget {
  constructor(private readonly fn: () => unknown) {
    super();
  }
  fire(): void {
    void this.fn();
  }
}
const on = (fn: () => unknown) => new Call(fn);

/** A host clock over a simulated one that counts the host timers armed and cleared. */
function countingHost(sim: SimulatedClock) {
  const counts = { armed: 0, cleared: 0 };
  const clock: Clock = {
    now: () => sim.now(),
    setTimeout: (fn, ms) => (counts.armed++, sim.setTimeout(fn, ms)),
    clearTimeout: (handle) => (counts.cleared++, sim.clearTimeout(handle)),
  };
  return { clock, counts };
}

/** A host whose timer handles can be `unref()`ed, as Node's can; says whether the armed one keeps a process alive. */
function unrefHost(sim: SimulatedClock) {
  const handles: { inner: unknown; refed: boolean; cleared: boolean }[] = [];
  const clock: Clock = {
    now: () => sim.now(),
    setTimeout: (fn, ms) => {
      const handle = { inner: sim.setTimeout(fn, ms), refed: true, cleared: false };
      handles.push(handle);
      return Object.assign(handle, {
        ref: () => void (handle.refed = true),
        unref: () => void (handle.refed = false),
      });
    },
    clearTimeout: (handle) => {
      const h = handle as (typeof handles)[number];
      h.cleared = true;
      sim.clearTimeout(h.inner);
    },
  };
  const live = () => handles.filter((h) => !h.cleared && sim.pending() > 0);
  return { clock, keepsAlive: () => live().some((h) => h.refed), handles };
}

describe('TimerQueue: every delay of the lean executor on one host timer', () => {
  it('runs each timer at its due time, those due at once in the order they were armed', async () => {
    const sim = simulatedClock();
    const queue = new TimerQueue(sim, () => sim.now());
    const fired: string[] = [];
    const at = (name: string) => () => fired.push(`${name}@${sim.now()}`);
    queue.set(on(at('a')), 300);
    queue.set(on(at('b')), 100);
    queue.set(on(at('c')), 300);
    queue.set(on(at('d')), 200);
    queue.set(on(at('e')), 100);
    await sim.increment(99);
    expect(fired).toEqual([]);
    await sim.increment(1);
    expect(fired).toEqual(['b@100', 'e@100']);
    await sim.runAll();
    expect(fired).toEqual(['b@100', 'e@100', 'd@200', 'a@300', 'c@300']);
    expect(queue.size).toBe(0);
    expect(sim.pending()).toBe(0);
  });

  it('keeps a timer in its target: one armed twice at once is refused, one that fired or was cleared may be armed again', async () => {
    const sim = simulatedClock();
    const queue = new TimerQueue(sim, () => sim.now());
    const fired: number[] = [];
    const target = on(() => fired.push(sim.now()));
    expect(queue.set(target, 100)).toBe(target);
    expect(() => queue.set(target, 50)).toThrow(StateError);
    await sim.increment(100);
    expect(fired).toEqual([100]);
    queue.set(target, 100); // fired: armed again
    queue.clear(target);
    queue.set(target, 30); // cleared: armed again
    await sim.runAll();
    expect(fired).toEqual([100, 130]);
    expect(queue.size).toBe(0);
  });

  it('never runs a cleared timer; once none is left its host timer fires once and arms nothing (a host without unref)', async () => {
    const sim = simulatedClock();
    const queue = new TimerQueue(sim, () => sim.now());
    const fired: number[] = [];
    const first = queue.set(
      on(() => fired.push(1)),
      100,
    );
    const second = queue.set(
      on(() => fired.push(2)),
      200,
    );
    queue.set(
      on(() => fired.push(3)),
      300,
    );
    queue.clear(second);
    queue.clear(second); // clearing twice is harmless
    await sim.increment(150);
    queue.clear(first); // already fired: nothing to clear
    expect(fired).toEqual([1]);
    await sim.runAll();
    expect(fired).toEqual([1, 3]);

    const last = queue.set(
      on(() => fired.push(4)),
      500,
    );
    expect(sim.pending()).toBe(1);
    queue.clear(last);
    expect(queue.size).toBe(0);
    // Kept armed for the next timer; when it fires, with nothing due, it arms nothing.
    expect(sim.pending()).toBe(1);
    await sim.runAll();
    expect(fired).toEqual([1, 3]);
    expect(sim.pending()).toBe(0);
  });

  it('clears its resting host timer when quiesced, and only while no timer is armed', async () => {
    const sim = simulatedClock();
    const { clock, counts } = countingHost(sim);
    const queue = new TimerQueue(clock, () => sim.now());
    const fired: number[] = [];
    const first = queue.set(
      on(() => fired.push(1)),
      100,
    );
    queue.quiesce(); // a timer is armed: nothing happens
    expect(sim.pending()).toBe(1);
    queue.clear(first);
    expect(sim.pending()).toBe(1);
    queue.quiesce();
    expect(sim.pending()).toBe(0);
    expect(counts).toEqual({ armed: 1, cleared: 1 });
    queue.quiesce(); // twice is harmless
    queue.set(
      on(() => fired.push(2)),
      50,
    );
    await sim.runAll();
    expect(fired).toEqual([2]);
    expect(sim.pending()).toBe(0);
  });

  it('arms one host timer for a thousand requests that each arm and clear later timers', async () => {
    const sim = simulatedClock();
    const { clock, counts } = countingHost(sim);
    const queue = new TimerQueue(clock, () => sim.now());
    const handles = [];
    for (let i = 0; i < 1_000; i++) {
      handles.push(
        queue.set(
          on(() => undefined),
          10_000,
        ),
        queue.set(
          on(() => undefined),
          5_000,
        ),
      );
      await sim.increment(1);
    }
    // Armed for the first budget, then again for the first attempt's earlier timeout; never again after it.
    expect(counts).toEqual({ armed: 2, cleared: 1 });
    for (const handle of handles) queue.clear(handle);
    // Empty: a host without unref keeps its timer armed for the next requests, and arms nothing when it fires.
    expect(counts).toEqual({ armed: 2, cleared: 1 });
    await sim.runAll();
    expect(counts).toEqual({ armed: 2, cleared: 1 });
    expect(sim.pending()).toBe(0);
  });

  it('works on after emptying a heap that held many timers (it is made anew then)', async () => {
    const sim = simulatedClock();
    const queue = new TimerQueue(sim, () => sim.now());
    const fired: number[] = [];
    const many = Array.from({ length: 1_000 }, (_, i) =>
      queue.set(
        on(() => fired.push(i)),
        100 + i,
      ),
    );
    for (const handle of many.slice(0, 500)) queue.clear(handle);
    await sim.increment(1_099); // the other 500 fire, in order, and empty the heap
    expect(fired).toEqual(Array.from({ length: 500 }, (_, i) => 500 + i));
    for (const handle of many) queue.clear(handle); // all gone already: harmless
    queue.set(
      on(() => fired.push(-1)),
      10,
    );
    queue.set(
      on(() => fired.push(-2)),
      5,
    );
    await sim.increment(10);
    expect(fired.slice(500)).toEqual([-2, -1]);
    expect(queue.size).toBe(0);
    expect(sim.pending()).toBe(0);
  });

  it('arms the host timer again for a timer due earlier than the one it waits for', async () => {
    const sim = simulatedClock();
    const { clock, counts } = countingHost(sim);
    const queue = new TimerQueue(clock, () => sim.now());
    const fired: string[] = [];
    queue.set(
      on(() => fired.push('late')),
      1_000,
    );
    queue.set(
      on(() => fired.push('early')),
      10,
    );
    expect(counts).toEqual({ armed: 2, cleared: 1 });
    await sim.increment(10);
    expect(fired).toEqual(['early']);
    await sim.increment(990);
    expect(fired).toEqual(['early', 'late']);
  });

  it('a timer armed while others run takes its turn after them; one cleared by an earlier one never runs', async () => {
    const sim = simulatedClock();
    const queue = new TimerQueue(sim, () => sim.now());
    const fired: string[] = [];
    queue.set(
      on(() => {
        fired.push('first');
        queue.clear(doomed);
        queue.set(
          on(() => fired.push('armed by first')),
          50,
        );
      }),
      100,
    );
    const doomed = queue.set(
      on(() => fired.push('doomed')),
      100,
    );
    await sim.increment(100);
    expect(fired).toEqual(['first']);
    await sim.increment(50);
    expect(fired).toEqual(['first', 'armed by first']);
    expect(sim.pending()).toBe(0);
  });

  it('keeps its dues on the time line it is given, not on the clock it arms the host timer with', async () => {
    const sim = simulatedClock();
    // A wall clock set back an hour (a phone's time corrected) between two timers.
    let wallOffset = 0;
    const host: Clock = { ...sim, now: () => sim.now() + wallOffset };
    const queue = new TimerQueue(host, () => sim.now());
    const fired: string[] = [];
    queue.set(
      on(() => fired.push(`a@${sim.now()}`)),
      100,
    );
    wallOffset = -3_600_000;
    queue.set(
      on(() => fired.push(`b@${sim.now()}`)),
      200,
    );
    await sim.runAll(1_000);
    expect(fired).toEqual(['a@100', 'b@200']);
  });

  it('does not keep a process alive while empty: its resting host timer is unref()ed, and ref()ed for a new timer', async () => {
    const sim = simulatedClock();
    const { clock, keepsAlive, handles } = unrefHost(sim);
    const queue = new TimerQueue(clock, () => sim.now());
    const budget = queue.set(
      on(() => undefined),
      10_000,
    );
    const attempt = queue.set(
      on(() => undefined),
      5_000,
    );
    expect(keepsAlive()).toBe(true);
    queue.clear(attempt);
    queue.clear(budget);
    // Not cleared (the next request would arm it again at once), but no longer holding the process.
    expect(handles.filter((h) => !h.cleared)).toHaveLength(1);
    expect(keepsAlive()).toBe(false);

    const fired: number[] = [];
    queue.set(
      on(() => fired.push(sim.now())),
      12_000,
    );
    expect(keepsAlive()).toBe(true);
    // The resting host timer fires at 10 s, finds nothing due and is armed again for 12 s.
    await sim.runAll();
    expect(fired).toEqual([12_000]);
    expect(sim.pending()).toBe(0);
  });

  it('lets a Node process that made requests on systemClock exit by itself without close(), long before their budget', async () => {
    // The child makes 20 requests (budget 60 s, attempt timeout 30 s) that succeed, and does not close its client.
    const script = `
      import { createFailoverClient } from './src/index.node.ts';
      const client = createFailoverClient({
        origins: [{ id: 'primary', url: 'https://api.example.test' }],
        policy: { budgetMs: 60_000, timeouts: { attemptMs: 30_000 } },
        transport: { name: 'at-once', send: async () => ({ kind: 'response', response: new Response(null, { status: 204 }) }) },
      });
      const outcomes = await Promise.all(Array.from({ length: 20 }, () => client.request({ path: '/x' })));
      console.log(outcomes.every((o) => o.status === 'succeeded'));
    `;
    const result = await runNode(['--input-type=module', '-e', script], 20_000);
    expect(result).toEqual({ code: 0, stdout: 'true\n', stderr: '', killed: false });
  }, 30_000);
});
