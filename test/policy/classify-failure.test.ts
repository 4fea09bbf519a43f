import { describe, expect, it } from 'vitest';
import { TRANSPORT_ERROR_PHASES } from '../helpers/arbitraries.js';
import {
  cancelledFailure,
  classifyResult,
  classifyStatus,
  defaultRequestSent,
  failureClassOfPhase,
  networkChangeFailure,
  timeoutFailure,
  transportCrashFailure,
} from '../../src/policy/classify-failure.js';
import type { TransportResult } from '../../src/policy/transport-result.js';

const now = Date.UTC(1994, 10, 6, 8, 49, 0);

/** A real `Response` where the WHATWG constructor allows the status (200..599), a stand-in otherwise. */
function response(
  status: number,
  init: { statusText?: string; headers?: Record<string, string> } = {},
): TransportResult {
  const headers = new Headers(init.headers);
  const res =
    status >= 200 && status <= 599
      ? new Response(null, { status, statusText: init.statusText ?? '', headers })
      : ({ status, statusText: init.statusText ?? '', headers } as Response);
  return { kind: 'response', response: res };
}

describe('classifyResult', () => {
  it.each([200, 201, 204, 299])('gives no failure for a %d', (status) => {
    expect(classifyResult(response(status), 'primary', { now })).toBeUndefined();
  });

  it.each([
    [401, 'unauthorized'],
    [429, 'rate-limited'],
    [502, 'unavailable'],
    [503, 'unavailable'],
    [504, 'unavailable'],
    [500, 'server-error'],
    [501, 'server-error'],
    [505, 'server-error'],
    [599, 'server-error'],
    [400, 'client-error'],
    [403, 'client-error'],
    [404, 'client-error'],
    [408, 'client-error'],
    [409, 'client-error'],
    [422, 'client-error'],
    [499, 'client-error'],
    [101, 'unexpected'],
    [199, 'unexpected'],
    [301, 'unexpected'],
    [304, 'unexpected'],
    [600, 'unexpected'],
    [0, 'unexpected'],
  ])('classifies a %d as %s, sent, with its status', (status, failureClass) => {
    expect(classifyResult(response(status), 'primary', { now })).toEqual({
      class: failureClass,
      requestSent: 'yes',
      origin: 'primary',
      status,
      message: `HTTP ${status}`,
    });
  });

  it('adds the status text to the message', () => {
    const failure = classifyResult(response(503, { statusText: 'Service Unavailable' }), 'backup', { now });
    expect(failure?.message).toBe('HTTP 503 Service Unavailable');
    expect(failure?.origin).toBe('backup');
  });

  it('trims the status text, not only the whole message', () => {
    const failure = classifyResult(response(503, { statusText: '  Service Unavailable ' }), 'backup', {
      now,
    });
    expect(failure?.message).toBe('HTTP 503 Service Unavailable');
  });

  it.each([
    ['delay-seconds', '120', 120_000],
    ['an HTTP-date', 'Sun, 06 Nov 1994 08:49:37 GMT', 37_000],
    ['0', '0', 0],
    ['a delay longer than any cap, uncapped', '86400', 86_400_000],
  ])('reads Retry-After given as %s', (_, value, expected) => {
    const failure = classifyResult(response(503, { headers: { 'Retry-After': value } }), 'primary', { now });
    expect(failure?.retryAfterMs).toBe(expected);
  });

  it('reads Retry-After on any failed status, leaving the decision to the engine', () => {
    const failure = classifyResult(response(429, { headers: { 'retry-after': '3' } }), 'primary', { now });
    expect(failure).toMatchObject({ class: 'rate-limited', retryAfterMs: 3000 });
  });

  it.each([
    ['absent', {}],
    ['garbage', { 'Retry-After': 'soon' }],
    ['a date in the past', { 'Retry-After': 'Sun, 06 Nov 1994 08:00:00 GMT' }],
  ])('leaves retryAfterMs out when Retry-After is %s', (_, headers) => {
    const failure = classifyResult(response(503, { headers }), 'primary', { now });
    expect(failure).toBeDefined();
    expect(failure && 'retryAfterMs' in failure).toBe(false);
  });

  it.each([
    ['offline', 'offline', 'no'],
    ['dns', 'dns', 'no'],
    ['connect', 'connect', 'no'],
    ['connect-timeout', 'connect-timeout', 'no'],
    ['tls', 'tls', 'no'],
    ['response-timeout', 'response-timeout', 'unknown'],
    ['connection-lost', 'connection-lost', 'unknown'],
    ['unknown', 'unexpected', 'unknown'],
  ] as const)(
    'classifies the %s phase as %s, requestSent %s by default',
    (phase, failureClass, requestSent) => {
      const result: TransportResult = { kind: 'error', phase, message: `${phase} failed`, code: 'ETEST' };
      expect(classifyResult(result, 'primary', { now })).toEqual({
        class: failureClass,
        requestSent,
        origin: 'primary',
        message: `${phase} failed`,
      });
    },
  );

  it.each([
    ['unknown', 'no'],
    ['unknown', 'yes'],
    ['connection-lost', 'no'],
    ['connection-lost', 'yes'],
    ['connect', 'unknown'],
    ['tls', 'yes'],
  ] as const)(
    'takes the transport’s own requestSent over the default (%s phase, %s)',
    (phase, requestSent) => {
      const result: TransportResult = { kind: 'error', phase, requestSent, message: 'x' };
      expect(classifyResult(result, 'primary', { now })?.requestSent).toBe(requestSent);
    },
  );

  it('has a class and a requestSent default for every phase', () => {
    const phases = TRANSPORT_ERROR_PHASES;
    expect(phases.map(failureClassOfPhase)).toEqual([
      'offline',
      'dns',
      'connect',
      'connect-timeout',
      'tls',
      'response-timeout',
      'connection-lost',
      'unexpected',
    ]);
    expect(phases.map(defaultRequestSent)).toEqual([
      'no',
      'no',
      'no',
      'no',
      'no',
      'unknown',
      'unknown',
      'unknown',
    ]);
  });
});

