import { ArgumentError } from '../errors/argument-error.js';
import { FailwiseError } from '../errors/failwise-error.js';
import { loadOptionalPeer, messageOf } from './optional-peer.js';
import type { ClaimAnswer, ClaimRequest, OutboxClaims, OutboxEntry, OutboxStore } from './outbox-store.js';
import {
  checkEntry,
  checkId,
  checkLease,
  closedError,
  duplicateIdError,
  unknownIdError,
} from './store-input.js';

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

/** The layout this code reads and writes; a schema with a higher number was written by a newer failwise. */
const SCHEMA_VERSION = 1;

/** Unquoted-identifier rules, so the quoted name is the one `psql` shows and nothing else can be injected. */
const SCHEMA_NAME = /^[a-z_][a-z0-9_]{0,62}$/;

const schemaV1 = (s: string) => `
  CREATE TABLE ${s}.outbox (
    seq bigserial PRIMARY KEY,          -- insertion order; a sequence never hands out a number twice
    id text NOT NULL UNIQUE,
    entry text NOT NULL,                -- the entry as JSON (a string body included), without a bytes body
    body bytea,                         -- request.body when it is a Uint8Array, else NULL
    status text NOT NULL,               -- these columns copy the entry's fields the claim queries read
    order_key text,
    attempts integer NOT NULL,
    next_attempt_at double precision NOT NULL,
    server_wait boolean NOT NULL,       -- the last failure carried a Retry-After: flush() does not hurry it
    claimed_by text,                    -- the runner that claimed it for sending, until claim_until
    claim_session bigint,               -- that runner's session lock key: the claim dies with its session
    claim_until double precision
  );
  CREATE INDEX outbox_pending_order ON ${s}.outbox (order_key, seq) WHERE status = 'pending';
  CREATE INDEX outbox_claimed_by ON ${s}.outbox (claimed_by) WHERE claimed_by IS NOT NULL;
  CREATE TABLE ${s}.lease (
    id integer PRIMARY KEY CHECK (id = 1), -- one row at most: one lease per schema
    owner text NOT NULL,
    expires_at double precision NOT NULL,
    session bigint NOT NULL
  );
`;

/**
 * Whether the store whose session lock key is `key` (a column) is still connected: its session holds the
 * advisory lock on that key. PostgreSQL drops a session's advisory locks when the session ends, which it does
 * when the process dies (its connections close) or the connection is lost.
 */
const sessionAlive = (key: string) => `EXISTS (
  SELECT 1 FROM pg_locks lk
  WHERE lk.locktype = 'advisory' AND lk.granted AND lk.objsubid = 1
    AND lk.database = (SELECT oid FROM pg_database WHERE datname = current_database())
    AND lk.classid::int8 = (${key} >> 32) AND lk.objid::int8 = (${key} & 4294967295)
)`;

/**
 * A row as read: the `attempts` column is the count, since a claim counts an attempt by setting that column
 * alone (the entry's JSON keeps the count of its last full write).
 */
type Row = { entry: string; body: Uint8Array | null; attempts: number };

const importPg = (): Promise<unknown> => import('pg');

/** pg's Pool constructor, or a FailwiseError saying how to install pg. */
async function loadPool(load: () => Promise<unknown>): Promise<new (config: object) => PostgresPool> {
  const loaded = await loadOptionalPeer(load, 'postgresStore', { name: 'pg', install: 'pg@8' });
  const module = loaded as { default?: { Pool?: unknown }; Pool?: unknown } | null;
  const Pool = module?.default?.Pool ?? module?.Pool;
  if (typeof Pool !== 'function') throw new FailwiseError('postgresStore: pg loaded, but it has no Pool');
  return Pool as new (config: object) => PostgresPool;
}

/** The entry's JSON (a string body stays in it: JSON escapes a NUL, which a text column refuses) and its bytes. */
function toRow(entry: OutboxEntry): [string, Uint8Array | null] {
  const { body } = entry.request;
  if (!(body instanceof Uint8Array)) return [JSON.stringify(entry), null];
  const { body: _, ...request } = entry.request;
  return [JSON.stringify({ ...entry, request }), body];
}

function fromRow({ entry, body, attempts }: Row): OutboxEntry {
  const parsed = JSON.parse(entry) as OutboxEntry;
  parsed.attempts = attempts;
  // pg returns a Node Buffer; a plain Uint8Array copy is what was stored.
  if (body !== null) parsed.request.body = new Uint8Array(body);
  return parsed;
}

