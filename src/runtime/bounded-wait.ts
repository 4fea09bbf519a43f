import type { Clock } from '../clock/clock.js';
import { StateError } from '../errors/state-error.js';

/**
 * The longest failwise waits for a store call that something must not wait for forever: `client.close()` for
 * each call it makes or finds in flight (the outbox's writes, giving the lease back, closing the store), so a
 * store that never answers cannot hang an app's shutdown (a write cut off is as a crash leaves it: the store's
 * calls are atomic); and a durable request's first write, when its budget was spent before the write began.
 */
export const STORE_WAIT_MS = 1_000;

/**
 * The longest the outbox's scheduler waits for one store call (a read, a lease request, a commit) before it
 * takes the call as failed: it then goes the way of any store failure (reads again later, keeps what it knows),
 * so a store that stops answering cannot hold `flush()` or `retry()` forever. A call that lands later is
 * harmless: a commit that did land is found by the next claim's check (the entry moved on), a lease taken
 * late is given back or runs out. Long, so that a slow store under load is not taken for a dead one.
 */
export const STORE_ANSWER_MS = 10_000;

/**
 * `promise`, or a rejection with a `StateError` naming `what` once `ms` have passed on `clock` without an
 * answer. Leaves no timer behind once either happens; `watches` holds a way to stop the timer meanwhile (for
 * a close() that must leave no timer running).
 */
export function answeredWithin<T>(
  clock: Clock,
  promise: Promise<T>,
  ms: number,
  what: string,
  watches: Set<() => void>,
): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const stop = () => (clock.clearTimeout(timer), watches.delete(stop));
    const timer = clock.setTimeout(() => {
      stop();
      reject(new StateError(`failwise outbox: the store did not answer ${what} within ${ms} ms`));
    }, ms);
    watches.add(stop);
    promise.then(
      (value) => (stop(), resolve(value)),
      // The store's own rejection, passed on as it is.
      // eslint-disable-next-line @typescript-eslint/prefer-promise-reject-errors
      (error: unknown) => (stop(), reject(error)),
    );
  });
}

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
