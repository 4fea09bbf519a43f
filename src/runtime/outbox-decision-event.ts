import type { OutboxMachineEmitted } from '../../machines/outbox/outbox.types.js';
import type { DecisionEventDraft } from './decision-events.js';

/**
 * The `outbox-changed` decision event for what the outbox machine emitted, with the fields of its `change` only
 * (docs/durable.md#outbox-changed-events); `undefined` for what is not a decision (a failed store call).
 */
export function outboxDecisionEvent(event: OutboxMachineEmitted): DecisionEventDraft | undefined {
  const type = 'outbox-changed';
  switch (event.type) {
    case 'outbox-changed':
      return { type, change: event.type, size: event.size };
    case 'entry-sent':
      return { type, change: event.type, entryId: event.id, attempt: event.attempts };
    case 'entry-retry-scheduled':
      return {
        type,
        change: event.type,
        entryId: event.id,
        attempt: event.attempts,
        delayMs: event.delayMs,
        failureClass: event.failureClass,
      };
    case 'entry-dead-lettered':
      return {
        type,
        change: event.type,
        entryId: event.id,
        attempt: event.attempts,
        reason: event.reason,
        failureClass: event.failureClass,
      };
    case 'entry-revived':
      return { type, change: event.type, entryId: event.id };
    case 'entry-replaced':
      return { type, change: event.type, entryId: event.id, reason: 'replaced', replacedBy: event.by };
    case 'outbox-store-failed':
      return undefined;
  }
}
