import type { Failure } from '../../src/policy/failure.js';
import type { OutboxEntryRecord } from './outbox.types.js';

/**
 * The part of a stored entry the outbox machine may see, as a fresh object: its counters and times, and its last
 * failure (the only one the scheduler reads). A store's `OutboxEntry` also holds the request (path and query,
 * headers, body) and its idempotency key; whatever reaches the machine in an event or an actor's output is shown
 * by the inspector and kept in snapshots, so the runtime passes this instead (rule 9).
 */
export function entryRecordOf(entry: OutboxEntryRecord): OutboxEntryRecord {
  const last = entry.failures?.[entry.failures.length - 1];
  const record: OutboxEntryRecord = {
    id: entry.id,
    createdAt: entry.createdAt,
    attempts: entry.attempts,
    nextAttemptAt: entry.nextAttemptAt,
    status: entry.status,
  };
  if (entry.orderKey !== undefined) record.orderKey = entry.orderKey;
  if (entry.deadReason !== undefined) record.deadReason = entry.deadReason;
  if (last !== undefined) record.failures = [failureOf(last)];
  return record;
}

/** A failure's own fields, copied: a store may keep more on the object it returns. */
function failureOf(failure: Failure): Failure {
  const copy: Failure = {
    class: failure.class,
    requestSent: failure.requestSent,
    origin: failure.origin,
    message: failure.message,
  };
  if (failure.status !== undefined) copy.status = failure.status;
  if (failure.retryAfterMs !== undefined) copy.retryAfterMs = failure.retryAfterMs;
  return copy;
}
