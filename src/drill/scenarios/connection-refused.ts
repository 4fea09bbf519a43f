import { attemptsOf, outcomeLabel } from '../drill-harness.js';
import { originConfig } from '../drill-origin.js';
import type { DrillScenario } from '../drill-scenario.js';
import type { FailoverRequest } from '../../runtime/prepare-request.js';

/**
 * The address resolves but nobody listens: every connection is refused before the request goes out, so a
 * read and a keyless write alike may be sent again (rule 2), until `attempts.max` (3) runs out.
 * With a single origin there is nowhere to fail over to (docs/failover.md).
 */
export const connectionRefused: DrillScenario = {
  name: 'connection-refused',
  title: 'Connection refused (GET, keyless POST)',
  expected:
    'a GET and a keyless POST are each retried (connect, nothing sent): 3 attempts with a backoff wait between each, then failed attempts-exhausted',
  async run(drill) {
    const client = drill.client({
      origins: [originConfig({ id: 'primary', url: await drill.refusedUrl('primary') })],
    });
    // Full jitter: retry k waits in [0, min(maxMs, initialMs * multiplier^(k-1))).
    const { initialMs, multiplier, maxMs } = client.policy.backoff;
    const requests: Array<[string, FailoverRequest]> = [
      ['GET', { path: '/v1/items' }],
      ['keyless POST', { method: 'POST', path: '/v1/orders', body: 'order 1' }],
    ];

    for (const [name, request] of requests) {
      const eventsBefore = drill.events.length;
      const outcome = await drill.run(client, request);
      const events = drill.events.slice(eventsBefore);

      drill.expectEqual(
        `the ${name} ends failed attempts-exhausted after 3 attempts`,
        [outcomeLabel(outcome), attemptsOf(outcome)],
        ['failed attempts-exhausted', 3],
      );
      drill.expectEqual(
        `each attempt of the ${name} was refused (connect) with nothing sent`,
        events
          .filter((event) => event.type === 'attempt-failed')
          .map((event) => `${event.failureClass} sent:${event.requestSent}`),
        Array<string>(3).fill('connect sent:no'),
      );
      const waits = events.filter((event) => event.type === 'retry-scheduled');
      drill.check(
        `the ${name} waited a backoff before attempts 2 and 3 (full jitter: < 200 ms, then < 400 ms)`,
        waits.length === 2 &&
          waits.every(
            ({ delayMs = -1 }, i) => delayMs >= 0 && delayMs < Math.min(maxMs, initialMs * multiplier ** i),
          ),
        `waits ${JSON.stringify(waits.map((wait) => wait.delayMs))} ms`,
      );
      const starts = events.filter((event) => event.type === 'attempt-started').map((event) => event.at);
      drill.check(
        `each attempt of the ${name} went out when the wait before it ended`,
        starts.length === 3 && waits.every((wait, i) => starts[i + 1] === wait.at + (wait.delayMs ?? 0)),
        `attempts at ${JSON.stringify(starts)} ms`,
      );
    }

    // Nothing was applied anywhere: no server listens, and every failure above says nothing was sent.
    const health = client.health();
    drill.expectEqual(
      'with a single origin the set goes no further than suspect and keeps the primary',
      [health.state, health.activeOrigin],
      ['suspect', 'primary'],
    );
  },
};
