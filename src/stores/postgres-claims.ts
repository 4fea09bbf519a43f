import { ArgumentError } from '../errors/argument-error.js';
import type { ClaimAnswer, ClaimRequest, OutboxClaims } from './outbox-store.js';
import type { PostgresConnection } from './postgres-connection.js';
import { insertEntry } from './postgres-entries.js';
import { fromRow, whyNotClaimed, type ClaimRow } from './postgres-rows.js';
import { sessionAlive } from './postgres-schema.js';
import type { PostgresPool } from './postgres-store.js';
import { checkEntry, checkId, checkLease, checkReplaces } from './store-input.js';

/** A postgresStore's `claims`: which runner of the fleet sends which entry. */
export function postgresClaims(db: PostgresConnection): OutboxClaims {
  const { s } = db;
  return {
    add: (entry, owner, claimMs, now, replaces, abandoned) =>
      db.call('claims.add', (pool, who): Promise<string[] | false> => {
        checkEntry(who, entry);
        checkLease(who, owner, claimMs, now);
        const listed = checkReplaces(who, entry, replaces);
        if (abandoned?.aborted) return Promise.resolve(false as const);
        return insertEntry(db, pool, who, entry, { owner, until: now + claimMs }, listed);
      }),
    claim: (request) =>
      db.call('claims.claim', (pool, who) => {
        checkId(who, request?.id);
        checkLease(who, request.owner, request.claimMs, request.now);
        if (!Number.isInteger(request.attempts) || request.attempts < 1)
          throw new ArgumentError(
            who,
            'attempts',
            `expected an integer >= 1, got ${String(request.attempts)}`,
          );
        return claimEntry(db, pool, request);
      }),
    heldElsewhere: (owner, now) =>
      db.call('claims.heldElsewhere', async (pool, who) => {
        checkLease(who, owner, 1, now);
        const { rows } = await db.prepared(
          pool,
          'held_elsewhere',
          `SELECT id, claim_until AS until FROM ${s}.outbox
           WHERE claimed_by IS NOT NULL AND claimed_by <> $1 AND claim_until > $2 AND status = 'pending'
             AND ${sessionAlive('claim_session')}`,
          [owner, now],
        );
        return rows as Array<{ id: string; until: number }>;
      }),
    gone: (ids) =>
      db.call('claims.gone', async (pool, who) => {
        if (!Array.isArray(ids))
          throw new ArgumentError(who, 'ids', `expected an array of ids, got ${typeof ids}`);
        for (const id of ids) checkId(who, id);
        if (ids.length === 0) return [];
        const { rows } = await db.prepared(
          pool,
          'gone',
          `SELECT asked.id FROM unnest($1::text[]) WITH ORDINALITY AS asked (id, n)
           WHERE NOT EXISTS (SELECT 1 FROM ${s}.outbox o WHERE o.id = asked.id) ORDER BY asked.n`,
          [ids],
        );
        return (rows as Array<{ id: string }>).map((row) => row.id);
      }),
    renew: (owner, claimMs, now) =>
      db.call('claims.renew', async (pool, who) => {
        checkLease(who, owner, claimMs, now);
        await pool.query(
          `UPDATE ${s}.outbox SET claim_until = $2, claim_session = $3::int8 WHERE claimed_by = $1`,
          [owner, now + claimMs, db.sessionKey],
        );
      }),
    releaseAll: (owner) =>
      db.call('claims.releaseAll', async (pool) => {
        await pool.query(
          `UPDATE ${s}.outbox SET claimed_by = NULL, claim_session = NULL, claim_until = NULL WHERE claimed_by = $1`,
          [owner],
        );
      }),
  };
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
async function claimEntry(
  db: PostgresConnection,
  pool: PostgresPool,
  request: ClaimRequest,
): Promise<ClaimAnswer> {
  const { id, owner, attempts, claimMs, now, order, ignoreBackoff } = request;
  const { s } = db;
  const { rows } = await db.prepared(
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
    [id, attempts, owner, now, ignoreBackoff, order, db.sessionKey, now + claimMs],
  );
  const row = rows[0] as ClaimRow | undefined;
  if (row?.claimed) return { status: 'claimed', stored: fromRow(row) };
  return whyNotClaimed(row, request);
}
