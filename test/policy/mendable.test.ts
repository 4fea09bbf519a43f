import { describe, expect, it } from 'vitest';
import type { FailReason } from '../../src/policy/failure.js';
import { isMendable } from '../../src/policy/mendable.js';

describe('isMendable', () => {
  // docs/durable.md: time, connectivity or failback can mend these, so durable work waits in the outbox.
  it.each<FailReason>([
    'attempts-exhausted',
    'budget-exhausted',
    'retry-after-exceeds-budget',
    'retry-budget-exhausted',
    'throttled',
    'offline',
    'no-healthy-origin',
    'cancelled',
  ])('keeps durable work that ended %s', (reason) => {
    expect(isMendable(reason)).toBe(true);
  });

  // Sent again unchanged, these fail the same way (or could apply a write twice): dead-lettered.
  it.each<FailReason>(['not-retryable', 'unauthorized', 'unsafe-to-replay'])(
    'dead-letters durable work that ended %s',
    (reason) => {
      expect(isMendable(reason)).toBe(false);
    },
  );

  it('has nothing to mend without a failure, or once the work was deferred', () => {
    expect(isMendable(undefined)).toBe(false);
    expect(isMendable('durable')).toBe(false);
  });
});
