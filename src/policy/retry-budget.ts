import type { Policy } from './policy.js';

/**
 * How many retries may be in progress at once while `active` requests are (Envoy's retry budget): `percent`
 * of them, but never fewer than `minConcurrency`, so a lone request keeps its retries.
 */
export function retrySlots(budget: Policy['retryBudget'], active: number): number {
  return Math.max(budget.minConcurrency, Math.floor((budget.percent / 100) * active));
}
