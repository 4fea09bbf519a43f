import type { AcquireLeaseInput, OutboxMachineContext, OutboxMachineEmitted } from './outbox.types.js';

/**
 * The outbox machine's invocation inputs, the parameters its actions take from the event, and the event it
 * emits of its own, named so that both runners call the same functions and the derived table can refer to them.
 */
type Args = { context: OutboxMachineContext; event: unknown };

export const outboxInputs = {
  lease: ({ context }: Args): AcquireLeaseInput => ({ ttlMs: context.leaseTtlMs }),
};

export const outboxParams = {
  /** The event being handled, whole. */
  event: ({ event }: Args) => event as never,
  /** The output of the invoked actor whose done event is being handled. */
  actorOutput: ({ event }: Args) => (event as { output: never }).output,
};

/** A store call of the machine's own (reading the entries, the lease) failed. */
export function announceStoreFailure(
  { context }: { context: OutboxMachineContext },
  { op }: { op: 'load' | 'lease' },
): OutboxMachineEmitted {
  return { type: 'outbox-store-failed', op, at: context.now };
}
