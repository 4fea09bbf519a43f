import type { TimerTarget } from './timers.js';

/**
 * The handle of a 0 ms wait: cleared by marking it dead. Its `index` is a timer queue's "not queued", so that a
 * queue clearing it tells it from one of its own entries with the read it makes anyway.
 */
export class ZeroDelay {
  live = true;
  readonly index = -1;
}

/**
 * A wait of 0 ms (a zero backoff, a Retry-After of 0): `target` fires as a microtask, after whatever the current
 * step started, with no host timer, unless its handle is cleared first.
 */
export function armZeroDelay(target: TimerTarget): ZeroDelay {
  const handle = new ZeroDelay();
  queueMicrotask(() => {
    if (!handle.live) return;
    handle.live = false;
    target.fire();
  });
  return handle;
}

/** Clears `handle` if it is a 0 ms wait's; false for any other handle. */
export function clearZeroDelay(handle: unknown): boolean {
  // Its constructor rather than instanceof: a cached read instead of a prototype walk on Hermes, per timer.
  if (typeof handle !== 'object' || handle === null || handle.constructor !== ZeroDelay) return false;
  (handle as ZeroDelay).live = false;
  return true;
}
