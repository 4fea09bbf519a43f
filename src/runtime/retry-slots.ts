import type { Policy } from '../policy/policy.js';
import { retrySlots } from '../policy/retry-budget.js';

/**
 * The client-wide retry budget (`policy.retryBudget`): which requests hold a retry slot now. A request holds
 * one from its first retry until it ends, so a few requests retry to the end rather than many by turns.
 */
export interface RetrySlots {
  /** Takes a slot for `requestId` if one is free while `active` requests are in progress; true if it holds one. */
  claim(requestId: string, active: number): boolean;
  release(requestId: string): void;
  readonly inUse: number;
}

export function createRetrySlots(budget: Policy['retryBudget']): RetrySlots {
  const holders = new Set<string>();
  return {
    claim(requestId, active) {
      if (holders.has(requestId)) return true;
      if (holders.size >= retrySlots(budget, active)) return false;
      holders.add(requestId);
      return true;
    },
    release: (requestId) => void holders.delete(requestId),
    get inUse() {
      return holders.size;
    },
  };
}
