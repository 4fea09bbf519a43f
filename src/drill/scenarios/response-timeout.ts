import { attemptsOf } from '../drill-harness.js';
import { originConfig, reply } from '../drill-origin.js';
import type { DrillScenario } from '../drill-scenario.js';

/** The origin reads the request and never answers: only the attempt timeout can end the attempt. */
export const responseTimeout: DrillScenario = {
  name: 'response-timeout',
  title: 'Timeout before any response (GET)',
  expected:
    'the attempt ends at policy.timeouts.attemptMs (5 s); the read is retried after a backoff wait and succeeds on attempt 2',
  async run(drill) {
    const primary = await drill.origin('primary', (request) => (request.n === 1 ? reply.hang() : reply.ok()));
    const client = drill.client({ origins: [originConfig(primary)] });
    const outcome = await drill.run(client, { path: '/v1/items' });

    drill.expectEqual('succeeded on attempt 2', [outcome.status, attemptsOf(outcome)], ['succeeded', 2]);
    const [first, second] = primary.served;
    const wait = drill.waitsMs()[0];
    drill.check(
      'the second attempt went out after the 5 s attempt timeout plus the backoff wait',
      first !== undefined &&
        second !== undefined &&
        wait !== undefined &&
        second.at - first.at === 5_000 + wait,
      `attempts at ${first?.at} and ${second?.at} ms, wait ${wait} ms`,
    );
    drill.expectEqual('the origin saw 2 requests', primary.served.length, 2);
  },
};
