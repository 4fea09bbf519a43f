import { ArgumentError } from '../errors/argument-error.js';
import type { OutboxEntry, OutboxStore } from './outbox-store.js';
import { BY_ID, ENTRIES, IndexedDbConnection, onResult, transact } from './indexeddb-database.js';
import { IndexedDbLease } from './indexeddb-lease.js';
import {
  checkEntry,
  checkId,
  checkLease,
  checkReplaces,
  duplicateIdError,
  isReplaceable,
  unknownIdError,
} from './store-input.js';

// This file ships to browsers: no Node built-ins, and nothing but IndexedDB and Web Locks from the host.

// The host's own types, looked up where the app's types have them (the DOM lib), `never` where they do not (a Node
// project compiled without it): this declaration ships in the package's .d.ts, which must compile there too.
/** The `IDBFactory` of the app's types (the DOM lib). */
export type IndexedDbFactory = typeof globalThis extends { indexedDB: infer F } ? F : never;
/** The Web Locks `LockManager` of the app's types (the DOM lib). */
export type WebLockManager = typeof globalThis extends { navigator: { locks: infer L } } ? L : never;

/** Options of `indexedDbStore`. */
export interface IndexedDbStoreOptions {
  /**
   * The IndexedDB factory to open the database with (tests pass fake-indexeddb's).
   * @default globalThis.indexedDB
   */
  indexedDB?: IndexedDbFactory;
  /**
   * Web Locks for the lease. `null` keeps the lease as a record in the database instead, as is done
   * where Web Locks are missing.
   * @default globalThis.navigator?.locks
   */
  locks?: WebLockManager | null;
}

/**
 * An `OutboxStore` in IndexedDB, for browsers: durable work survives a reload or a crash, and the tabs of
 * one origin share it (the lease lets one of them send at a time).
 *
 * @remarks
 * Each method is one IndexedDB transaction, committed with `durability: 'strict'` before it resolves.
 * Where `navigator.locks` exists the lease is a Web Lock named `failwise-outbox:<name>`, held while this
 * store holds the lease: another tab cannot take it until it is released, the store is closed or the tab
 * goes away (`ttlMs` then only hands it between owners of this same store). Elsewhere the lease is a
 * record checked and set in one readwrite transaction, which IndexedDB runs one at a time.
 *
 * @example
 * ```ts
 * import { indexedDbStore } from 'failwise/browser';
 * const client = createFailoverClient({ origins, store: indexedDbStore('my-app-outbox') });
 * ```
 * @see docs/stores.md
 */
export function indexedDbStore(name: string, options: IndexedDbStoreOptions = {}): OutboxStore {
  if (typeof name !== 'string' || name === '') {
    throw new ArgumentError(
      'indexedDbStore',
      'name',
      `expected a database name (a non-empty string), got ${typeof name}`,
    );
  }
  const factory = options.indexedDB ?? (globalThis as { indexedDB?: IDBFactory }).indexedDB;
  const locks =
    options.locks === undefined
      ? (globalThis as { navigator?: { locks?: LockManager } }).navigator?.locks
      : (options.locks ?? undefined);
  const db = new IndexedDbConnection(factory, name);
  const lease = new IndexedDbLease(locks, `failwise-outbox:${name}`);

  return {
    // One transaction: the entries it replaces are removed, and it is added, together or not at all.
    add: (entry, replaces, abandoned) =>
      db.call('add', (idb, who) => {
        checkEntry(who, entry);
        const listed = checkReplaces(who, entry, replaces);
        return transact<string[] | false>(idb, ENTRIES, 'readwrite', (store, done, fail) => {
          // In the transaction: a request that gave up before it began has nothing written.
          if (abandoned?.aborted) return done(false);
          const removed: string[] = [];
          const replace = (i: number): void => {
            if (i === listed.length) {
              store.add(entry);
              return done(removed);
            }
            const listedEntry = listed[i]!;
            onResult(store.index(BY_ID).openCursor(listedEntry.id), fail, (cursor) => {
              if (cursor && isReplaceable(cursor.value as OutboxEntry, listedEntry, entry)) {
                cursor.delete();
                removed.push(listedEntry.id);
              }
              replace(i + 1);
            });
          };
          onResult(store.index(BY_ID).getKey(entry.id), fail, (key) => {
            if (key !== undefined) return fail(duplicateIdError(who, entry.id));
            replace(0);
          });
        });
      }),
    update: (entry) =>
      db.call('update', (idb, who) => {
        checkEntry(who, entry);
        return transact<void>(idb, ENTRIES, 'readwrite', (store, done, fail) => {
          onResult(store.index(BY_ID).getKey(entry.id), fail, (key) => {
            if (key === undefined) return fail(unknownIdError(who, entry.id));
            // The same key: the entry keeps its place in the order.
            store.put(entry, key);
            done(undefined);
          });
        });
      }),
    remove: (id) =>
      db.call('remove', (idb, who) => {
        checkId(who, id);
        return transact<void>(idb, ENTRIES, 'readwrite', (store, done, fail) => {
          onResult(store.index(BY_ID).getKey(id), fail, (key) => {
            if (key !== undefined) store.delete(key);
            done(undefined);
          });
        });
      }),
    get: (id) =>
      db.call('get', (idb, who) => {
        checkId(who, id);
        return transact<OutboxEntry | undefined>(idb, ENTRIES, 'readonly', (store, done, fail) => {
          onResult(store.index(BY_ID).get(id) as IDBRequest<OutboxEntry | undefined>, fail, done);
        });
      }),
    list: () =>
      db.call('list', (idb) =>
        transact<OutboxEntry[]>(idb, ENTRIES, 'readonly', (store, done, fail) => {
          onResult(store.getAll() as IDBRequest<OutboxEntry[]>, fail, done);
        }),
      ),
    acquireLease: (owner, ttlMs, now) =>
      db.call('acquireLease', (idb, who) => {
        checkLease(who, owner, ttlMs, now);
        return lease.acquire(idb, owner, ttlMs, now);
      }),
    releaseLease: (owner) => db.call('releaseLease', (idb) => lease.release(idb, owner)),
    close: async () => {
      if (db.closed) return;
      db.markClosed();
      // A lease taken through this store is given up, as closing the tab would free its Web Lock. Lease
      // calls already under way finish first, so that none takes the lease after this.
      await lease.settle();
      await db.close((idb) => lease.releaseRecords(idb));
    },
  };
}
