import type { CachedResponse, ResponseCache } from './response-cache.js';
import { ArgumentError } from '../errors/argument-error.js';

/**
 * The default response cache: in memory, least recently used first out once it holds `maxEntries`. Entries older
 * than `policy.cache.maxAgeMs` are never served (the client checks their age), and are dropped when read.
 */
export function memoryCache(options: { maxEntries?: number } = {}): ResponseCache {
  const maxEntries = options.maxEntries ?? 100;
  if (!Number.isInteger(maxEntries) || maxEntries < 1)
    throw new ArgumentError(
      'memoryCache',
      'options.maxEntries',
      `expected an integer >= 1, got ${String(maxEntries)}`,
    );
  // A Map iterates in insertion order: re-inserting on use keeps the least recently used first.
  const entries = new Map<string, CachedResponse>();
  return {
    get(key) {
      const value = entries.get(key);
      if (value) {
        entries.delete(key);
        entries.set(key, value);
      }
      return Promise.resolve(value);
    },
    put(key, value) {
      entries.delete(key);
      entries.set(key, value);
      for (const oldest of entries.keys()) {
        if (entries.size <= maxEntries) break;
        entries.delete(oldest);
      }
      return Promise.resolve();
    },
    delete: (key) => Promise.resolve(void entries.delete(key)),
    clear: () => Promise.resolve(entries.clear()),
  };
}
