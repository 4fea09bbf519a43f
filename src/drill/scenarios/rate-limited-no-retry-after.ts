import { attemptsOf, outcomeLabel } from '../drill-harness.js';
import { originConfig, reply } from '../drill-origin.js';
import type { DrillScenario } from '../drill-scenario.js';

/** The origin is overloaded but does not say for how long: the policy's own backoff decides the wait. */
export const rateLimitedNoRetryAfter: DrillScenario = {
  name: 'rate-limited-no-retry-after',
  title: '429 without Retry-After',
  expected:
    'the GET gets 429 without Retry-After, is retried after a backoff wait in [0, 200) ms (full jitter), and succeeds on attempt 2',
  async run(drill) {
    const primary = await drill.origin('primary', (request) =>
      request.n === 1 ? reply.status(429) : reply.ok(),
    );
    const client = drill.client({ origins: [originConfig(primary)] });
    const outcome = await drill.run(client, { path: '/v1/items' });

    // What the policy decided.
    drill.expectEqual(
      'succeeded on attempt 2',
      [outcomeLabel(outcome), attemptsOf(outcome)],
      ['succeeded', 2],
    );
    drill.expectEqual(
      'attempt 1 failed rate-limited (429), with no Retry-After',
      drill.events
        .filter((event) => event.type === 'attempt-failed')
        .map((event) => [event.failureClass, event.status, event.retryAfterMs ?? null]),
      [['rate-limited', 429, null]],
    );
    // Full jitter: the first retry waits in [0, min(maxMs, initialMs)).
    const { initialMs, maxMs } = client.policy.backoff;
    const waits = drill.waitsMs();
    const wait = waits[0] ?? -1;
    drill.check(
      'one backoff wait, within the policy bounds [0, 200) ms',
      waits.length === 1 && wait >= 0 && wait < Math.min(initialMs, maxMs),
      `waits ${JSON.stringify(waits)} ms`,
    );

    // What the origin saw.
    const [first, second] = primary.served;
    drill.check(
      'the origin saw the second request exactly the backoff wait after the first',
      first !== undefined && second !== undefined && second.at - first.at === wait,
      `requests at ${first?.at} and ${second?.at} ms, wait ${wait} ms`,
    );
    drill.expectEqual(
      'the origin saw 2 requests: 429, then 200',
      primary.served.map((request) => request.reply),
      ['429', '200'],
    );
  },
};
