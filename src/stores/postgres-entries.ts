import type { OutboxEntry } from './outbox-store.js';
import type { PostgresConnection } from './postgres-connection.js';
import { columnsOf, fromRow, toRow, type Row } from './postgres-rows.js';
import { sessionAlive } from './postgres-schema.js';
import type { PostgresPool } from './postgres-store.js';
import { duplicateIdError, unknownIdError } from './store-input.js';

/** Inserts a new entry, claimed for `claim.owner` when given. */
export async function insertEntry(
  db: PostgresConnection,
  pool: PostgresPool,
  who: string,
  entry: OutboxEntry,
  claim?: { owner: string; until: number },
): Promise<void> {
  const result = await pool.query(
    `INSERT INTO ${db.s}.outbox (id, entry, body, status, order_key, attempts, next_attempt_at, server_wait,
         claimed_by, claim_session, claim_until)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10::int8, $11) ON CONFLICT (id) DO NOTHING`,
    [
      entry.id,
      ...toRow(entry),
      ...columnsOf(entry),
      claim?.owner ?? null,
      claim ? db.sessionKey : null,
      claim?.until ?? null,
    ],
  );
  if (result.rowCount === 0) throw duplicateIdError(who, entry.id);
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
