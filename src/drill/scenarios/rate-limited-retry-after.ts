import { attemptsOf, outcomeLabel } from '../drill-harness.js';
import { originConfig, reply } from '../drill-origin.js';
import type { DrillScenario } from '../drill-scenario.js';

/** The origin is overloaded and says when to come back; rule 5: never sooner than that. */
export const rateLimitedRetryAfter: DrillScenario = {
  name: 'rate-limited-retry-after',
  title: '429 with Retry-After: 2',
  expected: 'the GET gets 429 with Retry-After: 2, waits at least 2000 ms, and succeeds on attempt 2',
  async run(drill) {
    const primary = await drill.origin('primary', (request) =>
      request.n === 1 ? reply.status(429, { retryAfter: '2' }) : reply.ok(),
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
      'attempt 1 failed rate-limited (429), Retry-After read as 2000 ms',
      drill.events
        .filter((event) => event.type === 'attempt-failed')
        .map((event) => [event.failureClass, event.status, event.retryAfterMs]),
      [['rate-limited', 429, 2_000]],
    );
    const waits = drill.waitsMs();
    drill.check(
      'one wait, of at least the 2000 ms the server asked for',
      waits.length === 1 && (waits[0] ?? 0) >= 2_000,
      `waits ${JSON.stringify(waits)} ms`,
    );

    // What the origin saw.
    const [first, second] = primary.served;
    drill.check(
      'the origin saw the second request no earlier than 2000 ms after the first',
      first !== undefined && second !== undefined && second.at - first.at >= 2_000,
      `requests at ${first?.at} and ${second?.at} ms`,
    );
    drill.expectEqual(
      'the origin saw 2 requests: 429, then 200',
      primary.served.map((request) => request.reply),
      ['429 retry-after 2', '200'],
    );
  },
};
