import type { Policy } from './policy.js';

/** Each default, once. The TSDoc of `Policy` states the same values for users. */
export const defaultPolicy: Policy = {
  attempts: { max: 3 },
  budgetMs: 10_000,
  timeouts: { attemptMs: 5_000, connectMs: 3_000 },
  backoff: { initialMs: 200, maxMs: 5_000, multiplier: 2, jitter: 'full' },
  retryableStatuses: [408, 429, 502, 503, 504],
  retryAfter: { maxMs: 60_000 },
  idempotency: { header: 'Idempotency-Key' },
  attemptHeader: false,
};
