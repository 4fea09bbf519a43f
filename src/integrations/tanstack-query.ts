import { ArgumentError } from '../errors/argument-error.js';
import type { ConnectivitySource } from '../connectivity/connectivity-source.js';

/**
 * TanStack Query's `defaultOptions` as far as failwise sets them: no retry by TanStack, for queries or mutations.
 * (Written here rather than imported, so failwise needs no types of `@tanstack/query-core` to build.)
 */
export interface FailwiseQueryDefaults {
  queries: { retry: false };
  mutations: { retry: false };
}

/**
 * `defaultOptions` for `new QueryClient({ defaultOptions: queryDefaults(client) })`: TanStack Query never
 * retries, so whatever a query or mutation function built on `client.fetch` / `client.request` throws, the
 * attempts that reach an origin stay within `policy.attempts.max` (rule 1). failwise already retried
 * what was safe to retry, within its budget, on a backup after a failover; TanStack's default (3 retries of a
 * query) would make up to 4 x 3 attempts, replay writes without looking at idempotency keys, and wait out
 * its own backoff on top of failwise's.
 *
 * @param client the failwise client the app's query functions call (checked, so that a wrong argument is
 *   caught where the QueryClient is made).
 */
export function queryDefaults(client: { request: unknown; fetch: unknown }): FailwiseQueryDefaults {
  if (
    typeof client !== 'object' ||
    client === null ||
    typeof client.request !== 'function' ||
    typeof client.fetch !== 'function'
  )
    throw new ArgumentError('queryDefaults', 'client', 'expected a failwise client (createFailoverClient)');
  return { queries: { retry: false }, mutations: { retry: false } };
}

/** What `syncOnlineManager` needs of TanStack Query's `onlineManager`. */
export interface OnlineManagerLike {
  setEventListener(setup: (setOnline: (online: boolean) => void) => (() => void) | undefined): void;
}

/**
 * Makes TanStack Query's `onlineManager` follow the device, as the connectivity source tells it, and never the
 * API's health: queries pause when the device goes offline and resume when it is back (`changed`, a new
 * network, leaves it online); an origin that fails pauses nothing, since failwise fails over instead. Replaces
 * TanStack's own listener (the browser's online/offline events). Returns a function that stops following the
 * source; `onlineManager` then keeps its last state.
 */
export function syncOnlineManager(
  onlineManager: OnlineManagerLike,
  connectivity: ConnectivitySource,
): () => void {
  if (typeof onlineManager?.setEventListener !== 'function')
    throw new ArgumentError('syncOnlineManager', 'onlineManager', "expected TanStack Query's onlineManager");
  if (typeof connectivity?.current !== 'function' || typeof connectivity.subscribe !== 'function')
    throw new ArgumentError(
      'syncOnlineManager',
      'connectivity',
      'expected a connectivity source (current, subscribe)',
    );
  let following = true;
  onlineManager.setEventListener((setOnline) => {
    // 'unknown' says nothing: TanStack keeps what it believes (online, by default).
    const now = connectivity.current();
    if (now !== 'unknown') setOnline(now === 'online');
    return connectivity.subscribe((hint) => {
      if (hint === 'online') setOnline(true);
      else if (hint === 'offline') setOnline(false);
    });
  });
  return () => {
    if (!following) return;
    following = false;
    // A listener that listens to nothing: TanStack calls the cleanup of ours, which unsubscribes from the source.
    onlineManager.setEventListener(() => undefined);
  };
}
