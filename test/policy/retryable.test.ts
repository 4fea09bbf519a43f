import { describe, expect, it } from 'vitest';
import type { Failure, FailureClass } from '../../src/policy/failure.js';
import { defaultPolicy } from '../../src/policy/defaults.js';
import { isRetryableFailure } from '../../src/policy/retryable.js';
import { classifyStatus } from '../../src/policy/classify-failure.js';

const withKey = { hasIdempotencyKey: true };
const withoutKey = { hasIdempotencyKey: false };

const networkFailure = (failureClass: FailureClass): Failure => ({
  class: failureClass,
  requestSent: 'unknown',
  origin: 'primary',
  message: 'test',
});

const statusFailure = (status: number): Failure => ({
  class: classifyStatus(status) ?? 'unexpected',
  requestSent: 'yes',
  origin: 'primary',
  status,
  message: `HTTP ${status}`,
});

describe('isRetryableFailure', () => {
  it.each(['dns', 'connect', 'connect-timeout', 'response-timeout', 'connection-lost'] as const)(
    'retries a %s failure',
    (failureClass) => {
      expect(isRetryableFailure(networkFailure(failureClass), defaultPolicy, withoutKey)).toBe(true);
    },
  );

  it('retries an unexpected transport error, as a browser reports most network failures', () => {
    expect(isRetryableFailure(networkFailure('unexpected'), defaultPolicy, withoutKey)).toBe(true);
  });

  it.each(['tls', 'offline', 'cancelled', 'unauthorized'] as const)(
    'does not retry a %s failure',
    (failureClass) => {
      expect(isRetryableFailure(networkFailure(failureClass), defaultPolicy, withKey)).toBe(false);
    },
  );

  it.each([408, 429, 502, 503, 504])('retries a %d, which the default policy names', (status) => {
    expect(isRetryableFailure(statusFailure(status), defaultPolicy, withoutKey)).toBe(true);
  });

  it.each([403, 404, 409, 500, 501, 505, 599])(
    'does not retry a %d, which the policy does not name (rule 4)',
    (status) => {
      expect(isRetryableFailure(statusFailure(status), defaultPolicy, withoutKey)).toBe(false);
    },
  );

  it.each([403, 404, 500, 501])(
    'does not retry a %d even with an idempotency key: the key makes only a 409 retryable',
    (status) => {
      expect(isRetryableFailure(statusFailure(status), defaultPolicy, withKey)).toBe(false);
    },
  );

  it('retries a status only if this policy names it', () => {
    const policy = { retryableStatuses: [500] };
    expect(isRetryableFailure(statusFailure(500), policy, withoutKey)).toBe(true);
    expect(isRetryableFailure(statusFailure(503), policy, withoutKey)).toBe(false);
  });

  it('retries a 409 when the request has an idempotency key (the first request is still being processed)', () => {
    expect(isRetryableFailure(statusFailure(409), defaultPolicy, withKey)).toBe(true);
  });

  it('does not retry a 409 without an idempotency key', () => {
    expect(isRetryableFailure(statusFailure(409), defaultPolicy, withoutKey)).toBe(false);
  });

  it.each([
    [400, 'the key is missing or the request malformed'],
    [422, 'the key was reused with another payload'],
    [401, 'auth.refresh handles it'],
  ])('never retries a %d (%s), even if listed and with a key', (status) => {
    const policy = { retryableStatuses: [400, 401, 422] };
    expect(isRetryableFailure(statusFailure(status), policy, withKey)).toBe(false);
  });

  it('does not retry a status class without a status', () => {
    const failure: Failure = {
      class: 'unavailable',
      requestSent: 'yes',
      origin: 'primary',
      message: 'HTTP 503',
    };
    expect(isRetryableFailure(failure, defaultPolicy, withKey)).toBe(false);
  });

  it.each([101, 301, 304])('does not retry an unexpected %d status even if it were listed', (status) => {
    expect(isRetryableFailure(statusFailure(status), { retryableStatuses: [status] }, withKey)).toBe(false);
  });
});
