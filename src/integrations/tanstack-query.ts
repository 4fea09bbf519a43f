import { ArgumentError } from '../errors/argument-error.js';
import type { ConnectivitySource } from '../connectivity/connectivity-source.js';
import { isRecord } from '../policy/is-record.js';
import type { RequestPolicyInput } from '../policy/request-policy.js';

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
 * A query or mutation that needs a policy of its own carries it in its `meta` (`metaPolicy`), and its function
 * passes it on to the request: the attempts stay those of that one policy.
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

/** What `metaPolicy` reads of a query's or mutation's function context: its `meta`. */
export interface MetaContext {
  meta?: Readonly<Record<string, unknown>> | undefined;
}

/**
 * The failwise policy a query or mutation carries in its `meta` (`meta: { failwise: { policy } }`), for its
 * function to pass on as the request's own `policy`: `client.request({ path, signal, policy: metaPolicy(context) })`.
 * `undefined` when it carries none, so the request runs by its route's or the client's policy. The policy is
 * checked by the client when the request is made (a bad one rejects with `RequestError` naming
 * `request.policy...`). TanStack still never retries (`queryDefaults`): the attempts an origin sees are the
 * request policy's `attempts.max`, never multiplied.
 *
 * @param context the query function's context (`{ queryKey, signal, meta }`), or the mutation function's second
 *   argument (`{ meta, ... }`).
 */
export function metaPolicy(context: MetaContext | undefined): RequestPolicyInput | undefined {
  const failwise = context?.meta?.failwise;
  if (failwise === undefined) return undefined;
  if (!isRecord(failwise) || Object.keys(failwise).some((key) => key !== 'policy'))
    throw new ArgumentError('metaPolicy', 'meta.failwise', 'expected an object { policy }');
  return failwise.policy as RequestPolicyInput | undefined;
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
