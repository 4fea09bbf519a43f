/** Small helpers shared by the transport tests (not a test file itself). */
import type { Socket } from 'node:net';
import { expect } from 'vitest';
import type { Clock } from '../../src/clock/clock.js';
import { systemClock } from '../../src/clock/system-clock.js';
import type { TransportRequest, TransportResult } from '../../src/transports/transport.js';

export type ErrorResult = Extract<TransportResult, { kind: 'error' }>;
export type ResponseResult = Extract<TransportResult, { kind: 'response' }>;

export function attempt(url: string, overrides: Partial<TransportRequest> = {}): TransportRequest {
  return {
    url,
    method: 'GET',
    headers: {},
    signal: new AbortController().signal,
    connectTimeoutMs: 2_000,
    attemptsLeft: 1,
    ...overrides,
  };
}

export function expectError(result: TransportResult): ErrorResult {
  if (result.kind !== 'error')
    throw new Error(`expected an error result, got status ${result.response.status}`);
  return result;
}

export function expectResponse(result: TransportResult): Response {
  if (result.kind !== 'response')
    throw new Error(`expected a response, got ${result.phase}: ${result.message}`);
  return result.response;
}

/** Resolves once the socket has closed (at once if it already has). */
export function closed(socket: Socket): Promise<void> {
  if (socket.destroyed && socket.closed) return Promise.resolve();
  return new Promise((resolve) => socket.once('close', () => resolve()));
}

/** Rule 9: a message never holds the query string or a header value. */
export function expectRedacted(message: string): void {
  expect(message).not.toContain('secret');
  expect(message).not.toContain('?');
  expect(message).not.toContain('Bearer');
}

export const SECRET_QUERY = '?token=secret-query';
export const SECRET_HEADERS = { authorization: 'Bearer secret-header' } as const;

/** The real clock, counting the timers it holds (a transport given it must leave none behind). */
export function countingClock(): Clock & { pending(): number } {
  const active = new Set<unknown>();
  return {
    now: () => systemClock.now(),
    setTimeout(fn, timeoutMs) {
      const handle: unknown = systemClock.setTimeout((...args) => {
        active.delete(handle);
        fn(...args);
      }, timeoutMs);
      active.add(handle);
      return handle;
    },
    clearTimeout(handle) {
      active.delete(handle);
      systemClock.clearTimeout(handle);
    },
    pending: () => active.size,
  };
}
