import type { FailReason } from './failure.js';

/**
 * Why durable work may be tried again later: time, connectivity or failback can mend these. Any other end
 * (`not-retryable`, `unauthorized`, `unsafe-to-replay`) dead-letters it. One list for the request machine
 * (which defers such work) and the outbox (which keeps it).
 */
const MENDABLE: ReadonlySet<FailReason | 'durable' | undefined> = new Set<FailReason>([
  'attempts-exhausted',
  'budget-exhausted',
  'retry-after-exceeds-budget',
  'retry-budget-exhausted',
  'throttled',
  'offline',
  'no-healthy-origin',
  'cancelled',
]);

// Neither `undefined` (no failure) nor 'durable' (deferred already) is in the set: no separate checks needed.
export const isMendable = (reason: FailReason | 'durable' | undefined): boolean => MENDABLE.has(reason);
