import type { OutboxEntry, OutboxStore } from './outbox-store.js';
import {
  checkEntry,
  checkId,
  checkLease,
  checkReplaces,
  closedError,
  isReplaceable,
  duplicateIdError,
  unknownIdError,
} from './store-input.js';

/**
 * The default `OutboxStore`: entries live in this process's memory and are gone when it ends. Use it for
 * tests and for apps whose durable work may be lost on a reload; use `sqliteStore` (Node) or
 * `indexedDbStore` (browsers) to keep it across restarts.
 *
 * @remarks
 * Entries are kept as deep copies (`copyEntry`), in and out, so a caller that mutates an entry it gave or
 * got changes nothing stored. The lease is only shared by clients given this same store object.
 *
 * @example
 * ```ts
 * const client = createFailoverClient({ origins, store: memoryStore() });
 * ```
 */
export function memoryStore(): OutboxStore {
  // A Map iterates in insertion order, and replacing a key's value keeps its place: list() needs no seq.
  const entries = new Map<string, OutboxEntry>();
  let lease: { owner: string; expiresAt: number } | undefined;
  let closed = false;

  /** Runs `fn` unless the store is closed; a throw becomes a rejection, as from a real database. */
  const call = <T>(method: string, fn: (who: string) => T): Promise<T> =>
    new Promise<T>((resolve) => {
      const who = `memoryStore.${method}`;
      if (closed) throw closedError(who);
      resolve(fn(who));
    });

  return {
    add: (entry, replaces, abandoned) =>
      call('add', (who) => {
        checkEntry(who, entry);
        const listed = checkReplaces(who, entry, replaces);
        if (entries.has(entry.id)) throw duplicateIdError(who, entry.id);
        if (abandoned?.aborted) return false;
        const removed = listed.filter((r) => isReplaceable(entries.get(r.id), r, entry)).map((r) => r.id);
        for (const id of removed) entries.delete(id);
        entries.set(entry.id, copyEntry(entry));
        return removed;
      }),
    update: (entry) =>
      call('update', (who) => {
        checkEntry(who, entry);
        if (!entries.has(entry.id)) throw unknownIdError(who, entry.id);
        entries.set(entry.id, copyEntry(entry));
      }),
    remove: (id) =>
      call('remove', (who) => {
        checkId(who, id);
        entries.delete(id);
      }),
    get: (id) =>
      call('get', (who) => {
        checkId(who, id);
        const entry = entries.get(id);
        return entry && copyEntry(entry);
      }),
    list: () => call('list', () => [...entries.values()].map((entry) => copyEntry(entry))),
    acquireLease: (owner, ttlMs, now) =>
      call('acquireLease', (who) => {
        checkLease(who, owner, ttlMs, now);
        if (lease && lease.owner !== owner && now < lease.expiresAt) return false;
        lease = { owner, expiresAt: now + ttlMs };
        return true;
      }),
    releaseLease: (owner) =>
      call('releaseLease', () => {
        if (lease?.owner === owner) lease = undefined;
      }),
    close: () => {
      // Closing twice is harmless: the client's close() and an app's own cleanup may both do it.
      closed = true;
      entries.clear();
      lease = undefined;
      return Promise.resolve();
    },
  };
}

/**
 * A deep copy of an entry. Written out rather than `structuredClone`, which React Native's Hermes lacks; an
 * entry is plain data (strings, numbers, arrays, a Uint8Array body).
 */
function copyEntry(entry: OutboxEntry): OutboxEntry {
  const { request } = entry;
  return {
    ...entry,
    request: {
      ...request,
      headers: { ...request.headers },
      ...(request.body instanceof Uint8Array ? { body: request.body.slice() } : {}),
    },
    failures: entry.failures.map((failure) => ({ ...failure })),
  };
}
