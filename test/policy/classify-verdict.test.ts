import { describe, expect, it } from 'vitest';
import { classifyWithVerdict, isClassifyVerdict } from '../../src/policy/classify-verdict.js';
import { isRetryableFailure } from '../../src/policy/retryable.js';
import type { Failure } from '../../src/policy/failure.js';
import type { TransportResult } from '../../src/policy/transport-result.js';

const now = 1_000_000;
const response = (status: number, headers: Record<string, string> = {}): TransportResult => ({
  kind: 'response',
  response: new Response(null, { status, statusText: status === 200 ? 'OK' : '', headers }),
});
const policy = { retryableStatuses: [408, 429, 502, 503, 504] };
const retryable = (failure: Failure) => isRetryableFailure(failure, policy, { hasIdempotencyKey: false });

describe('classifyWithVerdict', () => {
  it("makes any response or error a success for 'success'", () => {
    expect(classifyWithVerdict(response(503), 'success', 'primary', { now })).toBeUndefined();
    const lost: TransportResult = { kind: 'error', phase: 'connection-lost', message: 'reset' };
    expect(classifyWithVerdict(lost, 'success', 'primary', { now })).toBeUndefined();
  });

  it("makes a 200 a failure of the app's class, with its status and Retry-After, sent", () => {
    expect(
      classifyWithVerdict(response(200, { 'retry-after': '3' }), 'unavailable', 'primary', { now }),
    ).toEqual({
      class: 'unavailable',
      requestSent: 'yes',
      origin: 'primary',
      status: 200,
      retryAfterMs: 3_000,
      message: "HTTP 200 OK (classified unavailable by the app's classify)",
      classifiedByApp: true,
    });
  });

  it("keeps an error's requestSent, given or by its phase: the app's class never changes it", () => {
    const lost: TransportResult = { kind: 'error', phase: 'connection-lost', message: 'reset' };
    expect(classifyWithVerdict(lost, 'connect', 'backup', { now })).toEqual({
      class: 'connect',
      requestSent: 'unknown',
      origin: 'backup',
      message: "reset (classified connect by the app's classify)",
      classifiedByApp: true,
    });
    const refused: TransportResult = {
      kind: 'error',
      phase: 'connection-lost',
      requestSent: 'no',
      message: 'x',
    };
    expect(classifyWithVerdict(refused, 'unavailable', 'backup', { now })?.requestSent).toBe('no');
  });

  it('says what went wrong in classify, and leaves the unexpected class to failwise (not classifiedByApp)', () => {
    const failure = classifyWithVerdict(
      response(200),
      'unexpected',
      'primary',
      { now },
      'classify threw TypeError',
    );
    expect(failure).toEqual({
      class: 'unexpected',
      requestSent: 'yes',
      origin: 'primary',
      status: 200,
      message: 'HTTP 200 OK (classify threw TypeError)',
    });
    expect(retryable(failure!)).toBe(false);
    const error: TransportResult = { kind: 'error', phase: 'unknown', message: 'Failed to fetch' };
    const onError = classifyWithVerdict(error, 'unexpected', 'primary', { now }, 'classify threw TypeError');
    expect(retryable(onError!)).toBe(true);
  });
});

describe("the app's class decides retries by itself", () => {
  it('retries unavailable, rate-limited and the network classes whatever the status; not the rest', () => {
    const of = (verdict: Parameters<typeof classifyWithVerdict>[1], status: number) =>
      retryable(classifyWithVerdict(response(status), verdict, 'primary', { now })!);
    expect(of('unavailable', 200)).toBe(true);
    expect(of('unavailable', 401)).toBe(true);
    expect(of('rate-limited', 200)).toBe(true);
    expect(of('connection-lost', 200)).toBe(true);
    expect(of('server-error', 503)).toBe(false);
    expect(of('client-error', 408)).toBe(false);
    expect(of('unexpected', 200)).toBe(false);
    expect(of('unauthorized', 200)).toBe(false);
    expect(of('tls', 200)).toBe(false);
    expect(of('cancelled', 200)).toBe(false);
    expect(of('offline', 200)).toBe(false);
  });
});

describe('isClassifyVerdict', () => {
  it("takes every failure class and 'success', nothing else", () => {
    for (const value of ['success', 'unavailable', 'connect', 'cancelled', 'unexpected'])
      expect(isClassifyVerdict(value)).toBe(true);
    for (const value of [undefined, null, 'ok', 'Unavailable', 503, {}, 'toString'])
      expect(isClassifyVerdict(value)).toBe(false);
  });
});
