import { ArgumentError } from '../errors/argument-error.js';
import type { OutboxStore } from './outbox-store.js';
import { SqliteFile } from './sqlite-file.js';
import { LOCK_BUSY, LOCK_TRIES } from './sqlite-lease-lock.js';
import { fromRow, toRow } from './sqlite-statements.js';
import {
  checkEntry,
  checkId,
  checkLease,
  checkReplaces,
  duplicateIdError,
  isReplaceable,
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

const importBetterSqlite3 = (): Promise<unknown> => import('better-sqlite3');

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

  const file = new SqliteFile(path, busyTimeoutMs, load);
  return {
    // One transaction: the insert and the removal of the entries it replaces commit together, or neither does.
    add: (entry, replaces, abandoned) =>
      file.call('add', (handle, who) => {
        checkEntry(who, entry);
        const listed = checkReplaces(who, entry, replaces);
        return handle.db.transaction((): string[] | false => {
          // In the transaction: a request that gave up before it began has nothing written.
          if (abandoned?.aborted) return false;
          if (handle.add.run(entry.id, ...toRow(entry)).changes === 0) throw duplicateIdError(who, entry.id);
          const removed = listed.filter((r) => {
            const row = handle.get.get(r.id);
            return isReplaceable(row && fromRow(row), r, entry);
          });
          for (const { id } of removed) handle.remove.run(id);
          return removed.map(({ id }) => id);
        })();
      }),
    update: (entry) =>
      file.call('update', (handle, who) => {
        checkEntry(who, entry);
        const [json, body] = toRow(entry);
        if (handle.update.run(json, body, entry.id).changes === 0) throw unknownIdError(who, entry.id);
      }),
    remove: (id) =>
      file.call('remove', (handle, who) => {
        checkId(who, id);
        handle.remove.run(id);
      }),
    get: (id) =>
      file.call('get', (handle, who) => {
        checkId(who, id);
        const row = handle.get.get(id);
        return row && fromRow(row);
      }),
    list: () => file.call('list', (handle) => handle.list.all().map(fromRow)),
    acquireLease: async (owner, ttlMs, now) => {
      for (let tries = 1; ; tries++) {
        const got = await file.call('acquireLease', (handle, who) => {
          checkLease(who, owner, ttlMs, now);
          return file.acquire(handle, owner, ttlMs, now);
        });
        if (got !== LOCK_BUSY) return got;
        // A store closed meanwhile is not asked again: refused, as at the first try.
        if (tries >= LOCK_TRIES || file.closed) return false;
        await new Promise((resolve) => setTimeout(resolve, 1 + Math.random() * 4));
      }
    },
    releaseLease: (owner) => file.call('releaseLease', (handle) => file.release(handle, owner)),
    close: () => file.close(),
  };
}
