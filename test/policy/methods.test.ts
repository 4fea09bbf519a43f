import { describe, expect, it } from 'vitest';
import type { Failure, RequestSent } from '../../src/policy/failure.js';
import { isWrite, mayReplay, isSafeMethod } from '../../src/policy/methods.js';

describe('isWrite', () => {
  it.each(['GET', 'HEAD', 'OPTIONS', 'PUT', 'DELETE', 'TRACE', 'get', 'Put', 'delete'])(
    'treats %s as safe to repeat',
    (method) => {
      expect(isWrite(method)).toBe(false);
    },
  );

  // Only the whole name counts: a method that merely starts or ends with GET is not GET.
  it.each(['POST', 'PATCH', 'post', 'patch', 'CONNECT', 'PROPFIND', 'REPORT', 'GETX', 'XGET', 'PUTS'])(
    'treats %s as a write',
    (method) => {
      expect(isWrite(method)).toBe(true);
    },
  );

  it.each([
    ['POST', true, false],
    ['PATCH', true, false],
    ['GET', false, true],
    ['PUT', false, true],
    ['POST', false, true],
    ['GET', true, false],
  ])(
    'lets the request say otherwise (%s with idempotent: %s is a write: %s)',
    (method, idempotent, expected) => {
      expect(isWrite(method, idempotent)).toBe(expected);
    },
  );
});

describe('mayReplay', () => {
  const failure = (requestSent: RequestSent): Failure => ({
    class: 'connection-lost',
    requestSent,
    origin: 'primary',
    message: 'socket hang up',
  });

  it.each([
    // write, requestSent, hasIdempotencyKey, expected
    [false, 'yes', false, true],
    [false, 'unknown', false, true],
    [false, 'no', false, true],
    [true, 'no', false, true],
    [true, 'yes', false, false],
    [true, 'unknown', false, false],
    [true, 'yes', true, true],
    [true, 'unknown', true, true],
    [true, 'no', true, true],
  ] as const)(
    'for write: %s, requestSent: %s, key: %s gives %s (rule 2)',
    (write, requestSent, hasIdempotencyKey, expected) => {
      expect(mayReplay(failure(requestSent), { write, hasIdempotencyKey })).toBe(expected);
    },
  );
});

describe('isSafeMethod', () => {
  it.each([
    ['GET', true],
    ['head', true],
    ['OPTIONS', true],
    ['TRACE', true],
    ['PUT', false],
    ['DELETE', false],
    ['POST', false],
    ['PATCH', false],
    ['GETX', false],
    ['XHEAD', false],
  ])('%s only reads: %s', (method, safe) => {
    expect(isSafeMethod(method)).toBe(safe);
  });
});