/** The column values an entry's write sets, after id, entry and body: $4 to $8. */
function columnsOf(entry: OutboxEntry): unknown[] {
  return [
    entry.status,
    entry.orderKey ?? null,
    entry.attempts,
    entry.nextAttemptAt,
    entry.failures[entry.failures.length - 1]?.retryAfterMs !== undefined,
  ];
}

/** A row the claim statement answers: the claimed entry, or the row as it was, with what tells why not. */
type ClaimRow = Row & {
  claimed: boolean;
  status: string;
  next_attempt_at: number;
  server_wait: boolean;
  /** It has an orderKey. */
  keyed: boolean;
  /** When another live runner's claim on it ends; null when none holds it. */
  held_until: number | null;
  /** The first earlier pending entry of its order group: its next attempt time, and its live claim's end. */
  earlier: [number, number | null] | null;
};

/**
 * Why an entry could not be claimed, from the row as the claim statement saw it. A row that looks claimable
 * was being written by another runner when the claim skipped it: taken until now, so the runner asks again
 * shortly (after CLAIM_RECHECK_MIN_MS).
 */
function whyNotClaimed(row: ClaimRow | undefined, request: ClaimRequest): ClaimAnswer {
  const { attempts, now, order, ignoreBackoff } = request;
  if (row === undefined) return { status: 'missing' };
  if (row.status !== 'pending') return { status: 'stale', stored: fromRow(row) };
  // Held by another runner: taken, even when it counted an attempt since. Its claim ends with a write (or the
  // entry's removal), so the next claim learns the stored entry then, and none is spent on it meanwhile.
  if (row.held_until !== null) return { status: 'taken', until: row.held_until };
  if (row.attempts !== attempts - 1) return { status: 'stale', stored: fromRow(row) };
  // Not due in the store: another runner set a later time (backoff, or a server's Retry-After).
  if (row.next_attempt_at > now && (!ignoreBackoff || row.server_wait))
    return { status: 'stale', stored: fromRow(row) };
  if ((order === 'fifo' || row.keyed) && row.earlier !== null) {
    const [nextAttemptAt, claimUntil] = row.earlier;
    return { status: 'taken', until: Math.max(now, nextAttemptAt, claimUntil ?? now) };
  }
  return { status: 'taken', until: now };
}

