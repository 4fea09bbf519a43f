import { simulatedClock, type SimulatedClock } from '../../src/clock/simulated-clock.js';
import { createFailoverClient, type FailoverClient } from '../../src/runtime/create-failover-client.js';
import type { FailoverClientOptions } from '../../src/runtime/client-options.js';
import type { DecisionEvent } from '../../src/runtime/decision-events.js';
import type { FailoverRequest } from '../../src/runtime/prepare-request.js';
import type { Outcome } from '../../src/policy/outcome.js';
import { scriptedTransport, type ScriptedReply, type ScriptedTransport } from './scripted-transport.js';

export interface Harness {
  client: FailoverClient;
  clock: SimulatedClock;
  transport: ScriptedTransport;
  events: DecisionEvent[];
  /** Starts a request and runs the simulated clock until it ends. */
  run(request: FailoverRequest): Promise<Outcome>;
}

/** A client on a simulated clock and a scripted transport, with its decision events collected. */
export function harness(script: ScriptedReply[], options: Partial<FailoverClientOptions> = {}): Harness {
  const clock = simulatedClock();
  const transport = scriptedTransport(clock, script);
  const events: DecisionEvent[] = [];
  const client = createFailoverClient({
    origins: [{ id: 'primary', url: 'https://api.example.test' }],
    clock,
    transport,
    random: () => 0.5,
    onEvent: (event) => events.push(event),
    ...options,
  });
  return {
    client,
    clock,
    transport,
    events,
    async run(request) {
      const outcome = client.request(request);
      await clock.runAll();
      return outcome;
    },
  };
}
