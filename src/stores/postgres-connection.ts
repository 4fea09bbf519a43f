import { FailwiseError } from '../errors/failwise-error.js';
import { loadOptionalPeer, messageOf } from './optional-peer.js';
import { migrate } from './postgres-schema.js';
import type { PostgresPool, PostgresPoolClient } from './postgres-store.js';
import { closedError } from './store-input.js';

interface Handle {
  pool: PostgresPool;
  /** The checked-out connection whose session holds the lock on `sessionKey`, while it works. */
  session: PostgresPoolClient | undefined;
}

/** Where the store's pool comes from: the app's own, or one made from a connection string with pg. */
export type PoolSource = { pool: PostgresPool } | { connectionString: string; load: () => Promise<unknown> };

/**
 * A postgresStore's way to its database: opened on the first call (the schema migrated, the session lock
 * taken), reopened after a failed open, closed once.
 */
export class PostgresConnection {
  /** The schema, quoted for statements. */
  readonly s: string;
  /** This store's session lock key: a live session holding it says the store is alive. */
  readonly sessionKey = randomSessionKey();
  /** Owners that hold the lease through this store: close() gives it up. */
  readonly holders = new Set<string>();
  #opening: Promise<Handle> | undefined;
  #closed = false;

  constructor(
    readonly schema: string,
    private readonly source: PoolSource,
  ) {
    this.s = `"${schema}"`;
  }

  /**
   * Runs one of the statements a runner sends for every entry as a named statement, so that the server parses
   * and plans it once per connection rather than on every call (planning the claim took about as long as running
   * it). The name carries the schema: the text differs from one schema to another.
   */
  prepared(pool: PostgresPool, name: string, text: string, values: unknown[]) {
    return pool.query({ name: `failwise_${this.schema}_${name}`, text, values });
  }

  /** Runs `fn` with the store open; opens it on the first call, and rejects once the store is closed. */
  async call<T>(method: string, fn: (pool: PostgresPool, who: string) => Promise<T>): Promise<T> {
    const who = `postgresStore.${method}`;
    if (this.#closed) throw closedError(who);
    try {
      // A failed open is not kept: the next call opens again (the server may be up by then).
      const handle = await (this.#opening ??= this.#open().catch((error: unknown) => {
        this.#opening = undefined;
        throw error;
      }));
      if (this.#closed) throw closedError(who);
      await this.#holdSession(handle);
      return await fn(handle.pool, who);
    } catch (error) {
      if (error instanceof FailwiseError) throw error;
      // Refused connections, a lost server, a full disk: say which store call failed.
      throw new FailwiseError(`${who}: ${messageOf(error)}`, { cause: error });
    }
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    if (this.#opening === undefined) return;
    const handle = await this.#opening.catch(() => undefined);
    if (handle === undefined) return;
    try {
      // Leases taken through this store are given up, as closing a tab frees its Web Lock. Its claims end with
      // its session (the lock is released below), so other runners may send them at once.
      if (this.holders.size > 0)
        await handle.pool.query(`DELETE FROM ${this.s}.lease WHERE id = 1 AND owner = ANY($1::text[])`, [
          [...this.holders],
        ]);
    } finally {
      const session = handle.session;
      handle.session = undefined;
      if (session) {
        await session.query('SELECT pg_advisory_unlock_all()').catch(() => undefined);
        session.release();
      }
      if (!('pool' in this.source)) await handle.pool.end();
    }
  }

  async #open(): Promise<Handle> {
    const { source } = this;
    const pool =
      'pool' in source ? source.pool : ownPool(await loadPool(source.load), source.connectionString);
    try {
      await migrate(pool, this.schema);
      const handle: Handle = { pool, session: undefined };
      await this.#holdSession(handle);
      return handle;
    } catch (error) {
      if (!('pool' in source)) await pool.end().catch(() => undefined);
      throw error;
    }
  }

  /** Checks out the connection that holds this store's session lock, once (and again after it was lost). */
  async #holdSession(handle: Handle): Promise<void> {
    if (handle.session) return;
    const client = await handle.pool.connect();
    try {
      const { rows } = await client.query('SELECT pg_try_advisory_lock($1::int8) AS locked', [
        this.sessionKey,
      ]);
      if ((rows[0] as { locked: boolean }).locked !== true)
        throw new FailwiseError('postgresStore: another session holds this store\u2019s random lock key');
    } catch (error) {
      client.release(true);
      throw error;
    }
    // A lost connection drops the lock; the next call checks out a new one and takes the lock again.
    client.on('error', () => {
      if (handle.session !== client) return;
      handle.session = undefined;
      client.release(true);
    });
    handle.session = client;
  }
}

/** A random key for this store's session lock, within int8 and well away from small hand-picked keys. */
function randomSessionKey(): string {
  const [high, low] = globalThis.crypto.getRandomValues(new Uint32Array(2));
  return ((BigInt((high! & 0x3fffffff) | 0x10000) << 32n) | BigInt(low!)).toString();
}

/** pg's Pool constructor, or a FailwiseError saying how to install pg. */
async function loadPool(load: () => Promise<unknown>): Promise<new (config: object) => PostgresPool> {
  const loaded = await loadOptionalPeer(load, 'postgresStore', { name: 'pg', install: 'pg@8' });
  const module = loaded as { default?: { Pool?: unknown }; Pool?: unknown } | null;
  const Pool = module?.default?.Pool ?? module?.Pool;
  if (typeof Pool !== 'function') throw new FailwiseError('postgresStore: pg loaded, but it has no Pool');
  return Pool as new (config: object) => PostgresPool;
}

/** A pool of the store's own. An idle connection the server ends is dropped by pg, not thrown at the app. */
function ownPool(Pool: new (config: object) => PostgresPool, connectionString: string): PostgresPool {
  const pool = new Pool({ connectionString, application_name: 'failwise' });
  (pool as unknown as { on(event: 'error', listener: () => void): void }).on('error', () => undefined);
  return pool;
}
