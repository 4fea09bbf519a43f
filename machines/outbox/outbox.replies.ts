import { errorNameOf } from '../../src/policy/error-name.js';
import type { Failure } from '../../src/policy/failure.js';
import type {
  CommitEntryInput,
  CommitOutcome,
  OutboxEntryRecord,
  OutboxMachineEvent,
  SendEntryInput,
  SendResult,
} from './outbox.types.js';

/**
 * What the runtime hands the outbox machine from outside it, as plain functions: a stored entry cut down to what
 * the machine may see, and the one event each child sends back (a send's end, a store write's).
 * outbox.machine.ts wraps the replies as XState callback actors, and the lean runtime calls them directly. Nothing
 * here imports XState: the lean runtime loads this file without it.
 */

/** How an async function settled. */
export type Settled<T> = { ok: true; value: T } | { ok: false; error: unknown };

/** The event a send reports, from how its function settled (a rejection is a failed attempt of unknown outcome). */
export function sendEntryReply(
  input: SendEntryInput,
  outcome: Settled<SendResult | 'missing' | 'skipped'>,
): OutboxMachineEvent {
  if (outcome.ok && outcome.value === 'missing') return { type: 'entry.missing', id: input.id };
  if (outcome.ok && outcome.value === 'skipped') return { type: 'send.skipped', id: input.id };
  if (outcome.ok) return { type: 'send.ended', id: input.id, result: outcome.value as SendResult };
  const name = errorNameOf(outcome.error);
  return {
    type: 'send.ended',
    id: input.id,
    result: {
      result: 'failed',
      failure: {
        class: 'unexpected',
        requestSent: 'unknown',
        origin: '',
        message: `sendEntry threw ${name} instead of reporting a result`,
      },
      attempts: 1,
      retryable: true,
    },
  };
}

/** The event a store write reports, from how its function settled. */
export function commitEntryReply(
  input: CommitEntryInput,
  outcome: Settled<CommitOutcome>,
): OutboxMachineEvent {
  // By name only: a store's error may quote the row it was writing (rule 9).
  if (!outcome.ok)
    return { type: 'commit.failed', id: input.id, error: { name: errorNameOf(outcome.error) } };
  if (outcome.value.status === 'missing') return { type: 'entry.missing', id: input.id };
  return {
    type: 'commit.succeeded',
    id: input.id,
    ...(outcome.value.status === 'stale' ? { stored: outcome.value.stored } : {}),
    ...(outcome.value.status === 'taken' ? { takenUntil: outcome.value.until } : {}),
  };
}

/**
 * The one event a child's async function reports, as a plain function for runners without XState: it never
 * rejects, and it stamps the event with `now()` when given.
 */
export async function replyOf<TInput, TOutput>(
  run: (input: TInput, signal: AbortSignal) => Promise<TOutput>,
  toEvent: (input: TInput, outcome: Settled<TOutput>) => OutboxMachineEvent,
  input: TInput,
  signal: AbortSignal,
  now?: () => number,
): Promise<OutboxMachineEvent> {
  let outcome: Settled<TOutput>;
  try {
    outcome = { ok: true, value: await run(input, signal) };
  } catch (error) {
    outcome = { ok: false, error };
  }
  const event = toEvent(input, outcome);
  return now ? ({ ...event, at: now() } as OutboxMachineEvent) : event;
}

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
