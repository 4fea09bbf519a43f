import type { Clock } from '../clock/clock.js';
import { TimerQueue } from './timer-queue.js';

/**
 * What a timer calls when it is due: an object with a method, so that arming one makes no closure. A timer queue
 * (timer-queue.ts) keeps its bookkeeping in the target itself, so that a timer costs no entry object of its own: a
 * target is armed at most once at a time.
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

/** The handle of a 0 ms wait: cleared by marking it dead. */
class ZeroDelay {
  live = true;
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
  const queue =
    clock.monotonicNow !== undefined ? new TimerQueue(clock, () => clock.monotonicNow!()) : undefined;
  const host: Timers =
    queue !== undefined
      ? queue
      : {
          set: (target, delayMs) => clock.setTimeout(() => target.fire(), delayMs),
          clear: (handle) => clock.clearTimeout(handle),
        };
  return {
    set(target, delayMs) {
      if (delayMs > 0) return host.set(target, delayMs);
      const handle = new ZeroDelay();
      queueMicrotask(() => {
        if (!handle.live) return;
        handle.live = false;
        target.fire();
      });
      return handle;
    },
    clear(handle) {
      // Its constructor rather than instanceof: a cached read instead of a prototype walk on Hermes, per timer.
      if (typeof handle === 'object' && handle !== null && handle.constructor === ZeroDelay)
        (handle as ZeroDelay).live = false;
      else host.clear(handle);
    },
    quiesce() {
      queue?.quiesce();
    },
  };
}
