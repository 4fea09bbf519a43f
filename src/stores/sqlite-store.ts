import type BetterSqlite3 from 'better-sqlite3';
import { ArgumentError } from '../errors/argument-error.js';

import { FailwiseError } from '../errors/failwise-error.js';
import { loadOptionalPeer, messageOf } from './optional-peer.js';
import type { OutboxEntry, OutboxStore } from './outbox-store.js';
import {
  checkEntry,
  checkId,
  checkLease,
  closedError,
  duplicateIdError,
  unknownIdError,
} from './store-input.js';

/** Options of `sqliteStore`. */
export interface SqliteStoreOptions {
  /**
   * How long a call waits for another process's write to finish before it rejects (SQLite's
   * `busy_timeout`). The wait blocks this thread, as every better-sqlite3 call does.
   * @default 5000
   */
  busyTimeoutMs?: number;
  /**
   * Loads the better-sqlite3 module. Tests use it to stand in for a missing install.
   * @internal
   */
  loadDriver?: () => Promise<unknown>;
}

/** The layout this code reads and writes; a file with a higher number was written by a newer failwise. */
const SCHEMA_VERSION = 1;

const SCHEMA_V1 = `
  CREATE TABLE failwise_outbox (
    seq INTEGER PRIMARY KEY AUTOINCREMENT, -- insertion order; AUTOINCREMENT never reuses a removed seq
    id TEXT NOT NULL UNIQUE,
    entry TEXT NOT NULL,                   -- the entry as JSON, without request.body
    body BLOB                              -- request.body: TEXT for a string, BLOB for bytes, NULL for none
  );
  CREATE TABLE failwise_lease (
    id INTEGER PRIMARY KEY CHECK (id = 1), -- one row at most: one lease per file
    owner TEXT NOT NULL,
    expires_at REAL NOT NULL
  );
`;

// A column declared BLOB has no type affinity, so SQLite keeps each value's own storage class: a string
// body comes back as a string and bytes as bytes, which is how the body round-trips exactly.
type Row = { entry: string; body: string | Uint8Array | null };

const importBetterSqlite3 = (): Promise<unknown> => import('better-sqlite3');

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

/** Creates the tables of a new file, or checks that an existing file's layout is one this code reads. */
function migrate(db: BetterSqlite3.Database, path: string): void {
  // IMMEDIATE takes the write lock first, so two processes opening a new file do not both create it.
  db.transaction(() => {
    db.exec(
      'CREATE TABLE IF NOT EXISTS failwise_schema (id INTEGER PRIMARY KEY CHECK (id = 1), version INTEGER NOT NULL)',
    );
    const row = db.prepare<[], { version: number }>('SELECT version FROM failwise_schema WHERE id = 1').get();
    if (row === undefined) {
      db.exec(SCHEMA_V1);
      db.prepare('INSERT INTO failwise_schema (id, version) VALUES (1, ?)').run(SCHEMA_VERSION);
    } else if (row.version > SCHEMA_VERSION) {
      throw new FailwiseError(
        `sqliteStore: ${JSON.stringify(path)} has schema version ${row.version}, written by a newer failwise; this one reads version ${SCHEMA_VERSION}`,
      );
    }
    // Later versions add their upgrades here, from row.version up, in this same transaction.
  }).immediate();
}

/** The entry as stored: JSON without the body, and the body in its own column. */
function toRow(entry: OutboxEntry): [string, string | Uint8Array | null] {
  const { body, ...request } = entry.request;
  return [JSON.stringify({ ...entry, request }), body ?? null];
}

function fromRow({ entry, body }: Row): OutboxEntry {
  const parsed = JSON.parse(entry) as OutboxEntry;
  // better-sqlite3 returns a Node Buffer; a plain Uint8Array copy is what was stored.
  if (body !== null) parsed.request.body = typeof body === 'string' ? body : new Uint8Array(body);
  return parsed;
}

