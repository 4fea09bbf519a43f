import { simulatedClock } from '../../src/clock/simulated-clock.js';
import { createFailoverClient } from '../../src/runtime/create-failover-client.js';
import type { FailoverClientOptions } from '../../src/runtime/client-options.js';
import type { DecisionEvent } from '../../src/runtime/decision-events.js';
import type { TransportRequest } from '../../src/transports/transport.js';
import { routedTransport } from './routed-transport.js';
import { respond } from './scripted-transport.js';

/** The one origin's URL. */
export const API = 'https://api.example.test';

/**
 * A client of one origin on a simulated clock, whose answers `reply(n)` gives for its n-th call (from 0), with
 * 10 ms of latency. Backoff has no jitter (200 ms, then 400 ms), and the client draws 0.5 wherever it draws;
 * `options` adds to that (its `policy` too).
 */
export function oneOriginClient(
  reply: (call: number) => Response,
  options: Partial<FailoverClientOptions> = {},
) {
  const clock = simulatedClock();
  let calls = 0;
  const transport = routedTransport(clock, (_request: TransportRequest) => ({
    result: { kind: 'response', response: reply(calls++) },
    latencyMs: 10,
  }));
  const events: DecisionEvent[] = [];
  const client = createFailoverClient({
    origins: [{ id: 'api', url: API }],
    clock,
    transport,
    random: () => 0.5,
    onEvent: (event) => events.push(event),
    ...options,
    policy: { backoff: { jitter: 'none' }, ...options.policy },
  });
  /** When each call was sent, in order. */
  const sentAt = () => transport.calls.map((call) => call.sentAt);
  /** A GET of `path` asked for at `at` (the clock is moved there first); its outcome, in a box to await later. */
  const requestAt = async (at: number, path: string) => {
    await clock.increment(at - clock.now());
    return { outcome: client.request({ path }) };
  };
  return { clock, transport, events, client, sentAt, requestAt };
}

/** A 200 with no body. */
export const ok = () => new Response(null, { status: 200 });

/** A response of this status with these headers. */
export const answer = (status: number, headers: Record<string, string> = {}) =>
  (respond(status, headers) as { response: Response }).response;
