import { FailwiseError } from '../errors/failwise-error.js';
import { messageOf } from './optional-peer.js';
import { ArgumentError } from '../errors/argument-error.js';
import type { OutboxEntry, OutboxStore } from './outbox-store.js';
import {
  checkEntry,
  checkId,
  checkLease,
  closedError,
  duplicateIdError,
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

/** The database's version is the layout's version: a newer failwise upgrades it in `onupgradeneeded`. */
const DB_VERSION = 1;
const ENTRIES = 'entries';
const BY_ID = 'by-id';
const LEASE = 'lease';
const LEASE_KEY = 'lease';

interface LeaseRecord {
  owner: string;
  expiresAt: number;
}

function openDatabase(factory: IDBFactory, name: string): Promise<IDBDatabase> {
  return new Promise((resolve, reject) => {
    const request = factory.open(name, DB_VERSION);
    request.onupgradeneeded = (event) => {
      const db = request.result;
      if (event.oldVersion < 1) {
        // Out-of-line keys counted up by IndexedDB keep insertion order, and are never reused.
        db.createObjectStore(ENTRIES, { autoIncrement: true }).createIndex(BY_ID, 'id', { unique: true });
        db.createObjectStore(LEASE);
      }
      // Later versions add their upgrades here, from event.oldVersion up.
    };
    request.onsuccess = () => resolve(request.result);
    request.onerror = () => {
      const error = request.error;
      reject(
        new FailwiseError(
          error?.name === 'VersionError'
            ? `indexedDbStore: database ${JSON.stringify(name)} was written by a newer failwise (version > ${DB_VERSION})`
            : `indexedDbStore: cannot open database ${JSON.stringify(name)}: ${messageOf(error)}`,
          { cause: error },
        ),
      );
    };
  });
}

/** The steps of one transaction: `done` sets what it resolves with, `fail` aborts it with `error`. */
type Steps<T> = (store: IDBObjectStore, done: (value: T) => void, fail: (error: Error) => void) => void;

/**
 * Runs `steps` in one transaction on `storeName`, resolving once it has committed (so a resolved write is
 * on disk) and rejecting when it aborts.
 */
function transact<T>(
  db: IDBDatabase,
  storeName: string,
  mode: IDBTransactionMode,
  steps: Steps<T>,
): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    // `strict`: the commit is flushed to disk before `complete` fires; browsers may relax that by default,
    // and an entry whose add() resolved must survive a crash (CONTRACT rule 10).
    const tx = db.transaction(storeName, mode, { durability: 'strict' });
    let result: T;
    let failure: Error | undefined;
    const fail = (error: Error) => {
      failure ??= error;
      tx.abort();
    };
    tx.oncomplete = () => resolve(result);
    tx.onabort = () =>
      reject(failure ?? new FailwiseError(`indexedDbStore: transaction aborted: ${messageOf(tx.error)}`));
    steps(tx.objectStore(storeName), (value) => (result = value), fail);
  });
}

/** Calls `then` with the result of `request`; an exception in it aborts the transaction with that error. */
function onResult<R>(request: IDBRequest<R>, fail: (error: Error) => void, then: (result: R) => void): void {
  request.onsuccess = () => {
    try {
      then(request.result);
    } catch (error) {
      fail(
        error instanceof Error
          ? error
          : new FailwiseError(`indexedDbStore: ${String(error)}`, { cause: error }),
      );
    }
  };
}

/** A lease held through Web Locks: the lock is ours until `release` is called, or the page goes away. */
interface HeldLock {
  owner: string;
  expiresAt: number;
  /** Lets the lock go; resolves once it is free, so that another tab asking next gets it. */
  release: () => Promise<void>;
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
  const lockName = `failwise-outbox:${name}`;

  let opening: Promise<IDBDatabase> | undefined;
  let closed = false;
  /** Set when another tab deleted or upgraded the database: this connection had to let go of it. */
  let lost = false;
  /** Owners that took the lease record through this store: close() gives it up for them. */
  const held = new Set<string>();
  let lock: HeldLock | undefined;
  /** Lease calls run one after another, so two of them never both ask for the Web Lock. */
  let leaseQueue: Promise<unknown> = Promise.resolve();

  async function open(): Promise<IDBDatabase> {
    if (factory === undefined) {
      throw new FailwiseError(
        'indexedDbStore: there is no IndexedDB here (globalThis.indexedDB is undefined); pass options.indexedDB, or use memoryStore()',
      );
    }
    const db = await openDatabase(factory, name);
    // Another tab wants to delete or upgrade the database: let go of it rather than block that tab.
    db.onversionchange = () => {
      lost = true;
      db.close();
    };
    return db;
  }

  /** Runs `fn` on the open database; opens it on the first call, and rejects once the store is closed. */
  async function call<T>(method: string, fn: (db: IDBDatabase, who: string) => T | Promise<T>): Promise<T> {
    const who = `indexedDbStore.${method}`;
    if (closed) throw closedError(who);
    const db = await (opening ??= open());
    if (closed) throw closedError(who);
    if (lost) {
      throw new FailwiseError(
        `${who}: database ${JSON.stringify(name)} was deleted or upgraded by another tab; open a new store`,
      );
    }
    return fn(db, who);
  }

  /** `fn` after every lease call made before it. */
  function queued<T>(fn: () => Promise<T>): Promise<T> {
    const run = leaseQueue.then(fn, fn);
    leaseQueue = run.catch(() => undefined);
    return run;
  }