/** An open file with its statements prepared once. */
function prepare(db: BetterSqlite3.Database) {
  return {
    db,
    // One statement each: SQLite runs every statement in its own transaction, so each change is atomic.
    add: db.prepare<[string, string, string | Uint8Array | null]>(
      'INSERT INTO failwise_outbox (id, entry, body) VALUES (?, ?, ?) ON CONFLICT (id) DO NOTHING',
    ),
    update: db.prepare<[string, string | Uint8Array | null, string]>(
      'UPDATE failwise_outbox SET entry = ?, body = ? WHERE id = ?',
    ),
    remove: db.prepare<[string]>('DELETE FROM failwise_outbox WHERE id = ?'),
    get: db.prepare<[string], Row>('SELECT entry, body FROM failwise_outbox WHERE id = ?'),
    list: db.prepare<[], Row>('SELECT entry, body FROM failwise_outbox ORDER BY seq'),
    // Takes a free or expired lease, or renews our own, in one statement: of two processes racing here,
    // SQLite's write lock lets one run first, and the second then sees the first one's unexpired row.
    acquireLease: db.prepare<[{ owner: string; expiresAt: number; now: number }]>(`
      INSERT INTO failwise_lease (id, owner, expires_at) VALUES (1, @owner, @expiresAt)
      ON CONFLICT (id) DO UPDATE SET owner = excluded.owner, expires_at = excluded.expires_at
      WHERE failwise_lease.owner = excluded.owner OR failwise_lease.expires_at <= @now
    `),
    // The lease is free (no live process holds the lock): whatever row is there was left by a holder that died.
    takeLease: db.prepare<[{ owner: string; expiresAt: number }]>(`
      INSERT INTO failwise_lease (id, owner, expires_at) VALUES (1, @owner, @expiresAt)
      ON CONFLICT (id) DO UPDATE SET owner = excluded.owner, expires_at = excluded.expires_at
    `),
    releaseLease: db.prepare<[string]>('DELETE FROM failwise_lease WHERE id = 1 AND owner = ?'),
  };
}

type Handle = ReturnType<typeof prepare> & { lock: LeaseLock | undefined };

/**
 * The lease's lock was refused. Two processes asking at the same instant can each meet the other's half-taken
 * lock (one holds a shared lock while the other wants its exclusive one) and both be refused, since the lock
 * never waits (`LeaseLock`). So a refused lock is asked for again, `LOCK_TRIES` times in all, 1 to 5 ms apart
 * (a random pause, so that the two ask at different moments): one of them gets it. A live holder is still
 * refused, after about 10 ms, without blocking the thread.
 */
const LOCK_BUSY: unique symbol = Symbol('lease lock busy');
const LOCK_TRIES = 3;

/**
 * The lock that makes the lease die with its holder: an exclusive SQLite lock on a side file
 * (`<path>-lease`), held by a connection of its own for as long as this store holds the lease. SQLite's
 * locks are the operating system's file locks, which the OS drops when the process dies (a crash, a
 * SIGKILL), so another process that can take the lock knows no live process holds the lease, whatever the
 * lease row says. The connection never waits (busy_timeout 0): better-sqlite3 calls block the thread.
 */
interface LeaseLock {
  /** Takes the lock, or keeps it; false when another connection (a live process, another store) holds it. */
  take(): boolean;
  held(): boolean;
  release(): void;
  close(): void;
}

function leaseLock(db: BetterSqlite3.Database): LeaseLock {
  return {
    take() {
      if (db.inTransaction) return true;
      try {
        // EXCLUSIVE in the side file's rollback-journal mode: no other connection may even read it.
        db.exec('BEGIN EXCLUSIVE');
        return true;
      } catch (error) {
        if ((error as { code?: unknown }).code === 'SQLITE_BUSY') return false;
        throw error;
      }
    },
    held: () => db.inTransaction,
    release() {
      if (db.inTransaction) db.exec('ROLLBACK');
    },
    close: () => db.close(),
  };
}

/**
 * An `OutboxStore` in a SQLite file, for Node: durable work survives a crash or a restart, and several
 * processes may share one file (the lease lets one of them send at a time).
 *
 * @remarks
 * Needs `better-sqlite3` version 12 (`npm install better-sqlite3@12`), an optional peer dependency loaded
 * on the first call: importing `failwise/node` works without it, and the first call rejects with a
 * `FailwiseError` saying how to install it. The file is opened in WAL mode with `synchronous = FULL`;
 * each method is one transaction. `path` may be `':memory:'` (not shared, not durable).
 *
 * @example
 * ```ts
 * import { sqliteStore } from 'failwise/node';
 * const client = createFailoverClient({ origins, store: sqliteStore('./outbox.db') });
 * ```
 * @see docs/stores.md
 */
