import type { Clock } from '../clock/clock.js';

/**
 * The longest failwise waits for a store call that something must not wait for forever: `client.close()` for
 * each call it makes or finds in flight (the outbox's writes, giving the lease back, closing the store), so a
 * store that never answers cannot hang an app's shutdown (a write cut off is as a crash leaves it: the store's
 * calls are atomic); and a durable request's first write, when its budget was spent before the write began.
 */
export const STORE_WAIT_MS = 1_000;

/**
 * Resolves `true` once `promise` settles, or `false` once `ms` have passed on `clock`, whichever comes first.
 * Never rejects, and leaves no timer behind (a Node process can exit once it resolves).
 */
export function settledWithin(clock: Clock, promise: Promise<unknown>, ms: number): Promise<boolean> {
  return new Promise<boolean>((resolve) => {
    const timer = clock.setTimeout(() => resolve(false), ms);
    const settle = () => {
      clock.clearTimeout(timer);
      resolve(true);
    };
    promise.then(settle, settle);
  });
}
