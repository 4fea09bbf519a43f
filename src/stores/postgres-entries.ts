import type { OutboxEntry, ReplacedEntry } from './outbox-store.js';
import type { PostgresConnection } from './postgres-connection.js';
import { columnsOf, fromRow, toRow, type Row } from './postgres-rows.js';
import { sessionAlive } from './postgres-schema.js';
import type { PostgresPool } from './postgres-store.js';
import { duplicateIdError, unknownIdError } from './store-input.js';

/**
 * Inserts a new entry, claimed for `claim.owner` when given, and removes the entries it replaces that are still
 * replaceable (`ReplacedEntry`; one another live runner claims is not) in the same statement, only if the insert
 * happened. Answers the ids removed.
 */
export async function insertEntry(
  db: PostgresConnection,
  pool: PostgresPool,
  who: string,
  entry: OutboxEntry,
  claim?: { owner: string; until: number },
  replaces: readonly ReplacedEntry[] = [],
): Promise<string[]> {
  const values = [
    entry.id,
    ...toRow(entry),
    ...columnsOf(entry),
    claim?.owner ?? null,
    claim ? db.sessionKey : null,
    claim?.until ?? null,
  ];
  const insert = `INSERT INTO ${db.s}.outbox (id, entry, body, status, order_key, attempts, next_attempt_at,
         server_wait, claimed_by, claim_session, claim_until)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9::text, $10::int8, $11) ON CONFLICT (id) DO NOTHING`;
  if (replaces.length === 0) {
    const result = await pool.query(insert, values);
    if (result.rowCount === 0) throw duplicateIdError(who, entry.id);
    return [];
  }
  const { rows } = await pool.query(
    `WITH added AS (${insert} RETURNING id),
     gone AS (
       DELETE FROM ${db.s}.outbox o USING unnest($12::text[], $13::int[]) AS r (id, attempts)
       WHERE EXISTS (SELECT 1 FROM added) AND o.id = r.id AND o.status = 'pending' AND o.attempts = r.attempts
         AND (o.entry::jsonb ->> 'replaceKey') = $14
         AND (o.claimed_by IS NULL OR o.claimed_by = $9 OR o.claim_session IS NULL
              OR NOT ${sessionAlive('o.claim_session')})
       RETURNING o.id
     )
     SELECT (SELECT count(*) FROM added)::int AS added, ARRAY(SELECT id FROM gone) AS gone`,
    [...values, replaces.map((r) => r.id), replaces.map((r) => r.attempts), entry.replaceKey],
  );
  const row = rows[0] as { added: number; gone: string[] };
  if (row.added === 0) throw duplicateIdError(who, entry.id);
  return row.gone;
}

/** Writes an entry back. A write ends the entry's claim: it is what a runner does when its send is over. */
export async function updateEntry(
  db: PostgresConnection,
  pool: PostgresPool,
  who: string,
  entry: OutboxEntry,
): Promise<void> {
  const result = await pool.query(
    `UPDATE ${db.s}.outbox SET entry = $2, body = $3, status = $4, order_key = $5, attempts = $6,
             next_attempt_at = $7, server_wait = $8, claimed_by = NULL, claim_session = NULL, claim_until = NULL
           WHERE id = $1`,
    [entry.id, ...toRow(entry), ...columnsOf(entry)],
  );
  if (result.rowCount === 0) throw unknownIdError(who, entry.id);
}

export async function getEntry(
  db: PostgresConnection,
  pool: PostgresPool,
  id: string,
): Promise<OutboxEntry | undefined> {
  const { rows } = await db.prepared(
    pool,
    'get',
    `SELECT entry, body, attempts FROM ${db.s}.outbox WHERE id = $1`,
    [id],
  );
  return rows[0] === undefined ? undefined : fromRow(rows[0] as Row);
}

export async function listEntries(db: PostgresConnection, pool: PostgresPool): Promise<OutboxEntry[]> {
  const { rows } = await pool.query(`SELECT entry, body, attempts FROM ${db.s}.outbox ORDER BY seq`);
  return (rows as Row[]).map(fromRow);
}

/**
 * Takes the lease for `owner`: a free lease, its own, an expired one, or one whose holder's session is gone.
 * One statement, so of two racing stores the second sees the first one's row.
 */
export async function acquireLease(
  db: PostgresConnection,
  pool: PostgresPool,
  owner: string,
  ttlMs: number,
  now: number,
): Promise<boolean> {
  const result = await pool.query(
    `INSERT INTO ${db.s}.lease AS held (id, owner, expires_at, session) VALUES (1, $1, $2, $4::int8)
           ON CONFLICT (id) DO UPDATE SET owner = excluded.owner, expires_at = excluded.expires_at, session = excluded.session
           WHERE held.owner = excluded.owner OR held.expires_at <= $3 OR NOT ${sessionAlive('held.session')}`,
    [owner, now + ttlMs, now, db.sessionKey],
  );
  const held = result.rowCount === 1;
  if (held) db.holders.add(owner);
  return held;
}
