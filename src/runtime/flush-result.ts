import type { OutboxEntrySummary, OutboxMachineContext } from '../../machines/outbox/outbox.types.js';

/**
 * Why entries are still pending when `client.outbox.flush()` resolves:
 * - `offline`: the connectivity source says offline, so nothing is sent (rule 6);
 * - `lease-held`: another live tab or process held the lease for all of `policy.durable.flushWaitMs` (it sends
 *   them in its turn), or, in a store with per-entry claims, holds the entries (or earlier ones of their group);
 * - `retry-after`: a server asked for a wait that has not passed (rule 5: flush never sends sooner);
 * - `backoff`: a send failed during the flush and the entry waits for its next time;
 * - `store-failed`: the store did not answer (reading it, the lease, or a write), so the entry waits;
 * - `time-limit`: `drain()` spent its `timeLimitMs` with entries due that it did not start (a `flush()` says it too
 *   while such a drain holds the sends).
 */
export type FlushReason =
  'offline' | 'lease-held' | 'retry-after' | 'backoff' | 'store-failed' | 'time-limit';

/** What `client.outbox.flush()` and `client.outbox.drain()` resolve with. */
export interface FlushResult {
  /** Entries this client sent (and removed) while the flush or drain ran. */
  sent: number;
  /** Entries this client dead-lettered while it ran (they stay in the store, `status: 'dead'`). */
  failed: number;
  /** Entries still waiting to be sent, dead ones not counted. */
  pending: number;
  /** Why `pending` is not 0; absent when it is. */
  reason?: FlushReason;
}

/** What the outbox runner knows when a flush ends, besides the machine's context. */
export interface FlushFacts {
  sent: number;
  failed: number;
  online: boolean;
  /** The store could not be read: the machine waits to read it again. */
  loadFailed: boolean;
  /** The lease region waits because another runner holds the lease (`refused`) or the store failed to answer. */
  lease: 'free' | 'refused' | 'failed';
  /** A drain spent its time limit: entries due then were not started. */
  timeLimited?: boolean | undefined;
}

/** Why the waiting entries wait, the first that applies (the order of `FlushReason`'s list, store failures second). */
function reasonOf(waiting: readonly OutboxEntrySummary[], now: number, facts: FlushFacts): FlushReason {
  if (!facts.online) return 'offline';
  if (facts.loadFailed || facts.lease === 'failed') return 'store-failed';
  if (facts.lease === 'refused') return 'lease-held';
  const held = waiting.filter((entry) => (entry.heldUntil ?? -Infinity) > now);
  if (held.some((entry) => entry.taken !== true)) return 'store-failed';
  // Another live runner sends them (a store with per-entry claims).
  if (held.length > 0) return 'lease-held';
  if (facts.timeLimited === true && waiting.some((entry) => entry.nextAttemptAt <= now)) return 'time-limit';
  if (waiting.some((entry) => entry.heldByServer === true && entry.nextAttemptAt > now)) return 'retry-after';
  return 'backoff';
}

/** The result of a flush from the outbox as it is once nothing more can start now. */
export function flushResultOf(context: OutboxMachineContext, facts: FlushFacts): FlushResult {
  const waiting = context.entries.filter((entry) => entry.status !== 'dead');
  const result: FlushResult = { sent: facts.sent, failed: facts.failed, pending: waiting.length };
  return waiting.length === 0 ? result : { ...result, reason: reasonOf(waiting, context.now, facts) };
}
