/**
 * What an aborted operation rejects with when its signal gives no reason: a `DOMException` named `AbortError`, as
 * fetch makes it, or where the runtime has no `DOMException` (React Native) an `Error` of that name.
 */
export function newAbortError(): Error {
  const message = 'This operation was aborted';
  return typeof DOMException === 'function'
    ? new DOMException(message, 'AbortError')
    : Object.assign(new Error(message), { name: 'AbortError' });
}

/**
 * What fetch rejects with once `signal` aborted: the signal's own `reason` whenever it has one (an
 * `AbortSignal.timeout()`'s `TimeoutError`, or whatever was passed to `abort(reason)`), else a new AbortError.
 * An `abort-controller` signal (React Native's) has no reason.
 */
export function abortReasonOf(signal: AbortSignal): unknown {
  const reason: unknown = signal.reason;
  return reason === undefined ? newAbortError() : reason;
}
