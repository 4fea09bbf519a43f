import { describe, expect, it } from 'vitest';
import { definePolicy } from '../../src/policy/define-policy.js';
import type { FailureClass } from '../../src/policy/failure.js';
import { emptyWindow, recordOutcome, windowCounts } from '../../src/policy/failure-window.js';
import {
  addOutcome,
  countsAgainstOrigin,
  failoverCriterion,
  inFailbackDwell,
  noEvidence,
} from '../../src/policy/health-evidence.js';

describe('countsAgainstOrigin', () => {
  it.each<[FailureClass, number | undefined, boolean]>([
    ['dns', undefined, true],
    ['connect', undefined, true],
    ['connect-timeout', undefined, true],
    ['tls', undefined, true],
    ['response-timeout', undefined, true],
    ['connection-lost', undefined, true],
    ['unavailable', 503, true],
    ['server-error', 500, true],
    ['unexpected', undefined, true],
    ['unexpected', 302, false],
    ['rate-limited', 429, false],
    ['client-error', 404, false],
    ['unauthorized', 401, false],
    ['cancelled', undefined, false],
    ['offline', undefined, false],
  ])('%s (status %s) counts: %s', (failureClass, status, counts) => {
    expect(countsAgainstOrigin(failureClass, status, true)).toBe(counts);
  });

  it('does not count an unexpected failure that sent nothing: it happened on the device', () => {
    expect(countsAgainstOrigin('unexpected', undefined, true, 'no')).toBe(false);
    expect(countsAgainstOrigin('unexpected', undefined, true, 'unknown')).toBe(true);
    expect(countsAgainstOrigin('connect', undefined, true, 'no')).toBe(true);
  });

  it('counts nothing while the device is offline (rule 6)', () => {
    expect(countsAgainstOrigin('connect', undefined, false)).toBe(false);
    expect(countsAgainstOrigin('unavailable', 503, false)).toBe(false);
  });
});

describe('the failure window', () => {
  const windowMs = 10_000;

  it('counts outcomes inside the window and forgets older ones', () => {
    let window = emptyWindow;
    window = recordOutcome(window, windowMs, 0, true);
    window = recordOutcome(window, windowMs, 500, false);
    window = recordOutcome(window, windowMs, 5_000, true);
    expect(windowCounts(window, windowMs, 5_000)).toEqual({ total: 3, failures: 2 });
    // The first bucket ([0, 1000)) leaves the window once it ends before now - windowMs.
    expect(windowCounts(window, windowMs, 11_000)).toEqual({ total: 1, failures: 1 });
    expect(windowCounts(window, windowMs, 16_000)).toEqual({ total: 0, failures: 0 });
  });

  it('keeps at most one bucket per tenth of the window, however many outcomes', () => {
    let window = emptyWindow;
    for (let at = 0; at < 100_000; at += 7) window = recordOutcome(window, windowMs, at, at % 2 === 0);
    expect(window.buckets.length).toBeLessThanOrEqual(11);
  });

  it('never changes the window it is given', () => {
    const before = recordOutcome(emptyWindow, windowMs, 0, true);
    const after = recordOutcome(before, windowMs, 100, true);
    expect(windowCounts(before, windowMs, 100)).toEqual({ total: 1, failures: 1 });
    expect(windowCounts(after, windowMs, 100)).toEqual({ total: 2, failures: 2 });
  });
});