/** A random key for this store's session lock, within int8 and well away from small hand-picked keys. */
function randomSessionKey(): string {
  const [high, low] = globalThis.crypto.getRandomValues(new Uint32Array(2));
  return ((BigInt((high! & 0x3fffffff) | 0x10000) << 32n) | BigInt(low!)).toString();
}

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
  const givenPool = typeof connection === 'string' ? undefined : connection;
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
  const s = `"${schema}"`;
  /**
   * Runs one of the statements a runner sends for every entry as a named statement, so that the server parses
   * and plans it once per connection rather than on every call (planning the claim took about as long as running
   * it). The name carries the schema: the text differs from one schema to another.
   */
  const prepared = (pool: PostgresPool, name: string, text: string, values: unknown[]) =>
    pool.query({ name: `failwise_${schema}_${name}`, text, values });

  interface Handle {
    pool: PostgresPool;
    /** The checked-out connection whose session holds the lock on `sessionKey`, while it works. */
    session: PostgresPoolClient | undefined;
  }
  let opening: Promise<Handle> | undefined;
  let closed = false;
  const sessionKey = randomSessionKey();
  /** Owners that hold the lease through this store: close() gives it up. */
  const holders = new Set<string>();

  /** Creates the schema and tables on first use, or checks that the existing ones are a layout this reads. */
  async function migrate(pool: PostgresPool): Promise<void> {
    await transaction(pool, async (client) => {
      // Two processes starting on a new database would both create the tables: the first one waits here.
      await client.query('SELECT pg_advisory_xact_lock(hashtext($1))', [`failwise-schema:${schema}`]);
      await client.query(`CREATE SCHEMA IF NOT EXISTS ${s}`);
      await client.query(
        `CREATE TABLE IF NOT EXISTS ${s}.schema_version (id integer PRIMARY KEY CHECK (id = 1), version integer NOT NULL)`,
      );
      const { rows } = await client.query(`SELECT version FROM ${s}.schema_version WHERE id = 1`);
      const version = (rows[0] as { version: number } | undefined)?.version;
      if (version === undefined) {
        await client.query(schemaV1(s));
        await client.query(`INSERT INTO ${s}.schema_version (id, version) VALUES (1, $1)`, [SCHEMA_VERSION]);
      } else if (version > SCHEMA_VERSION) {
        throw new FailwiseError(
          `postgresStore: schema ${JSON.stringify(schema)} has version ${version}, written by a newer failwise; this one reads version ${SCHEMA_VERSION}`,
        );
      }
      // Later versions add their upgrades here, from `version` up, in this same transaction.
    });
  }

  /** Checks out the connection that holds this store's session lock, once (and again after it was lost). */
  async function holdSession(handle: Handle): Promise<void> {
    if (handle.session) return;
    const client = await handle.pool.connect();
    try {
      const { rows } = await client.query('SELECT pg_try_advisory_lock($1::int8) AS locked', [sessionKey]);
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

  async function open(): Promise<Handle> {
    const pool = givenPool ?? ownPool(await loadPool(load), connection as string);
    try {
      await migrate(pool);
      const handle: Handle = { pool, session: undefined };
      await holdSession(handle);
      return handle;
    } catch (error) {
      if (!givenPool) await pool.end().catch(() => undefined);
      throw error;
    }
  }

  /** Runs `fn` with the store open; opens it on the first call, and rejects once the store is closed. */
  async function call<T>(method: string, fn: (handle: Handle, who: string) => Promise<T>): Promise<T> {
    const who = `postgresStore.${method}`;
    if (closed) throw closedError(who);
    let handle: Handle;
    try {
      // A failed open is not kept: the next call opens again (the server may be up by then).
      handle = await (opening ??= open().catch((error: unknown) => {
        opening = undefined;
        throw error;
      }));
      if (closed) throw closedError(who);
      await holdSession(handle);
      return await fn(handle, who);
    } catch (error) {
      if (error instanceof FailwiseError) throw error;
      // Refused connections, a lost server, a full disk: say which store call failed.
      throw new FailwiseError(`${who}: ${messageOf(error)}`, { cause: error });
    }
  }

  /**
   * Whether the claim on a row (its `claimed_by`, `claim_until`, `claim_session` columns) stops `$owner` (a
   * parameter) at `$now`: another runner's claim that has not run out and whose session is alive. The cheap
   * tests come first, so pg_locks is read only for a live claim of another runner.
   */
  const heldByAnother = (owner: string, now: string) => `CASE
    WHEN claimed_by IS NULL OR claimed_by = ${owner} OR claim_until <= ${now} OR claim_session IS NULL THEN false
    ELSE ${sessionAlive('claim_session')} END`;

  /**
   * One statement, one round trip, claims an entry that can be claimed: pending with the attempts the caller
   * knew, claimed by nobody else, due (or hurried by flush(), unless its server asked for the wait), and first
   * of its order group. SKIP LOCKED: a row another runner is claiming or writing right now is not waited for.
   * Claimed, it answers the entry as stored now (its attempt counted), so the runner sends it without reading
   * it again; not claimed, the row as it was before the statement, to tell why (`whyNotClaimed`).
   */
  async function claim(pool: PostgresPool, request: ClaimRequest): Promise<ClaimAnswer> {
    const { id, owner, attempts, claimMs, now, order, ignoreBackoff } = request;
    const { rows } = await prepared(
      pool,
      'claim',
      `WITH target AS (
         SELECT o.seq FROM ${s}.outbox o
         WHERE o.id = $1 AND o.status = 'pending' AND o.attempts = $2::int - 1
           AND NOT ${heldByAnother('$3::text', '$4::float8')}
           AND (o.next_attempt_at <= $4 OR ($5::boolean AND NOT o.server_wait))
           AND ($6::text = 'per-key' AND o.order_key IS NULL OR NOT EXISTS (
             SELECT 1 FROM ${s}.outbox e
             WHERE e.seq < o.seq AND e.status = 'pending' AND ($6 = 'fifo' OR e.order_key = o.order_key)))
         FOR UPDATE OF o SKIP LOCKED
       ), claimed AS (
         UPDATE ${s}.outbox u SET attempts = $2, claimed_by = $3, claim_session = $7::int8, claim_until = $8
         FROM target WHERE u.seq = target.seq
         RETURNING u.entry, u.body, u.attempts
       )
       SELECT true AS claimed, entry, body, attempts, NULL::text AS status, NULL::float8 AS next_attempt_at,
              NULL::boolean AS server_wait, NULL::boolean AS keyed, NULL::float8 AS held_until,
              NULL::float8[] AS earlier
       FROM claimed
       UNION ALL
       SELECT false, o.entry, o.body, o.attempts, o.status, o.next_attempt_at, o.server_wait,
              o.order_key IS NOT NULL, CASE WHEN ${heldByAnother('$3', '$4')} THEN o.claim_until END,
              (SELECT ARRAY[e.next_attempt_at,
                            CASE WHEN e.claim_session IS NOT NULL AND ${sessionAlive('e.claim_session')}
                                 THEN e.claim_until END]
               FROM ${s}.outbox e
               WHERE e.seq < o.seq AND e.status = 'pending' AND ($6 = 'fifo' OR e.order_key = o.order_key)
               ORDER BY e.seq LIMIT 1)
       FROM ${s}.outbox o WHERE o.id = $1 AND NOT EXISTS (SELECT 1 FROM claimed)`,
      [id, attempts, owner, now, ignoreBackoff, order, sessionKey, now + claimMs],
    );
    const row = rows[0] as ClaimRow | undefined;
    if (row?.claimed) return { status: 'claimed', stored: fromRow(row) };
    return whyNotClaimed(row, request);
  }

  /** Inserts a new entry, claimed for `claim.owner` when given. */
  async function insert(
    handle: Handle,
    who: string,
    entry: OutboxEntry,
    claim?: { owner: string; until: number },
  ): Promise<void> {
    const result = await handle.pool.query(
      `INSERT INTO ${s}.outbox (id, entry, body, status, order_key, attempts, next_attempt_at, server_wait,
         claimed_by, claim_session, claim_until)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10::int8, $11) ON CONFLICT (id) DO NOTHING`,
      [
        entry.id,
        ...toRow(entry),
        ...columnsOf(entry),
        claim?.owner ?? null,
        claim ? sessionKey : null,
        claim?.until ?? null,
      ],
    );
    if (result.rowCount === 0) throw duplicateIdError(who, entry.id);
  }

  const claims: OutboxClaims = {
    add: (entry, owner, claimMs, now) =>
      call('claims.add', async (handle, who) => {
        checkEntry(who, entry);
        checkLease(who, owner, claimMs, now);
        await insert(handle, who, entry, { owner, until: now + claimMs });
      }),
    claim: (request) =>
      call('claims.claim', (handle, who) => {
        checkId(who, request?.id);
        checkLease(who, request.owner, request.claimMs, request.now);
        if (!Number.isInteger(request.attempts) || request.attempts < 1)
          throw new ArgumentError(
            who,
            'attempts',
            `expected an integer >= 1, got ${String(request.attempts)}`,
          );
        return claim(handle.pool, request);
      }),
    heldElsewhere: (owner, now) =>
      call('claims.heldElsewhere', async (handle, who) => {
        checkLease(who, owner, 1, now);
        const { rows } = await prepared(
          handle.pool,
          'held_elsewhere',
          `SELECT id, claim_until AS until FROM ${s}.outbox
           WHERE claimed_by IS NOT NULL AND claimed_by <> $1 AND claim_until > $2 AND status = 'pending'
             AND ${sessionAlive('claim_session')}`,
          [owner, now],
        );
        return rows as Array<{ id: string; until: number }>;
      }),
    gone: (ids) =>
      call('claims.gone', async (handle, who) => {
        if (!Array.isArray(ids))
          throw new ArgumentError(who, 'ids', `expected an array of ids, got ${typeof ids}`);
        for (const id of ids) checkId(who, id);
        if (ids.length === 0) return [];
        const { rows } = await prepared(
          handle.pool,
          'gone',
          `SELECT asked.id FROM unnest($1::text[]) WITH ORDINALITY AS asked (id, n)
           WHERE NOT EXISTS (SELECT 1 FROM ${s}.outbox o WHERE o.id = asked.id) ORDER BY asked.n`,
          [ids],
        );
        return (rows as Array<{ id: string }>).map((row) => row.id);
      }),
    renew: (owner, claimMs, now) =>
      call('claims.renew', async (handle, who) => {
        checkLease(who, owner, claimMs, now);
        await handle.pool.query(
          `UPDATE ${s}.outbox SET claim_until = $2, claim_session = $3::int8 WHERE claimed_by = $1`,
          [owner, now + claimMs, sessionKey],
        );
      }),
    releaseAll: (owner) =>
      call('claims.releaseAll', async (handle) => {
        await handle.pool.query(
          `UPDATE ${s}.outbox SET claimed_by = NULL, claim_session = NULL, claim_until = NULL WHERE claimed_by = $1`,
          [owner],
        );
      }),
  };

  return {
    claims,
    add: (entry) =>
      call('add', async (handle, who) => {
        checkEntry(who, entry);
        await insert(handle, who, entry);
      }),
    // A write ends the entry's claim: it is what a runner does when its send is over.
    update: (entry) =>
      call('update', async (handle, who) => {
        checkEntry(who, entry);
        const result = await handle.pool.query(
          `UPDATE ${s}.outbox SET entry = $2, body = $3, status = $4, order_key = $5, attempts = $6,
             next_attempt_at = $7, server_wait = $8, claimed_by = NULL, claim_session = NULL, claim_until = NULL
           WHERE id = $1`,
          [entry.id, ...toRow(entry), ...columnsOf(entry)],
        );
        if (result.rowCount === 0) throw unknownIdError(who, entry.id);
      }),
    remove: (id) =>
      call('remove', async (handle, who) => {
        checkId(who, id);
        await prepared(handle.pool, 'remove', `DELETE FROM ${s}.outbox WHERE id = $1`, [id]);
      }),
    get: (id) =>
      call('get', async (handle, who) => {
        checkId(who, id);
        const { rows } = await prepared(
          handle.pool,
          'get',
          `SELECT entry, body, attempts FROM ${s}.outbox WHERE id = $1`,
          [id],
        );
        return rows[0] === undefined ? undefined : fromRow(rows[0] as Row);
      }),
    list: () =>
      call('list', async (handle) => {
        const { rows } = await handle.pool.query(
          `SELECT entry, body, attempts FROM ${s}.outbox ORDER BY seq`,
        );
        return (rows as Row[]).map(fromRow);
      }),
    acquireLease: (owner, ttlMs, now) =>
      call('acquireLease', async (handle, who) => {
        checkLease(who, owner, ttlMs, now);
        // A free lease, our own, an expired one, or one whose holder's session is gone: one statement, so of two
        // racing stores the second sees the first one's row.
        const result = await handle.pool.query(
          `INSERT INTO ${s}.lease AS held (id, owner, expires_at, session) VALUES (1, $1, $2, $4::int8)
           ON CONFLICT (id) DO UPDATE SET owner = excluded.owner, expires_at = excluded.expires_at, session = excluded.session
           WHERE held.owner = excluded.owner OR held.expires_at <= $3 OR NOT ${sessionAlive('held.session')}`,
          [owner, now + ttlMs, now, sessionKey],
        );
        const held = result.rowCount === 1;
        if (held) holders.add(owner);
        return held;
      }),
    releaseLease: (owner) =>
      call('releaseLease', async (handle) => {
        await handle.pool.query(`DELETE FROM ${s}.lease WHERE id = 1 AND owner = $1`, [owner]);
        holders.delete(owner);
      }),
    close: async () => {
      if (closed) return;
      closed = true;
      if (opening === undefined) return;
      const handle = await opening.catch(() => undefined);
      if (handle === undefined) return;
      try {
        // Leases taken through this store are given up, as closing a tab frees its Web Lock. Its claims end with
        // its session (the lock is released below), so other runners may send them at once.
        if (holders.size > 0)
          await handle.pool.query(`DELETE FROM ${s}.lease WHERE id = 1 AND owner = ANY($1::text[])`, [
            [...holders],
          ]);
      } finally {
        const session = handle.session;
        handle.session = undefined;
        if (session) {
          await session.query('SELECT pg_advisory_unlock_all()').catch(() => undefined);
          session.release();
        }
        if (!givenPool) await handle.pool.end();
      }
    },
  };
}

/** A pool of the store's own. An idle connection the server ends is dropped by pg, not thrown at the app. */
function ownPool(Pool: new (config: object) => PostgresPool, connectionString: string): PostgresPool {
  const pool = new Pool({ connectionString, application_name: 'failwise' });
  (pool as unknown as { on(event: 'error', listener: () => void): void }).on('error', () => undefined);
  return pool;
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

/** Runs `fn` in one transaction on a client of `pool`: committed when it resolves, rolled back when it throws. */
async function transaction<T>(
  pool: PostgresPool,
  fn: (client: PostgresPoolClient) => Promise<T>,
): Promise<T> {
  const client = await pool.connect();
  let broken: Error | undefined;
  try {
    await client.query('BEGIN');
    const result = await fn(client);
    await client.query('COMMIT');
    return result;
  } catch (error) {
    await client.query('ROLLBACK').catch((rollback: unknown) => {
      // A connection that cannot roll back is not given back to the pool for reuse.
      broken =
        rollback instanceof Error
          ? rollback
          : new FailwiseError(`postgresStore: ROLLBACK failed: ${String(rollback)}`, { cause: rollback });
    });
    throw error;
  } finally {
    client.release(broken ?? false);
  }
}
