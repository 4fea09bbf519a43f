import { FailwiseError } from '../errors/failwise-error.js';
import { messageOf } from './optional-peer.js';
import { closedError } from './store-input.js';

/** The database's version is the layout's version: a newer failwise upgrades it in `onupgradeneeded`. */
export const DB_VERSION = 1;
export const ENTRIES = 'entries';
export const BY_ID = 'by-id';
export const LEASE = 'lease';
export const LEASE_KEY = 'lease';

export interface LeaseRecord {
  owner: string;
  expiresAt: number;
}

export function openDatabase(factory: IDBFactory, name: string): Promise<IDBDatabase> {
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
export type Steps<T> = (
  store: IDBObjectStore,
  done: (value: T) => void,
  fail: (error: Error) => void,
) => void;

/**
 * Runs `steps` in one transaction on `storeName`, resolving once it has committed (so a resolved write is
 * on disk) and rejecting when it aborts.
 */
export function transact<T>(
  db: IDBDatabase,
  storeName: string,
  mode: IDBTransactionMode,
  steps: Steps<T>,
): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    // `strict`: the commit is flushed to disk before `complete` fires; browsers may relax that by default,
    // and an entry whose add() resolved must survive a crash.
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
export function onResult<R>(
  request: IDBRequest<R>,
  fail: (error: Error) => void,
  then: (result: R) => void,
): void {
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

/**
 * An indexedDbStore's database: opened on the first call, let go of when another tab deletes or upgrades it,
 * closed once.
 */
export class IndexedDbConnection {
  #opening: Promise<IDBDatabase> | undefined;
  #closed = false;
  /** Set when another tab deleted or upgraded the database: this connection had to let go of it. */
  #lost = false;

  constructor(
    private readonly factory: IDBFactory | undefined,
    private readonly name: string,
  ) {}

  get closed(): boolean {
    return this.#closed;
  }

  /** Runs `fn` on the open database; opens it on the first call, and rejects once the store is closed. */
  async call<T>(method: string, fn: (db: IDBDatabase, who: string) => T | Promise<T>): Promise<T> {
    const who = `indexedDbStore.${method}`;
    if (this.#closed) throw closedError(who);
    const db = await (this.#opening ??= this.#open());
    if (this.#closed) throw closedError(who);
    if (this.#lost) {
      throw new FailwiseError(
        `${who}: database ${JSON.stringify(this.name)} was deleted or upgraded by another tab; open a new store`,
      );
    }
    return fn(db, who);
  }

  /** Marks the store closed, so that calls from now on reject. */
  markClosed(): void {
    this.#closed = true;
  }

  /** Closes the database, if it was opened, after `last` ran on it (unless another tab took it away). */
  async close(last: (db: IDBDatabase) => Promise<void>): Promise<void> {
    if (this.#opening === undefined) return;
    const db = await this.#opening.catch(() => undefined);
    if (db === undefined) return;
    try {
      if (!this.#lost) await last(db);
    } finally {
      db.close();
    }
  }

  async #open(): Promise<IDBDatabase> {
    if (this.factory === undefined) {
      throw new FailwiseError(
        'indexedDbStore: there is no IndexedDB here (globalThis.indexedDB is undefined); pass options.indexedDB, or use memoryStore()',
      );
    }
    const db = await openDatabase(this.factory, this.name);
    // Another tab wants to delete or upgrade the database: let go of it rather than block that tab.
    db.onversionchange = () => {
      this.#lost = true;
      db.close();
    };
    return db;
  }
}
