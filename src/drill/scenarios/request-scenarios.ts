import type { DrillScenario } from '../drill-scenario.js';
import { connectionRefused } from './connection-refused.js';
import { dnsFailure } from './dns-failure.js';
import { expiredToken } from './expired-token.js';
import { rateLimitedApi } from './rate-limited-api.js';
import { rateLimitedNoRetryAfter } from './rate-limited-no-retry-after.js';
import { rateLimitedRetryAfter } from './rate-limited-retry-after.js';
import { responseTimeout } from './response-timeout.js';
import { retryStorm } from './retry-storm.js';
import { sharedRetryAfter } from './shared-retry-after.js';
import { unavailableNoRetryAfter } from './unavailable-no-retry-after.js';
import { unavailableRetryAfter } from './unavailable-retry-after.js';
import { writeTimeoutNoKey } from './write-timeout-no-key.js';
import { writeTimeoutWithKey } from './write-timeout-with-key.js';

/** Failures one request meets: transport faults, unknown write outcomes, auth, overload, many requests at once. */
export const requestScenarios: readonly DrillScenario[] = [
  dnsFailure,
  connectionRefused,
  responseTimeout,
  writeTimeoutNoKey,
  writeTimeoutWithKey,
  expiredToken,
  rateLimitedRetryAfter,
  rateLimitedNoRetryAfter,
  unavailableRetryAfter,
  unavailableNoRetryAfter,
  sharedRetryAfter,
  retryStorm,
  rateLimitedApi,
];
