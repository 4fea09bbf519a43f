import { ArgumentError } from '../errors/argument-error.js';
import type { OutboxClaims, OutboxStore } from './outbox-store.js';
import { postgresClaims } from './postgres-claims.js';
import { PostgresConnection } from './postgres-connection.js';
import { acquireLease, getEntry, insertEntry, listEntries, updateEntry } from './postgres-entries.js';
import { SCHEMA_NAME } from './postgres-schema.js';
import { checkEntry, checkId, checkLease, checkReplaces } from './store-input.js';

/** What `postgresStore` needs of a pg `Pool` (pg 8): structural, so `failwise/node` never imports pg's types. */
export interface PostgresPool {
  query(text: string, values?: unknown[]): Promise<{ rows: unknown[]; rowCount: number | null }>;
  /** A named (prepared) statement: the server plans it once per connection. */
  query(statement: {
    name: string;
    text: string;
    values: unknown[];
  }): Promise<{ rows: unknown[]; rowCount: number | null }>;
  connect(): Promise<PostgresPoolClient>;
  end(): Promise<void>;
}

/** A client checked out of a `PostgresPool`. */
export interface PostgresPoolClient {
  query(text: string, values?: unknown[]): Promise<{ rows: unknown[]; rowCount: number | null }>;
  release(error?: Error | boolean): void;
  on(event: 'error', listener: (error: Error) => void): unknown;
}

/** Options of `postgresStore`. */
export interface PostgresStoreOptions {
  /**
   * The schema its tables live in, created on first use: lower-case letters, digits and `_`, starting with a
   * letter or `_`, at most 63 characters. Two apps (or environments) on one database keep apart by schema.
   * @default 'failwise'
   */
  schema?: string;
  /**
   * Loads the pg module when a connection string is given. Tests use it to stand in for a missing install.
   * @internal
   */
  loadDriver?: () => Promise<unknown>;
}

const importPg = (): Promise<unknown> => import('pg');

/**
 * An `OutboxStore` in PostgreSQL, for a fleet of Node services: durable work outlives each machine, and every
 * process sends, each entry claimed by one of them at a time (`claims`).
 *
 * @remarks
 * Needs `pg` version 8 (`npm install pg@8`), an optional peer dependency. Give it a pg `Pool` (the app keeps
 * owning it: `close()` does not end it) or a connection string (the store makes a pool and ends it on
 * `close()`). Its tables are created on first use in `options.schema`; each method is one transaction.
 * While open, the store keeps one of the pool's connections checked out: its session holds an advisory lock
 * that tells other processes this store is alive, so the claims and lease of a process that died are free at
 * once, not when their time runs out.
 *
 * @example
 * ```ts
 * import { postgresStore } from 'failwise/node';
 * const client = createFailoverClient({ origins, store: postgresStore(process.env.DATABASE_URL!) });
 * ```
 * @see docs/stores.md
 */
export function postgresStore(
  connection: PostgresPool | string,
  options: PostgresStoreOptions = {},
): OutboxStore & { readonly claims: OutboxClaims } {
  if (typeof connection === 'string' ? connection === '' : !isPool(connection)) {
    throw new ArgumentError(
      'postgresStore',
      'connection',
      `expected a pg Pool or a connection string, got ${connection === null ? 'null' : typeof connection}`,
    );
  }
  const { schema = 'failwise', loadDriver: load = importPg } = options;
  if (typeof schema !== 'string' || !SCHEMA_NAME.test(schema)) {
    throw new ArgumentError(
      'postgresStore',
      'options.schema',
      `expected a schema name of lower-case letters, digits and _ (not starting with a digit, at most 63), got ${JSON.stringify(schema)}`,
    );
  }
  const db = new PostgresConnection(
    schema,
    typeof connection === 'string' ? { connectionString: connection, load } : { pool: connection },
  );
  const { s } = db;
  return {
    claims: postgresClaims(db),
    add: (entry, replaces, abandoned) =>
      db.call('add', (pool, who): Promise<string[] | false> => {
        checkEntry(who, entry);
        // Asked before the insert: the server's answer to it can come after the request gave up.
        if (abandoned?.aborted) return Promise.resolve(false as const);
        return insertEntry(db, pool, who, entry, undefined, checkReplaces(who, entry, replaces));
      }),
    update: (entry) =>
      db.call('update', async (pool, who) => {
        checkEntry(who, entry);
        await updateEntry(db, pool, who, entry);
      }),
    remove: (id) =>
      db.call('remove', async (pool, who) => {
        checkId(who, id);
        await db.prepared(pool, 'remove', `DELETE FROM ${s}.outbox WHERE id = $1`, [id]);
      }),
    get: (id) =>
      db.call('get', async (pool, who) => {
        checkId(who, id);
        return getEntry(db, pool, id);
      }),
    list: () => db.call('list', (pool) => listEntries(db, pool)),
    acquireLease: (owner, ttlMs, now) =>
      db.call('acquireLease', async (pool, who) => {
        checkLease(who, owner, ttlMs, now);
        return acquireLease(db, pool, owner, ttlMs, now);
      }),
    releaseLease: (owner) =>
      db.call('releaseLease', async (pool) => {
        await pool.query(`DELETE FROM ${s}.lease WHERE id = 1 AND owner = $1`, [owner]);
        db.holders.delete(owner);
      }),
    close: () => db.close(),
  };
}

function isPool(value: unknown): value is PostgresPool {
  const pool = value as Partial<PostgresPool> | null;
  return (
    typeof pool === 'object' &&
    pool !== null &&
    typeof pool.query === 'function' &&
    typeof pool.connect === 'function'
  );
}