describe('failoverCriterion', () => {
  const { health } = definePolicy({
    health: { failoverAfter: 3, failureRatio: 0.5, minRequests: 4, windowMs: 10_000 },
  });
  const failures = (count: number, from = 0) => {
    let evidence = noEvidence;
    for (let i = 0; i < count; i++) evidence = addOutcome(evidence, health, from + i, true);
    return evidence;
  };

  it('fails over at once on a TLS failure', () => {
    expect(failoverCriterion(failures(1), health, 1, 'tls', undefined)).toBe('tls');
  });

  it('fails over after failoverAfter consecutive failures, not before', () => {
    expect(failoverCriterion(failures(2), health, 2, 'connect', undefined)).toBeUndefined();
    expect(failoverCriterion(failures(3), health, 3, 'connect', undefined)).toBe('consecutive-failures');
  });

  it('fails over on the failure ratio once the window holds minRequests outcomes', () => {
    let evidence = noEvidence;
    // fail, ok, fail: 2 of 3, but fewer than minRequests.
    for (const failed of [true, false, true]) evidence = addOutcome(evidence, health, 10, failed);
    expect(failoverCriterion(evidence, health, 10, 'unavailable', undefined)).toBeUndefined();
    evidence = addOutcome(evidence, health, 11, false);
    evidence = addOutcome(evidence, health, 12, true);
    // 3 failures of 5 >= 0.5, never more than 1 in a row.
    expect(evidence.consecutiveFailures).toBe(1);
    expect(failoverCriterion(evidence, health, 12, 'unavailable', undefined)).toBe('failure-ratio');
  });

  it('fails over on a ratio exactly failureRatio, with exactly minRequests outcomes', () => {
    let evidence = noEvidence;
    // ok, fail, ok, fail: 2 of 4 = 0.5, and 4 = minRequests; never 3 failures in a row.
    for (const failed of [false, true, false, true]) evidence = addOutcome(evidence, health, 20, failed);
    expect(failoverCriterion(evidence, health, 20, 'server-error', undefined)).toBe('failure-ratio');
  });

  it('does not fail over on a ratio below failureRatio, however many outcomes', () => {
    let evidence = noEvidence;
    // ok, ok, ok, fail: 1 of 4 = 0.25.
    for (const failed of [false, false, false, true]) evidence = addOutcome(evidence, health, 20, failed);
    expect(failoverCriterion(evidence, health, 20, 'server-error', undefined)).toBeUndefined();
  });

  it('a success resets the consecutive count', () => {
    const evidence = addOutcome(failures(2), health, 5, false);
    expect(evidence).toMatchObject({ consecutiveFailures: 0, consecutiveSuccesses: 1 });
  });
});

describe('failoverCriterion within the failback dwell', () => {
  const { health } = definePolicy({
    health: {
      failoverAfter: 3,
      dwellFailoverAfter: 6,
      failbackDwellMs: 1_000,
      failureRatio: 0.5,
      minRequests: 4,
      windowMs: 10_000,
    },
  });
  /** The evidence after these outcomes (true: a failure), all at `at`. */
  const outcomes = (failed: readonly boolean[], at: number) =>
    failed.reduce((evidence, f) => addOutcome(evidence, health, at, f), noEvidence);
  const failedBackAt = 5_000;

  it('needs dwellFailoverAfter consecutive failures, not failoverAfter, until failbackDwellMs has passed', () => {
    const five = outcomes([true, true, true, true, true], 5_500);
    expect(failoverCriterion(five, health, 5_500, 'connect', failedBackAt)).toBeUndefined();
    const six = addOutcome(five, health, 5_500, true);
    expect(failoverCriterion(six, health, 5_500, 'connect', failedBackAt)).toBe('consecutive-failures');
    // One millisecond before the dwell ends: still the dwell's count; at its end, failoverAfter again.
    expect(failoverCriterion(five, health, 5_999, 'connect', failedBackAt)).toBeUndefined();
    expect(failoverCriterion(five, health, 6_000, 'connect', failedBackAt)).toBe('consecutive-failures');
  });

  it('does not judge the failure ratio within the dwell, and does after it', () => {
    // fail, ok, fail, ok, fail: 3 of 5 >= 0.5, never 2 in a row.
    const evidence = outcomes([true, false, true, false, true], 5_500);
    expect(failoverCriterion(evidence, health, 5_500, 'unavailable', failedBackAt)).toBeUndefined();
    expect(failoverCriterion(evidence, health, 6_000, 'unavailable', failedBackAt)).toBe('failure-ratio');
  });

  it('still fails over at once on a TLS failure', () => {
    expect(failoverCriterion(outcomes([true], 5_001), health, 5_001, 'tls', failedBackAt)).toBe('tls');
  });

  it('is off with failbackDwellMs 0', () => {
    const off = definePolicy({ health: { failoverAfter: 3, failbackDwellMs: 0 } }).health;
    const three = [true, true, true].reduce((e, f) => addOutcome(e, off, 5_000, f), noEvidence);
    expect(inFailbackDwell(off, 5_000, 5_000)).toBe(false);
    expect(failoverCriterion(three, off, 5_000, 'connect', 5_000)).toBe('consecutive-failures');
  });

  it('inFailbackDwell: never before any failback', () => {
    expect(inFailbackDwell(health, 0, undefined)).toBe(false);
    expect(inFailbackDwell(health, 5_999, failedBackAt)).toBe(true);
    expect(inFailbackDwell(health, 6_000, failedBackAt)).toBe(false);
  });
});
