import { errorNameOf } from '../../src/policy/error-name.js';
import type { CommitOutcome } from './outbox.actors.js';
import type { CommitEntryInput, OutboxMachineEvent, SendEntryInput, SendResult } from './outbox.types.js';

/**
 * The one event each child of the outbox machine sends back (a send's end, a store write's), as plain
 * functions: outbox.actors.ts wraps them as XState callback actors, and the lean runtime calls them directly.
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
