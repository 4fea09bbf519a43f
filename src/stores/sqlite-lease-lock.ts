import type BetterSqlite3 from 'better-sqlite3';

/**
 * The lease's lock was refused. Two processes asking at the same instant can each meet the other's half-taken
 * lock (one holds a shared lock while the other wants its exclusive one) and both be refused, since the lock
 * never waits (`LeaseLock`). So a refused lock is asked for again, `LOCK_TRIES` times in all, 1 to 5 ms apart
 * (a random pause, so that the two ask at different moments): one of them gets it. A live holder is still
 * refused, after about 10 ms, without blocking the thread.
 */
export const LOCK_BUSY: unique symbol = Symbol('lease lock busy');
export const LOCK_TRIES = 3;

/**
 * The lock that makes the lease die with its holder: an exclusive SQLite lock on a side file
 * (`<path>-lease`), held by a connection of its own for as long as this store holds the lease. SQLite's
 * locks are the operating system's file locks, which the OS drops when the process dies (a crash, a
 * SIGKILL), so another process that can take the lock knows no live process holds the lease, whatever the
 * lease row says. The connection never waits (busy_timeout 0): better-sqlite3 calls block the thread.
 */
export interface LeaseLock {
  /** Takes the lock, or keeps it; false when another connection (a live process, another store) holds it. */
  take(): boolean;
  held(): boolean;
  release(): void;
  close(): void;
}

export function leaseLock(db: BetterSqlite3.Database): LeaseLock {
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
