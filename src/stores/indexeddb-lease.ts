import { FailwiseError } from '../errors/failwise-error.js';
import { LEASE, LEASE_KEY, onResult, transact, type LeaseRecord } from './indexeddb-database.js';

/** A lease held through Web Locks: the lock is ours until `release` is called, or the page goes away. */
interface HeldLock {
  owner: string;
  expiresAt: number;
  /** Lets the lock go; resolves once it is free, so that another tab asking next gets it. */
  release: () => Promise<void>;
}

/**
 * An indexedDbStore's lease: a Web Lock where `locks` is given, else a record in the database. Lease calls run
 * one after another, so two of them never both ask for the Web Lock.
 */
export class IndexedDbLease {
  #lock: HeldLock | undefined;
  /** Owners that took the lease record through this store: close() gives it up for them. */
  readonly #held = new Set<string>();
  #queue: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly locks: LockManager | undefined,
    private readonly lockName: string,
  ) {}

  acquire(db: IDBDatabase, owner: string, ttlMs: number, now: number): Promise<boolean> {
    const { locks } = this;
    return this.#queued(() =>
      locks ? this.#acquireLock(locks, owner, ttlMs, now) : this.#acquireRecord(db, owner, ttlMs, now),
    );
  }

  release(db: IDBDatabase, owner: string): Promise<void> {
    return this.#queued(async () => {
      if (this.locks) await this.#releaseLock(owner);
      else await this.#releaseRecord(db, [owner]);
    });
  }

  /** Lets the Web Lock go once the lease calls already under way finish, so that none takes it after this. */
  async settle(): Promise<void> {
    await this.#queue;
    await this.#releaseLock();
  }

  /** Gives up the lease record for the owners that took it through this store. */
  async releaseRecords(db: IDBDatabase): Promise<void> {
    if (this.#held.size > 0) await this.#releaseRecord(db, [...this.#held]);
  }

  /** `fn` after every lease call made before it. */
  #queued<T>(fn: () => Promise<T>): Promise<T> {
    const run = this.#queue.then(fn, fn);
    this.#queue = run.catch(() => undefined);
    return run;
  }

  /** Asks for the Web Lock without waiting: true when this store now holds it. */
  #takeLock(lockManager: LockManager, owner: string, expiresAt: number): Promise<boolean> {
    return new Promise<boolean>((resolve, reject) => {
      // The request settles once the lock is free again (or was not granted).
      const settled: Promise<unknown> = lockManager
        .request(this.lockName, { ifAvailable: true }, (granted) => {
          if (granted === null) return resolve(false);
          // The lock is held until this promise settles: on releaseLease or close.
          return new Promise<void>((letGo) => {
            const release = () => {
              letGo();
              return settled.then(() => undefined);
            };
            this.#lock = { owner, expiresAt, release };
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

  #acquireLock(lockManager: LockManager, owner: string, ttlMs: number, now: number): Promise<boolean> {
    const lock = this.#lock;
    if (lock === undefined) return this.#takeLock(lockManager, owner, now + ttlMs);
    // This store holds the lock already: hand it between its owners by their ttl, as the record does.
    if (lock.owner !== owner && now < lock.expiresAt) return Promise.resolve(false);
    lock.owner = owner;
    lock.expiresAt = now + ttlMs;
    return Promise.resolve(true);
  }

  async #releaseLock(owner?: string): Promise<void> {
    const lock = this.#lock;
    if (lock !== undefined && (owner === undefined || lock.owner === owner)) {
      this.#lock = undefined;
      await lock.release();
    }
  }

  #acquireRecord(db: IDBDatabase, owner: string, ttlMs: number, now: number): Promise<boolean> {
    // Readwrite transactions on one store run one at a time, across tabs too: this check-and-set is atomic.
    return transact<boolean>(db, LEASE, 'readwrite', (store, done, fail) => {
      onResult(store.get(LEASE_KEY) as IDBRequest<LeaseRecord | undefined>, fail, (lease) => {
        const free = lease === undefined || lease.owner === owner || lease.expiresAt <= now;
        if (free) store.put({ owner, expiresAt: now + ttlMs } satisfies LeaseRecord, LEASE_KEY);
        done(free);
      });
    }).then((acquired) => {
      if (acquired) this.#held.add(owner);
      return acquired;
    });
  }

  #releaseRecord(db: IDBDatabase, owners: readonly string[]): Promise<void> {
    return transact<void>(db, LEASE, 'readwrite', (store, done, fail) => {
      onResult(store.get(LEASE_KEY) as IDBRequest<LeaseRecord | undefined>, fail, (lease) => {
        if (lease !== undefined && owners.includes(lease.owner)) store.delete(LEASE_KEY);
        done(undefined);
      });
    }).then(() => {
      for (const owner of owners) this.#held.delete(owner);
    });
  }
}
