import type BetterSqlite3 from 'better-sqlite3';
import { FailwiseError } from '../errors/failwise-error.js';
import { loadOptionalPeer, messageOf } from './optional-peer.js';
import { LOCK_BUSY, leaseLock, type LeaseLock } from './sqlite-lease-lock.js';
import { migrate, prepare, type Statements } from './sqlite-statements.js';
import { closedError } from './store-input.js';

export type Handle = Statements & { lock: LeaseLock | undefined };

/**
 * A sqliteStore's file: opened on the first call with its statements prepared, reopened after a failed open,
 * closed once; with the lease this store holds.
 */
export class SqliteFile {
  #opening: Promise<Handle> | undefined;
  #closed = false;
  /** The owner that holds the lease through this store (and its lock): close() gives it up. */
  #holder: string | undefined;

  constructor(
    private readonly path: string,
    private readonly busyTimeoutMs: number,
    private readonly load: () => Promise<unknown>,
  ) {}

  get closed(): boolean {
    return this.#closed;
  }

  /** Runs `fn` on the open file; opens it on the first call, and rejects once the store is closed. */
  async call<T>(method: string, fn: (handle: Handle, who: string) => T): Promise<T> {
    const who = `sqliteStore.${method}`;
    if (this.#closed) throw closedError(who);
    // A failed open is not kept: the next call opens again (the directory may exist by then, the disk have room).
    const handle = await (this.#opening ??= this.#open().catch((error: unknown) => {
      this.#opening = undefined;
      throw error;
    }));
    if (this.#closed) throw closedError(who);
    try {
      return fn(handle, who);
    } catch (error) {
      if (error instanceof FailwiseError) throw error;
      // SQLITE_BUSY past the timeout, a full disk, a corrupt file: say which store and call failed.
      throw new FailwiseError(`${who}: ${messageOf(error)}`, { cause: error });
    }
  }

  acquire(handle: Handle, owner: string, ttlMs: number, now: number): boolean | typeof LOCK_BUSY {
    const expiresAt = now + ttlMs;
    const { lock } = handle;
    if (lock && !lock.held()) {
      // Held by a live process (or another store on this file), or being taken by one: refused, whatever time it is.
      if (!lock.take()) return LOCK_BUSY;
      handle.takeLease.run({ owner, expiresAt });
      this.#holder = owner;
      return true;
    }
    // This store holds the lock (or has none, ':memory:'): between the owners of this one store, the row's
    // time to live decides, as it does in memoryStore.
    if (handle.acquireLease.run({ owner, expiresAt, now }).changes !== 1) return false;
    this.#holder = owner;
    return true;
  }

  release(handle: Handle, owner: string): void {
    handle.releaseLease.run(owner);
    if (this.#holder !== owner) return;
    this.#holder = undefined;
    handle.lock?.release();
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    if (this.#opening === undefined) return;
    const handle = await this.#opening.catch(() => undefined);
    if (handle === undefined) return;
    try {
      // A lease taken through this store is given up, as closing a browser tab frees its Web Lock.
      if (this.#holder !== undefined) this.release(handle, this.#holder);
    } finally {
      handle.lock?.close();
      handle.db.close();
    }
  }

  /**
   * Switches the file to WAL. Two processes creating a new file at once can find it locked: SQLite does not call
   * its busy handler for the lock this switch takes, so it is asked again, 1 to 5 ms apart at random, for about
   * `busyTimeoutMs` in all.
   */
  async #useWal(db: BetterSqlite3.Database): Promise<void> {
    for (let tries = 1; ; tries++) {
      try {
        db.pragma('journal_mode = WAL');
        return;
      } catch (error) {
        const busy = (error as { code?: unknown }).code === 'SQLITE_BUSY';
        if (!busy || tries * 3 >= this.busyTimeoutMs) throw error;
        await new Promise((resolve) => setTimeout(resolve, 1 + Math.random() * 4));
      }
    }
  }

  async #open(): Promise<Handle> {
    const { path } = this;
    const Database = await loadDriver(this.load);
    let db: BetterSqlite3.Database;
    try {
      // `timeout` is SQLite's busy_timeout: wait for another process's write lock instead of failing.
      db = new Database(path, { timeout: this.busyTimeoutMs });
    } catch (error) {
      throw new FailwiseError(`sqliteStore: cannot open ${JSON.stringify(path)}: ${messageOf(error)}`, {
        cause: error,
      });
    }
    try {
      // WAL lets readers go on while one process writes, which is what several processes sharing a
      // file need.
      await this.#useWal(db);
      // FULL syncs the WAL on every commit. In WAL mode NORMAL may lose the last commits on a power
      // cut, and an entry whose add() resolved must survive one: durability wins.
      db.pragma('synchronous = FULL');
      migrate(db, path);
      // The side file's connection never waits for a lock (see `LeaseLock`).
      const lock = path === ':memory:' ? undefined : leaseLock(new Database(`${path}-lease`, { timeout: 0 }));
      return { ...prepare(db), lock };
    } catch (error) {
      db.close();
      if (error instanceof FailwiseError) throw error;
      throw new FailwiseError(`sqliteStore: cannot open ${JSON.stringify(path)}: ${messageOf(error)}`, {
        cause: error,
      });
    }
  }
}

/** better-sqlite3's constructor, or a FailwiseError saying how to install it. */
async function loadDriver(load: () => Promise<unknown>): Promise<typeof BetterSqlite3> {
  const loaded = await loadOptionalPeer(load, 'sqliteStore', {
    name: 'better-sqlite3',
    install: 'better-sqlite3@12',
  });
  const driver = (loaded as { default?: unknown } | null)?.default;
  if (typeof driver !== 'function') {
    throw new FailwiseError(
      'sqliteStore: better-sqlite3 loaded, but its default export is not a constructor',
    );
  }
  return driver as typeof BetterSqlite3;
}
