/*
 * An `onEvent` observer that throws: the request's outcome is what it would have been, and
 * the error reaches the app: `onEventError(error, event)` when given, else the host's `reportError` (browsers,
 * Deno, Bun), else `console.error`. Globals are stubbed per test and restored after.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { DecisionEvent } from '../../src/runtime/decision-events.js';
import type { FailoverClientOptions } from '../../src/runtime/client-options.js';
import { PolicyError } from '../../src/errors/policy-error.js';
import { createFailoverClient } from '../../src/runtime/create-failover-client.js';
import { harness } from '../helpers/client-harness.js';
import { respond } from '../helpers/scripted-transport.js';

afterEach(() => {
  vi.unstubAllGlobals();
  vi.restoreAllMocks();
});

const script = () => [{ reply: respond(503) }, { reply: respond(200) }];
const request = { path: '/items?token=secret' };

/** The outcome with an observer that throws on every event, next to the outcome with one that does not. */
async function both(options: Partial<FailoverClientOptions>) {
  const quiet = harness(script(), { policy: { backoff: { jitter: 'none' } } });
  const expected = await quiet.run(request);
  const thrown: Error[] = [];
  const noisy = harness(script(), {
    policy: { backoff: { jitter: 'none' } },
    onEvent: (event) => {
      const error = new Error(`observer broke on ${event.type}`);
      thrown.push(error);
      throw error;
    },
    ...options,
  });
  const outcome = await noisy.run(request);
  return { expected, outcome, thrown, types: quiet.events.map((event) => event.type) };
}

/** An outcome without its Response (two Responses are never equal objects). */
const plain = ({ response, ...rest }: { response?: Response } & Record<string, unknown>) => ({
  ...rest,
  responseStatus: response?.status,
});

describe('an onEvent that throws', () => {
  it('leaves the outcome unchanged and hands each error, with its event, to onEventError', async () => {
    const seen: [unknown, DecisionEvent][] = [];
    const { expected, outcome, thrown, types } = await both({
      onEventError: (error, event) => seen.push([error, event]),
    });
    expect(plain(outcome)).toEqual(plain(expected));
    expect(outcome).toMatchObject({ status: 'succeeded', attempts: 2 });
    expect(types).toEqual([
      'attempt-started',
      'attempt-failed',
      'retry-scheduled',
      'attempt-started',
      'succeeded',
    ]);
    expect(seen.map(([error]) => error)).toEqual(thrown);
    expect(seen.map(([, event]) => event.type)).toEqual(types);
    // The event handed over is the redacted one onEvent got: no query string.
    expect(seen.every(([, event]) => 'path' in event && event.path === '/items')).toBe(true);
  });

  it("goes to the host's reportError where there is one", async () => {
    const reportError = vi.fn();
    vi.stubGlobal('reportError', reportError);
    const consoleError = vi.spyOn(console, 'error').mockImplementation(() => undefined);
    const { expected, outcome, thrown } = await both({});
    expect(plain(outcome)).toEqual(plain(expected));
    expect(reportError.mock.calls.map(([error]: unknown[]) => error)).toEqual(thrown);
    expect(consoleError).not.toHaveBeenCalled();
  });

  it('goes to console.error where the host has no reportError (Node, React Native)', async () => {
    vi.stubGlobal('reportError', undefined);
    const consoleError = vi.spyOn(console, 'error').mockImplementation(() => undefined);
    const { expected, outcome, thrown } = await both({});
    expect(plain(outcome)).toEqual(plain(expected));
    expect(consoleError.mock.calls).toEqual(
      thrown.map((error): unknown[] => [
        expect.stringMatching(/^failwise: onEvent threw on a "[a-z-]+" event$/) as unknown,
        error,
      ]),
    );
    expect(consoleError.mock.calls[0]![0]).toBe('failwise: onEvent threw on a "attempt-started" event');
  });

  it('reports an onEventError that throws itself the default way, the outcome still unchanged', async () => {
    const reportError = vi.fn();
    vi.stubGlobal('reportError', reportError);
    const second = new Error('the error handler broke too');
    const { expected, outcome, thrown } = await both({
      onEventError: () => {
        throw second;
      },
    });
    expect(plain(outcome)).toEqual(plain(expected));
    expect(reportError).toHaveBeenCalledTimes(thrown.length);
    expect(reportError.mock.calls.every(([error]: unknown[]) => error === second)).toBe(true);
  });

  it('onEventError must be a function', () => {
    expect(() =>
      createFailoverClient({
        origins: [{ id: 'primary', url: 'https://api.example.test' }],
        onEventError: 'log' as never,
      }),
    ).toThrow(new PolicyError([{ path: 'onEventError', message: 'expected a function' }]));
  });
});
