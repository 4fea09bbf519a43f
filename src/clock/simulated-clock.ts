import type { Clock } from './clock.js';
import { ArgumentError } from '../errors/argument-error.js';

/** A clock that only moves when told to: every test in failwise runs on one. */
export interface SimulatedClock extends Clock {
  /** Timers armed and not yet fired or cleared. A finished request leaves none. */
  pending(): number;
  /** When the earliest armed timer is due, or `undefined` when none is armed. */
  nextTimerAt(): number | undefined;
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
  let now = options.startAt ?? 0;
  if (!Number.isFinite(now))
    throw new ArgumentError('simulatedClock', 'options.startAt', `expected a finite number, got ${now}`);
  let seq = 0;
  // Map order is creation order, so among timers due at once the earliest armed fires first.
  const timers = new Map<number, Timer>();
  const nextDue = (end: number) => {
    let next: [number, Timer] | undefined;
    for (const entry of timers)
      if (entry[1].due <= end && !(next && next[1].due <= entry[1].due)) next = entry;
    return next;
  };
  /** Runs every timer due up to `end`; `argument` names what the caller gave, for the error. */
  const advanceTo = async (end: number, argument: string) => {
    if (!(end >= now))
      throw new ArgumentError(
        'simulatedClock',
        argument,
        `cannot move back in time (now ${now}, asked ${end})`,
      );
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
  return {
    now: () => now,
    setTimeout(fn, timeoutMs) {
      timers.set(++seq, { due: now + (timeoutMs > 0 ? timeoutMs : 0), fn });
      return seq;
    },
    clearTimeout: (handle) => timers.delete(handle as number),
    pending: () => timers.size,
    nextTimerAt: () => nextDue(Number.POSITIVE_INFINITY)?.[1].due,
    increment: (ms) => advanceTo(now + ms, 'increment(ms)'),
    set: (time) => advanceTo(time, 'set(time)'),
    async runAll(limitMs = 86_400_000) {
      const end = now + limitMs;
      // One timer at a time, settling first: a timer cancelled meanwhile is never waited for, and time stops
      // at the last timer that fired.
      for (;;) {
        await settle();
        const next = nextDue(end);
        if (!next) break;
        timers.delete(next[0]);
        now = next[1].due;
        next[1].fn();
      }
    },
  };
}