describe('classifyStatus', () => {
  it.each([
    [200, undefined],
    [401, 'unauthorized'],
    [503, 'unavailable'],
    [418, 'client-error'],
    [302, 'unexpected'],
  ])('classifies %d as %s', (status, expected) => {
    expect(classifyStatus(status)).toBe(expected);
  });
});

describe('cancelledFailure', () => {
  it('describes an attempt the caller aborted, which may have gone out', () => {
    expect(cancelledFailure('primary')).toEqual({
      class: 'cancelled',
      requestSent: 'unknown',
      origin: 'primary',
      message: 'cancelled by the caller',
    });
  });
});

describe('timeoutFailure', () => {
  it('describes an attempt with no response in time, which may have gone out', () => {
    expect(timeoutFailure('primary', 5000)).toEqual({
      class: 'response-timeout',
      requestSent: 'unknown',
      origin: 'primary',
      message: 'no response within 5000 ms',
    });
  });
});

describe('transportCrashFailure', () => {
  it('describes an attempt whose transport threw, of unknown outcome, by the error’s name only', () => {
    expect(transportCrashFailure('primary', new RangeError('secret'))).toEqual({
      class: 'unexpected',
      requestSent: 'unknown',
      origin: 'primary',
      message: 'transport threw RangeError instead of reporting a result',
    });
    expect(transportCrashFailure('primary', 1).message).toBe(
      'transport threw number instead of reporting a result',
    );
  });
});

describe('networkChangeFailure', () => {
  it('describes a read’s attempt lost with its connection when the network changed', () => {
    expect(networkChangeFailure('primary', 400)).toEqual({
      class: 'connection-lost',
      requestSent: 'unknown',
      origin: 'primary',
      message: 'the network changed 400 ms into the attempt; the read is sent again at once',
    });
  });
});
