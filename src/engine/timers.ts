import type { Clock } from '../clock/clock.js';
import { TimerQueue } from './timer-queue.js';
import { armZeroDelay, clearZeroDelay } from './zero-delay.js';

/**
 * What a timer calls when it is due: an object with a method, so that arming one makes no closure. A timer queue
 * (timer-queue.ts) keeps its bookkeeping in the target itself, so that a timer costs no entry object of its own: a
 * target is armed at most once at a time. A class may declare the three fields itself (`implements`) rather than
 * extend this one, as the lean executor's timer slots do: on Hermes a derived class's construction calls its base
 * constructor, once per timer.
 */
export abstract class TimerTarget {
  /** @internal The queue's: when it is due, the order it was armed in, its place in the heap (-1: not queued). */
  due = 0;
  /** @internal */
  seq = 0;
  /** @internal */
  index = -1;

  abstract fire(): void;
}

/** Where the lean executor arms its delays. */
export interface Timers {
  set(target: TimerTarget, delayMs: number): unknown;
  clear(handle: unknown): void;
  /** Clears a host timer kept armed while none of these timers is (timer-queue.ts), if there is one. */
  quiesce?(): void;
}

/**
 * Timers on a clock, except that a wait of 0 ms (a zero backoff, a Retry-After of 0) takes no host timer: it
 * runs as a microtask, after whatever the current step started. On a clock with a monotonic time line
 * (`systemClock`) the other delays share one host timer (timer-queue.ts); on any other clock each delay is a
 * timer of that clock, so a simulated clock sees them all, in the order they were armed.
 */
export function clockTimers(clock: Clock): Timers {
  let timers = byClock.get(clock);
  if (timers === undefined) byClock.set(clock, (timers = timersOn(clock)));
  return timers;
}

/**
 * Nothing stays armed on the clock's timers once none is due: for a client's `close()`, as the timer queue keeps
 * its host timer armed between requests. Timers other runs still have armed are left alone.
 */
export function quiesceClockTimers(clock: Clock): void {
  byClock.get(clock)?.quiesce?.();
}

/** One `Timers` per clock, made once: a request does not allocate its own. */
const byClock = new WeakMap<Clock, Timers>();

function timersOn(clock: Clock): Timers {
  // The queue takes a 0 ms wait as a microtask itself: a run arms its delays on it with no call between.
  if (clock.monotonicNow !== undefined) return new TimerQueue(clock, () => clock.monotonicNow!());
  return {
    set: (target, delayMs) =>
      delayMs > 0 ? clock.setTimeout(() => target.fire(), delayMs) : armZeroDelay(target),
    clear(handle) {
      if (!clearZeroDelay(handle)) clock.clearTimeout(handle);
    },
  };
}
