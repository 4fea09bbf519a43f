import type { Clock } from './clock.js';

/**
 * The real clock: `Date.now()` and the host's timers. The default of `createFailoverClient`. Frozen: it is
 * shared by every client, so replacing one of its functions would change them all.
 */
export const systemClock: Readonly<Clock> = Object.freeze<Clock>({
  now: () => Date.now(),
  setTimeout: (fn, timeoutMs) => globalThis.setTimeout(fn, timeoutMs),
  clearTimeout: (handle) => globalThis.clearTimeout(handle as ReturnType<typeof globalThis.setTimeout>),
});
