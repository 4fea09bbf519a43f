import { afterEach, describe, expect, it, vi } from 'vitest';
import { abortReasonOf, newAbortError } from '../../src/errors/abort-error.js';

afterEach(() => {
  vi.unstubAllGlobals();
});

describe('abortReasonOf', () => {
  it("is the signal's own reason whenever it has one, whatever it is", () => {
    const timeout = new DOMException('signal timed out', 'TimeoutError');
    const timedOut = new AbortController();
    timedOut.abort(timeout);
    expect(abortReasonOf(timedOut.signal)).toBe(timeout);
    const byString = new AbortController();
    byString.abort('user left');
    expect(abortReasonOf(byString.signal)).toBe('user left');
  });

  it('is a new AbortError for a signal without a reason (an abort-controller signal, as on React Native)', () => {
    const error = abortReasonOf({ aborted: true, reason: undefined } as AbortSignal) as DOMException;
    expect(error).toBeInstanceOf(DOMException);
    expect([error.name, error.message]).toEqual(['AbortError', 'This operation was aborted']);
  });
});

describe('newAbortError', () => {
  it('is an Error named AbortError where the host has no DOMException', () => {
    vi.stubGlobal('DOMException', undefined);
    const error = newAbortError();
    expect(error).toBeInstanceOf(Error);
    expect(Object.getPrototypeOf(error)).toBe(Error.prototype);
    expect([error.name, error.message]).toEqual(['AbortError', 'This operation was aborted']);
  });
});
