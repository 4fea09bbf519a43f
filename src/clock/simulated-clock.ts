import type { Clock } from './clock.js';

/** A clock that only moves when told to: every test in failwise runs on one. */
export interface SimulatedClock extends Clock {
  /** Timers armed and not yet fired or cleared. A finished request leaves none. */
  pending(): number;
  /**
   * Moves time forward by `ms`, firing each due timer at its own due time (not late, as xstate's
   * SimulatedClock does) and letting promises settle after each one, so a promise-based transport
   * answers at the simulated moment it was scheduled for.
   */
  increment(ms: number): Promise<void>;
  /** Moves time to the absolute point `t` (>= now), like `increment(t - now())`. */
  set(t: number): Promise<void>;
  /** Fires timers in order until none is left or `limitMs` of simulated time has passed. */
  runAll(limitMs?: number): Promise<void>;
}

interface Timer {
  due: number;
  seq: number;
  fn: (...args: unknown[]) => void;
}

/**
 * Lets every queued promise reaction and I/O callback run before the next timer fires.
 * `setImmediate` where the host has it (Node, Bun); a real 0 ms timer elsewhere.
 */
const settle = () =>
  new Promise<void>((resolve) =>
    typeof globalThis.setImmediate === 'function'
      ? globalThis.setImmediate(resolve)
      : globalThis.setTimeout(resolve, 0),
  );

export function simulatedClock(options: { startAt?: number } = {}): SimulatedClock {
  const startAt = options.startAt ?? 0;
  if (!Number.isFinite(startAt)) {
    throw new RangeError(`simulatedClock: startAt must be a finite number, got ${String(startAt)}`);
  }
  let now = startAt;
  let seq = 0;
  const timers = new Map<number, Timer>();

  const nextDue = (end: number): [number, Timer] | undefined => {
    let next: [number, Timer] | undefined;
    for (const entry of timers) {
      const t = entry[1];
      if (t.due > end) continue;
      if (!next || t.due < next[1].due || (t.due === next[1].due && t.seq < next[1].seq)) next = entry;
    }
    return next;
  };

  const advanceTo = async (end: number) => {
    await settle();
    for (let next = nextDue(end); next; next = nextDue(end)) {
      timers.delete(next[0]);
      now = next[1].due;
      next[1].fn();
      await settle();
    }
    now = end;
    await settle();
  };

  const clock: SimulatedClock = {
    now: () => now,
    setTimeout(fn, timeoutMs) {
      const id = ++seq;
      const delay = Number.isFinite(timeoutMs) && timeoutMs > 0 ? timeoutMs : 0;
      timers.set(id, { due: now + delay, seq: id, fn });
      return id;
    },
    clearTimeout(handle) {
      timers.delete(handle as number);
    },
    pending: () => timers.size,
    increment(ms) {
      if (!Number.isFinite(ms) || ms < 0) {
        return Promise.reject(
          new RangeError(`simulatedClock: cannot move back in time (increment by ${String(ms)} ms)`),
        );
      }
      return advanceTo(now + ms);
    },
    set(t) {
      if (!Number.isFinite(t) || t < now) {
        return Promise.reject(
          new RangeError(`simulatedClock: cannot move back in time (now ${now}, asked ${String(t)})`),
        );
      }
      return advanceTo(t);
    },
    async runAll(limitMs = 24 * 60 * 60 * 1000) {
      const end = now + limitMs;
      for (let next = nextDue(end); next; next = nextDue(end)) await advanceTo(next[1].due);
      await settle();
    },
  };
  return clock;
}
