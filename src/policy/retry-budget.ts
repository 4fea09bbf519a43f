import type { Policy } from './policy.js';

/**
 * How many retries may be in progress at once while `active` requests are (Envoy's retry budget): `percent`
 * of them, but never fewer than `minConcurrency`, so a lone request keeps its retries.
 */
export function retrySlots(budget: Policy['retryBudget'], active: number): number {
  // percent * active first: (29 / 100) * 100 is 28.999999999999996 in floating point, which floors to 28.
  return Math.max(budget.minConcurrency, Math.floor((budget.percent * active) / 100));
}
