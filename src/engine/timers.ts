import type { Clock } from '../clock/clock.js';

/** Where the lean executor arms its delays. */
export interface Timers {
  set(fn: () => void, delayMs: number): unknown;
  clear(handle: unknown): void;
}

/** The handle of a 0 ms wait: cleared by marking it dead. */
class ZeroDelay {
  live = true;
}

/**
 * Timers on a clock, except that a wait of 0 ms (a zero backoff, a Retry-After of 0) takes no host timer: it
 * runs as a microtask, after whatever the current step started.
 */
export function clockTimers(clock: Clock): Timers {
  let timers = byClock.get(clock);
  if (timers === undefined) byClock.set(clock, (timers = timersOn(clock)));
  return timers;
}

/** One `Timers` per clock, made once: a request does not allocate its own. */
const byClock = new WeakMap<Clock, Timers>();

function timersOn(clock: Clock): Timers {
  return {
    set(fn, delayMs) {
      if (delayMs > 0) return clock.setTimeout(fn, delayMs);
      const handle = new ZeroDelay();
      queueMicrotask(() => {
        if (!handle.live) return;
        handle.live = false;
        fn();
      });
      return handle;
    },
    clear(handle) {
      if (handle instanceof ZeroDelay) handle.live = false;
      else clock.clearTimeout(handle);
    },
  };
}
