import type { Clock } from './clock.js';

const performance = (globalThis as { performance?: { now?: () => number } }).performance;

/**
 * The real clock: `Date.now()`, the host's timers, and `performance.now()` where the host has it. The default of `createFailoverClient`. Frozen: it is
 * shared by every client, so replacing one of its functions would change them all.
 */
export const systemClock: Readonly<Clock> = Object.freeze<Clock>({
  now: () => Date.now(),
  setTimeout: (fn, timeoutMs) => globalThis.setTimeout(fn, timeoutMs),
  clearTimeout: (handle) => globalThis.clearTimeout(handle as ReturnType<typeof globalThis.setTimeout>),
  ...(typeof performance?.now === 'function' && { monotonicNow: () => performance.now!() }),
});
