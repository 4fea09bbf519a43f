import { hasWorkInFlight, nextWakeAt, planDispatch } from './outbox.actions.js';
import type { AcquireLeaseOutput, OutboxMachineContext } from './outbox.types.js';

/**
 * The outbox machine's questions, as pure functions of its context, so that they can be tested without an
 * actor and read by name in the inspector and the generated diagram.
 */
type GuardArgs = { context: OutboxMachineContext };

export const outboxGuards = {
  /** Something can start now: a send (online, due, not blocked, a free slot) or a dead-lettering. */
  hasDueWork: ({ context }: GuardArgs) => planDispatch(context).length > 0,
  /** Nothing is in flight and nothing can start: the lease can be given back. */
  isSettled: ({ context }: GuardArgs) => !hasWorkInFlight(context) && planDispatch(context).length === 0,
  /** Some pending entry waits for a time (its next attempt, or its expiry). */
  hasWakeTime: ({ context }: GuardArgs) => Number.isFinite(nextWakeAt(context)),
  /** `acquireLease` says this runner holds the lease. */
  isLeaseGranted: ({ event }: { event: unknown }) => (event as { output: AcquireLeaseOutput }).output.held,
};
