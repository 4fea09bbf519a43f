import { describe, expect, it } from 'vitest';

import { attemptEvidence } from '../../src/policy/attempt-evidence.js';
import type { Failure } from '../../src/policy/failure.js';

const failure: Failure = {
  class: 'server-error',
  requestSent: 'yes',
  origin: 'primary',
  status: 503,
  message: 'HTTP 503',
};

describe('attemptEvidence', () => {
  it('reports a success with its latency', () => {
    expect(
      attemptEvidence({ type: 'attempt-succeeded', origin: 'backup', latencyMs: 42, at: 1_000 }),
    ).toEqual({
      type: 'attempt.succeeded',
      origin: 'backup',
      latencyMs: 42,
      at: 1_000,
    });
  });

  it("reports a failure against its failure's origin, with its class, status and whether it was sent", () => {
    expect(attemptEvidence({ type: 'attempt-failed', failure, at: 2_000 })).toEqual({
      type: 'attempt.failed',
      origin: 'primary',
      failureClass: 'server-error',
      status: 503,
      requestSent: 'yes',
      at: 2_000,
    });
  });

  it('gives no evidence for a 503 with a Retry-After (its hold keeps the client away), and counts a 429 or a 502 with one', () => {
    const busy: Failure = { ...failure, class: 'unavailable', retryAfterMs: 2_000 };
    expect(attemptEvidence({ type: 'attempt-failed', failure: busy, at: 2_000 })).toBeUndefined();
    // A Retry-After of 0 names no wait: the 503 counts.
    expect(
      attemptEvidence({ type: 'attempt-failed', failure: { ...busy, retryAfterMs: 0 }, at: 2_000 }),
    ).toMatchObject({ type: 'attempt.failed', status: 503 });
    for (const status of [429, 502])
      expect(
        attemptEvidence({ type: 'attempt-failed', failure: { ...busy, status }, at: 2_000 }),
      ).toMatchObject({ type: 'attempt.failed', status });
  });

  it('reports a failure without a status as one', () => {
    const lost: Failure = {
      class: 'connection-lost',
      requestSent: 'unknown',
      origin: 'backup',
      message: 'reset',
    };
    expect(attemptEvidence({ type: 'attempt-failed', failure: lost, at: 5 })).toEqual({
      type: 'attempt.failed',
      origin: 'backup',
      failureClass: 'connection-lost',
      status: undefined,
      requestSent: 'unknown',
      at: 5,
    });
  });

  it.each([
    ['cut short by the request budget', { cutByBudget: true }],
    ['in flight across a network change', { acrossChange: true }],
    ['whose transport threw', { crashed: true }],
  ] as const)('gives no evidence for an attempt %s', (_, flag) => {
    expect(attemptEvidence({ type: 'attempt-failed', failure, at: 2_000, ...flag })).toBeUndefined();
  });
});
