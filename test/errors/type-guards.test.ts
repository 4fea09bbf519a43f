import { describe, expect, it } from 'vitest';
import { FailwiseError } from '../../src/errors/failwise-error.js';
import { PolicyError } from '../../src/errors/policy-error.js';
import { RequestError } from '../../src/errors/request-error.js';
import { RequestFailedError } from '../../src/errors/request-failed-error.js';
import {
  isFailwiseError,
  isPolicyError,
  isRequestError,
  isRequestFailedError,
} from '../../src/errors/type-guards.js';

const policyError = new PolicyError([{ path: 'policy.budgetMs', message: 'expected a number > 0, got 0' }]);
const requestError = new RequestError('method', 'expected a string');
const requestFailedError = new RequestFailedError({
  status: 'failed',
  reason: 'offline',
  attempts: 0,
  elapsedMs: 0,
});

/** An error as another copy of failwise (another bundle, iframe or worker) would make it: same name, other class. */
function foreign(name: string): Error {
  const error = new Error('from another realm');
  error.name = name;
  return error;
}

describe('isFailwiseError', () => {
  it.each([
    ['a FailwiseError', new FailwiseError('x')],
    ['a PolicyError', policyError],
    ['a RequestError', requestError],
    ['a RequestFailedError', requestFailedError],
    ['a foreign PolicyError', foreign('PolicyError')],
    ['a foreign FailwiseError', foreign('FailwiseError')],
  ])('recognises %s', (_, error) => {
    expect(isFailwiseError(error)).toBe(true);
  });

  it.each([
    ['a plain Error', new Error('x')],
    ['a TypeError', new TypeError('x')],
    ['a string', 'PolicyError'],
    ['null', null],
    ['undefined', undefined],
    ['an object without a name', {}],
  ])('refuses %s', (_, value) => {
    expect(isFailwiseError(value)).toBe(false);
  });
});

describe('isPolicyError', () => {
  it('recognises a PolicyError from this or another copy of failwise', () => {
    expect(isPolicyError(policyError)).toBe(true);
    expect(isPolicyError(foreign('PolicyError'))).toBe(true);
  });

  it('refuses other errors', () => {
    expect(isPolicyError(requestError)).toBe(false);
    expect(isPolicyError(new Error('x'))).toBe(false);
    expect(isPolicyError(null)).toBe(false);
  });
});

describe('isRequestError', () => {
  it('recognises a RequestError from this or another copy of failwise', () => {
    expect(isRequestError(requestError)).toBe(true);
    expect(isRequestError(foreign('RequestError'))).toBe(true);
  });

  it('refuses other errors', () => {
    expect(isRequestError(policyError)).toBe(false);
    expect(isRequestError(requestFailedError)).toBe(false);
    expect(isRequestError(undefined)).toBe(false);
  });
});

describe('isRequestFailedError', () => {
  it('recognises a RequestFailedError from this or another copy of failwise', () => {
    expect(isRequestFailedError(requestFailedError)).toBe(true);
    expect(isRequestFailedError(foreign('RequestFailedError'))).toBe(true);
  });

  it('refuses other errors', () => {
    expect(isRequestFailedError(requestError)).toBe(false);
    expect(isRequestFailedError('RequestFailedError')).toBe(false);
  });
});
