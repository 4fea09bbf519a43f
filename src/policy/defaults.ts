import type { Policy } from './policy.js';

/** `value` and everything in it, frozen: the defaults are shared by every client, so no one may change them. */
const deepFreeze = <T>(value: T): T => {
  for (const inner of Object.values(value as object)) if (typeof inner === 'object') deepFreeze(inner);
  return Object.freeze(value);
};

/**
 * Each default, once. The TSDoc of `Policy` states the same values for users. Deeply frozen: an assignment
 * (`defaultPolicy.budgetMs = 1`) throws in strict mode and changes nothing, so no later client is changed by it.
 */
export const defaultPolicy: Readonly<Policy> = deepFreeze<Policy>({
  attempts: { max: 3 },
  budgetMs: 10_000,
  timeouts: { attemptMs: 5_000, connectMs: 3_000, idleMs: 60_000 },
  backoff: { initialMs: 200, maxMs: 5_000, multiplier: 2, jitter: 'full' },
  retryableStatuses: [408, 429, 502, 503, 504],
  retryAfter: { maxMs: 60_000, maxHoldMs: 300_000, releaseSpreadMs: 1_000 },
  retryBudget: { percent: 20, minConcurrency: 3 },
  throttle: { beta: 0.7, minRatePerSecond: 0.5, quietIntervals: 4, maxQuietMs: 30_000 },
  idempotency: { header: 'Idempotency-Key' },
  attemptHeader: false,
  health: {
    suspectAfter: 2,
    recoverAfter: 1,
    failoverAfter: 5,
    failureRatio: 0.5,
    windowMs: 30_000,
    minRequests: 10,
    minFailedOverMs: 30_000,
    maxFailedOverMs: 300_000,
    probeSuccesses: 3,
    probeIntervalMs: 5_000,
    probeTimeoutMs: 5_000,
    reprobeAfterMs: 5_000,
    reprobeJitter: 'equal',
    failbackDwellMs: 30_000,
    dwellFailoverAfter: 10,
  },
  durable: {
    backoff: 'exponential',
    initialMs: 10_000,
    maxMs: 18_000_000,
    jitter: 'full',
    maxAttempts: 1000,
    maxAgeMs: 604_800_000,
    order: 'fifo',
    concurrency: 1,
    flushWaitMs: 5_000,
  },
  cache: { maxAgeMs: 86_400_000, maxEntries: 100 },
});
