import { hasDecisionToWrite, hasWorkInFlight, nextWakeAt, planDispatch } from './outbox.actions.js';
import type { AcquireLeaseOutput, OutboxMachineContext } from './outbox.types.js';

/**
 * The outbox machine's questions, as pure functions of its context, so that they can be tested without an
 * actor and read by name in the inspector and the generated diagram.
 */
type GuardArgs = { context: OutboxMachineContext };

export const outboxGuards = {
  /** Something can start now: a send (online, due, not blocked, a free slot) or a dead-lettering. */
  hasDueWork: ({ context }: GuardArgs) => planDispatch(context).length > 0,
  /**
   * Nothing is in flight, no decision waits to be written again, and nothing can start: the lease can be given
   * back. (A decision kept after a failed write holds the lease, and with it the entry, until it is written: another
   * runner taking the entry meanwhile would send it again, and the late decision would then undo its write.)
   */
  isSettled: ({ context }: GuardArgs) =>
    !hasWorkInFlight(context) && !hasDecisionToWrite(context) && planDispatch(context).length === 0,
  /** Some pending entry waits for a time (its next attempt, or its expiry). */
  hasWakeTime: ({ context }: GuardArgs) => Number.isFinite(nextWakeAt(context)),
  /** `acquireLease` says this runner holds the lease. */
  isLeaseGranted: ({ event }: { event: unknown }) => (event as { output: AcquireLeaseOutput }).output.held,
};
