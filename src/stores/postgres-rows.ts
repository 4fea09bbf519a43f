import type { ClaimAnswer, ClaimRequest, OutboxEntry } from './outbox-store.js';

/**
 * A row as read: the `attempts` column is the count, since a claim counts an attempt by setting that column
 * alone (the entry's JSON keeps the count of its last full write).
 */
export type Row = { entry: string; body: Uint8Array | null; attempts: number };

/** The entry's JSON (a string body stays in it: JSON escapes a NUL, which a text column refuses) and its bytes. */
export function toRow(entry: OutboxEntry): [string, Uint8Array | null] {
  const { body } = entry.request;
  if (!(body instanceof Uint8Array)) return [JSON.stringify(entry), null];
  const { body: _, ...request } = entry.request;
  return [JSON.stringify({ ...entry, request }), body];
}

export function fromRow({ entry, body, attempts }: Row): OutboxEntry {
  const parsed = JSON.parse(entry) as OutboxEntry;
  parsed.attempts = attempts;
  // pg returns a Node Buffer; a plain Uint8Array copy is what was stored.
  if (body !== null) parsed.request.body = new Uint8Array(body);
  return parsed;
}

/** The column values an entry's write sets, after id, entry and body: $4 to $8. */
export function columnsOf(entry: OutboxEntry): unknown[] {
  return [
    entry.status,
    entry.orderKey ?? null,
    entry.attempts,
    entry.nextAttemptAt,
    entry.failures[entry.failures.length - 1]?.retryAfterMs !== undefined,
  ];
}

/** A row the claim statement answers: the claimed entry, or the row as it was, with what tells why not. */
export type ClaimRow = Row & {
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
export function whyNotClaimed(row: ClaimRow | undefined, request: ClaimRequest): ClaimAnswer {
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