  /** Asks for the Web Lock without waiting: true when this store now holds it. */
  function takeLock(lockManager: LockManager, owner: string, expiresAt: number): Promise<boolean> {
    return new Promise<boolean>((resolve, reject) => {
      // The request settles once the lock is free again (or was not granted).
      const settled: Promise<unknown> = lockManager
        .request(lockName, { ifAvailable: true }, (granted) => {
          if (granted === null) return resolve(false);
          // The lock is held until this promise settles: on releaseLease or close.
          return new Promise<void>((letGo) => {
            const release = () => {
              letGo();
              return settled.then(() => undefined);
            };
            lock = { owner, expiresAt, release };
            resolve(true);
          });
        })
        .catch((error: unknown) =>
          reject(
            error instanceof Error
              ? error
              : new FailwiseError(`indexedDbStore: Web Locks: ${String(error)}`, { cause: error }),
          ),
        );
    });
  }

  function acquireLock(lockManager: LockManager, owner: string, ttlMs: number, now: number) {
    if (lock === undefined) return takeLock(lockManager, owner, now + ttlMs);
    // This store holds the lock already: hand it between its owners by their ttl, as the record does.
    if (lock.owner !== owner && now < lock.expiresAt) return Promise.resolve(false);
    lock.owner = owner;
    lock.expiresAt = now + ttlMs;
    return Promise.resolve(true);
  }

  async function releaseLock(owner?: string): Promise<void> {
    if (lock !== undefined && (owner === undefined || lock.owner === owner)) {
      const { release } = lock;
      lock = undefined;
      await release();
    }
  }

  function acquireRecord(db: IDBDatabase, owner: string, ttlMs: number, now: number): Promise<boolean> {
    // Readwrite transactions on one store run one at a time, across tabs too: this check-and-set is atomic.
    return transact<boolean>(db, LEASE, 'readwrite', (store, done, fail) => {
      onResult(store.get(LEASE_KEY) as IDBRequest<LeaseRecord | undefined>, fail, (lease) => {
        const free = lease === undefined || lease.owner === owner || lease.expiresAt <= now;
        if (free) store.put({ owner, expiresAt: now + ttlMs } satisfies LeaseRecord, LEASE_KEY);
        done(free);
      });
    }).then((acquired) => {
      if (acquired) held.add(owner);
      return acquired;
    });
  }

  function releaseRecord(db: IDBDatabase, owners: readonly string[]): Promise<void> {
    return transact<void>(db, LEASE, 'readwrite', (store, done, fail) => {
      onResult(store.get(LEASE_KEY) as IDBRequest<LeaseRecord | undefined>, fail, (lease) => {
        if (lease !== undefined && owners.includes(lease.owner)) store.delete(LEASE_KEY);
        done(undefined);
      });
    }).then(() => {
      for (const owner of owners) held.delete(owner);
    });
  }

  return {
    add: (entry) =>
      call('add', (db, who) => {
        checkEntry(who, entry);
        return transact<void>(db, ENTRIES, 'readwrite', (store, done, fail) => {
          onResult(store.index(BY_ID).getKey(entry.id), fail, (key) => {
            if (key !== undefined) return fail(duplicateIdError(who, entry.id));
            store.add(entry);
            done(undefined);
          });
        });
      }),
    update: (entry) =>
      call('update', (db, who) => {
        checkEntry(who, entry);
        return transact<void>(db, ENTRIES, 'readwrite', (store, done, fail) => {
          onResult(store.index(BY_ID).getKey(entry.id), fail, (key) => {
            if (key === undefined) return fail(unknownIdError(who, entry.id));
            // The same key: the entry keeps its place in the order.
            store.put(entry, key);
            done(undefined);
          });
        });
      }),
    remove: (id) =>
      call('remove', (db, who) => {
        checkId(who, id);
        return transact<void>(db, ENTRIES, 'readwrite', (store, done, fail) => {
          onResult(store.index(BY_ID).getKey(id), fail, (key) => {
            if (key !== undefined) store.delete(key);
            done(undefined);
          });
        });
      }),
    get: (id) =>
      call('get', (db, who) => {
        checkId(who, id);
        return transact<OutboxEntry | undefined>(db, ENTRIES, 'readonly', (store, done, fail) => {
          onResult(store.index(BY_ID).get(id) as IDBRequest<OutboxEntry | undefined>, fail, done);
        });
      }),
    list: () =>
      call('list', (db) =>
        transact<OutboxEntry[]>(db, ENTRIES, 'readonly', (store, done, fail) => {
          onResult(store.getAll() as IDBRequest<OutboxEntry[]>, fail, done);
        }),
      ),
    acquireLease: (owner, ttlMs, now) =>
      call('acquireLease', (db, who) => {
        checkLease(who, owner, ttlMs, now);
        return queued(() =>
          locks ? acquireLock(locks, owner, ttlMs, now) : acquireRecord(db, owner, ttlMs, now),
        );
      }),
    releaseLease: (owner) =>
      call('releaseLease', (db) =>
        queued(async () => {
          if (locks) await releaseLock(owner);
          else await releaseRecord(db, [owner]);
        }),
      ),
    close: async () => {
      if (closed) return;
      closed = true;
      // A lease taken through this store is given up, as closing the tab would free its Web Lock. Lease
      // calls already under way finish first, so that none takes the lease after this.
      await leaseQueue;
      await releaseLock();
      if (opening === undefined) return;
      const db = await opening.catch(() => undefined);
      if (db === undefined) return;
      try {
        if (held.size > 0 && !lost) await releaseRecord(db, [...held]);
      } finally {
        db.close();
      }
    },
  };
}
