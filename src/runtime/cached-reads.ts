import { memoryCache } from '../cache/memory-cache.js';
import type { ResponseCache } from '../cache/response-cache.js';
import type { Clock } from '../clock/clock.js';
import { countsAgainstOrigin } from '../policy/health-evidence.js';
import type { Outcome } from '../policy/outcome.js';
import type { Policy } from '../policy/policy.js';
import type { PreparedRequest } from './prepare-request.js';
import { bufferedResponse } from '../transports/buffered-response.js';

/**
 * `lifetime: 'cached'` reads. Each is sent as an interactive request and its success kept in the cache. It is
 * answered from the cache instead, `stale` with its age, when the network path fails (offline, no usable
 * origin, a failure that counts against an origin) or while a refresh of the same key is already running;
 * never for a 4xx, a 401 or a 429 (the server answered), and never older than `policy.cache.maxAgeMs`.
 * The client loads this module with `import()` when it is first needed: at once when it is given a cache,
 * otherwise on the first cached read.
 */
/** One cached read, under the policy the request runs by. */
export type CachedRead = (prepared: PreparedRequest, requestPolicy: Readonly<Policy>) => Promise<Outcome>;

export function createCachedReads(deps: {
  /** @default memoryCache({ maxEntries: policy.cache.maxEntries }) */
  cache?: ResponseCache | undefined;
  clock: Clock;
  policy: Policy;
  /** Runs the read as an interactive request, under the policy it runs by (its own over its route's over the client's). */
  interactive: (prepared: PreparedRequest, requestPolicy: Readonly<Policy>) => Promise<Outcome>;
  /** Announces an answer from the cache (a `succeeded` decision event with `stale: true`). */
  announceStale: (prepared: PreparedRequest, origin: string, attempts: number, startedAt: number) => void;
}): CachedRead {
  const { clock, policy } = deps;
  const cache = deps.cache ?? memoryCache({ maxEntries: policy.cache.maxEntries });
  /** Reads whose network request is running, by cache key: others for that key are answered from the cache. */
  const refreshing = new Map<string, number>();

  return async (prepared, requestPolicy) => {
    const key = prepared.cacheKey ?? `${prepared.method} ${prepared.path}`;
    const startedAt = clock.now();
    const fromCache = async (attempts: number): Promise<Outcome | undefined> => {
      const hit = await cache.get(key);
      if (!hit) return undefined;
      const ageMs = clock.now() - hit.storedAt;
      if (ageMs > policy.cache.maxAgeMs) return void (await cache.delete(key));
      const { status, statusText, headers, body, origin } = hit;
      // A copy: the cache keeps its bytes for the next read. bufferedResponse leaves out the body of a 204 or a HEAD.
      const response = bufferedResponse(prepared.method, status, statusText, headers, body.slice());
      deps.announceStale(prepared, origin, attempts, startedAt);
      const elapsedMs = clock.now() - startedAt;
      return { status: 'succeeded', response, origin, attempts, elapsedMs, stale: true, ageMs };
    };
    if (refreshing.has(key)) {
      const cached = await fromCache(0);
      if (cached) return cached;
    }
    refreshing.set(key, (refreshing.get(key) ?? 0) + 1);
    let outcome: Outcome;
    try {
      outcome = await deps.interactive(prepared, requestPolicy);
    } finally {
      const left = refreshing.get(key)! - 1;
      if (left === 0) refreshing.delete(key);
      else refreshing.set(key, left);
    }
    if (outcome.status === 'succeeded') {
      const { response, origin } = outcome;
      if (!/no-store/i.test(response.headers.get('cache-control') ?? '')) {
        await cache.put(key, {
          status: response.status,
          statusText: response.statusText,
          headers: [...response.headers],
          body: new Uint8Array(await response.clone().arrayBuffer()),
          origin,
          storedAt: clock.now(),
        });
      }
      return outcome;
    }
    if (outcome.status !== 'failed') return outcome;
    const { reason, failure } = outcome;
    const pathFailed =
      reason === 'offline' ||
      reason === 'no-healthy-origin' ||
      (failure !== undefined &&
        (failure.class === 'offline' || countsAgainstOrigin(failure.class, failure.status, true)));
    return (pathFailed && (await fromCache(outcome.attempts))) || outcome;
  };
}
