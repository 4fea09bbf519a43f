import type { OutboxEntrySummary } from '../../machines/outbox/outbox.types.js';

/**
 * An outbox entry as the outbox machine's queue holds it: pending, created at 0, no attempt made, due at once,
 * not waiting to be online; `changes` sets the rest. The machine tests write their queues with it.
 */
export const pendingSummary = (
  id: string,
  changes: Partial<OutboxEntrySummary> = {},
): OutboxEntrySummary => ({
  id,
  createdAt: 0,
  attempts: 0,
  nextAttemptAt: 0,
  status: 'pending',
  wakesWhenOnline: false,
  ...changes,
});