export function sqliteStore(path: string, options: SqliteStoreOptions = {}): OutboxStore {
  if (typeof path !== 'string' || path === '') {
    throw new ArgumentError(
      'sqliteStore',
      'path',
      `expected a file path (a non-empty string), got ${typeof path}`,
    );
  }
  const { busyTimeoutMs = 5000, loadDriver: load = importBetterSqlite3 } = options;
  if (!Number.isInteger(busyTimeoutMs) || busyTimeoutMs < 0) {
    throw new ArgumentError(
      'sqliteStore',
      'options.busyTimeoutMs',
      `expected an integer >= 0, got ${String(busyTimeoutMs)}`,
    );
  }

  let opening: Promise<Handle> | undefined;
  let closed = false;
  /** The owner that holds the lease through this store (and its lock): close() gives it up. */
  let holder: string | undefined;

  /** The side file's connection, never waiting for a lock (see `LeaseLock`). */
  function openLock(Database: typeof BetterSqlite3): LeaseLock {
    return leaseLock(new Database(`${path}-lease`, { timeout: 0 }));
  }

  function acquire(handle: Handle, owner: string, ttlMs: number, now: number): boolean | typeof LOCK_BUSY {
    const expiresAt = now + ttlMs;
    const { lock } = handle;
    if (lock && !lock.held()) {
      // Held by a live process (or another store on this file), or being taken by one: refused, whatever time it is.
      if (!lock.take()) return LOCK_BUSY;
      handle.takeLease.run({ owner, expiresAt });
      holder = owner;
      return true;
    }
    // This store holds the lock (or has none, ':memory:'): between the owners of this one store, the row's
    // time to live decides, as it does in memoryStore.
    if (handle.acquireLease.run({ owner, expiresAt, now }).changes !== 1) return false;
    holder = owner;
    return true;
  }

  function release(handle: Handle, owner: string): void {
    handle.releaseLease.run(owner);
    if (holder !== owner) return;
    holder = undefined;
    handle.lock?.release();
  }

  async function open(): Promise<Handle> {
    const Database = await loadDriver(load);
    let db: BetterSqlite3.Database;
    try {
      // `timeout` is SQLite's busy_timeout: wait for another process's write lock instead of failing.
      db = new Database(path, { timeout: busyTimeoutMs });
    } catch (error) {
      throw new FailwiseError(`sqliteStore: cannot open ${JSON.stringify(path)}: ${messageOf(error)}`, {
        cause: error,
      });
    }
    try {
      // WAL lets readers go on while one process writes, which is what several processes sharing a
      // file need.
      db.pragma('journal_mode = WAL');
      // FULL syncs the WAL on every commit. In WAL mode NORMAL may lose the last commits on a power
      // cut, and an entry whose add() resolved must survive one (CONTRACT rule 10): durability wins.
      db.pragma('synchronous = FULL');
      migrate(db, path);
      return { ...prepare(db), lock: path === ':memory:' ? undefined : openLock(Database) };
    } catch (error) {
      db.close();
      if (error instanceof FailwiseError) throw error;
      throw new FailwiseError(`sqliteStore: cannot open ${JSON.stringify(path)}: ${messageOf(error)}`, {
        cause: error,
      });
    }
  }

  /** Runs `fn` on the open file; opens it on the first call, and rejects once the store is closed. */
  async function call<T>(method: string, fn: (handle: Handle, who: string) => T): Promise<T> {
    const who = `sqliteStore.${method}`;
    if (closed) throw closedError(who);
    // A failed open is not kept: the next call opens again (the directory may exist by then, the disk have room).
    const handle = await (opening ??= open().catch((error: unknown) => {
      opening = undefined;
      throw error;
    }));
    if (closed) throw closedError(who);
    try {
      return fn(handle, who);
    } catch (error) {
      if (error instanceof FailwiseError) throw error;
      // SQLITE_BUSY past the timeout, a full disk, a corrupt file: say which store and call failed.
      throw new FailwiseError(`${who}: ${messageOf(error)}`, { cause: error });
    }
  }

  return {
    add: (entry) =>
      call('add', (handle, who) => {
        checkEntry(who, entry);
        if (handle.add.run(entry.id, ...toRow(entry)).changes === 0) throw duplicateIdError(who, entry.id);
      }),
    update: (entry) =>
      call('update', (handle, who) => {
        checkEntry(who, entry);
        const [json, body] = toRow(entry);
        if (handle.update.run(json, body, entry.id).changes === 0) throw unknownIdError(who, entry.id);
      }),
    remove: (id) =>
      call('remove', (handle, who) => {
        checkId(who, id);
        handle.remove.run(id);
      }),
    get: (id) =>
      call('get', (handle, who) => {
        checkId(who, id);
        const row = handle.get.get(id);
        return row && fromRow(row);
      }),
    list: () => call('list', (handle) => handle.list.all().map(fromRow)),
    acquireLease: async (owner, ttlMs, now) => {
      for (let tries = 1; ; tries++) {
        const got = await call('acquireLease', (handle, who) => {
          checkLease(who, owner, ttlMs, now);
          return acquire(handle, owner, ttlMs, now);
        });
        if (got !== LOCK_BUSY) return got;
        // A store closed meanwhile is not asked again: refused, as at the first try.
        if (tries >= LOCK_TRIES || closed) return false;
        await new Promise((resolve) => setTimeout(resolve, 1 + Math.random() * 4));
      }
    },
    releaseLease: (owner) => call('releaseLease', (handle) => release(handle, owner)),
    close: async () => {
      if (closed) return;
      closed = true;
      if (opening === undefined) return;
      const handle = await opening.catch(() => undefined);
      if (handle === undefined) return;
      try {
        // A lease taken through this store is given up, as closing a browser tab frees its Web Lock.
        if (holder !== undefined) release(handle, holder);
      } finally {
        handle.lock?.close();
        handle.db.close();
      }
    },
  };
}
