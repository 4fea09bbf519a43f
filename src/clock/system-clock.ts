import type { Clock } from './clock.js';

/** The real clock: `Date.now()` and the host's timers. The default of `createFailoverClient`. */
export const systemClock: Clock = {
  now: () => Date.now(),
  setTimeout: (fn, timeoutMs) => globalThis.setTimeout(fn, timeoutMs),
  clearTimeout: (handle) => globalThis.clearTimeout(handle as ReturnType<typeof globalThis.setTimeout>),
};
