import { FailwiseError } from '../errors/failwise-error.js';
import type { PostgresPool, PostgresPoolClient } from './postgres-store.js';

/** The layout this code reads and writes; a schema with a higher number was written by a newer failwise. */
const SCHEMA_VERSION = 1;

/** Unquoted-identifier rules, so the quoted name is the one `psql` shows and nothing else can be injected. */
export const SCHEMA_NAME = /^[a-z_][a-z0-9_]{0,62}$/;

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
export const sessionAlive = (key: string) => `EXISTS (
  SELECT 1 FROM pg_locks lk
  WHERE lk.locktype = 'advisory' AND lk.granted AND lk.objsubid = 1
    AND lk.database = (SELECT oid FROM pg_database WHERE datname = current_database())
    AND lk.classid::int8 = (${key} >> 32) AND lk.objid::int8 = (${key} & 4294967295)
)`;

/** Creates the schema and tables on first use, or checks that the existing ones are a layout this reads. */
export async function migrate(pool: PostgresPool, schema: string): Promise<void> {
  const s = `"${schema}"`;
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
