/** A response as the cache keeps it: enough to build a fresh `Response` each time it is served. */
export interface CachedResponse {
  status: number;
  statusText: string;
  headers: [string, string][];
  body: Uint8Array;
  /** The origin that served it. */
  origin: string;
  /** The clock's time when it was stored. */
  storedAt: number;
}

/**
 * Where `lifetime: 'cached'` reads are kept (docs/durable.md#cached-reads). Async, so a persistent cache can
 * implement it; `memoryCache()` is the default. Keys are chosen by the client (the request's path, or its
 * `cacheKey`), never by origin: a failover is invisible to the cache.
 */
export interface ResponseCache {
  get(key: string): Promise<CachedResponse | undefined>;
  put(key: string, value: CachedResponse): Promise<void>;
  delete(key: string): Promise<void>;
  clear(): Promise<void>;
}
