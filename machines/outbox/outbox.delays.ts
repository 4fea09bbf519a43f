import { MAX_TIMER_MS } from '../../src/policy/durable-backoff.js';
import { nextWakeAt } from './outbox.actions.js';
import type { OutboxMachineContext } from './outbox.types.js';

type DelayArgs = { context: OutboxMachineContext };

/** The outbox machine's waits, each computed from context (never a literal in the config). */
export const outboxDelays = {
  /**
   * Until the earliest pending entry is due or expires (`wakeAt`, set as the timer is armed); at most the
   * longest wait a host timer allows (the machine then wakes early and waits again).
   */
  nextDue: ({ context }: DelayArgs) =>
    Math.min(MAX_TIMER_MS, Math.max(0, (context.wakeAt ?? nextWakeAt(context)) - context.now)),
  /** The lease is renewed every third of its time to live while it is held (while sending). */
  leaseRenewal: ({ context }: DelayArgs) => Math.floor(context.leaseTtlMs / 3),
  /** Another runner holds the lease (or the store did not answer): ask again after half its time to live. */
  leaseRetry: ({ context }: DelayArgs) => Math.floor(context.leaseTtlMs / 2),
  /** Reading the store failed: read it again after the policy's first durable wait. */
  loadRetry: ({ context }: DelayArgs) => context.policy.durable.initialMs,
};
