import { attemptsOf, outcomeLabel } from '../drill-harness.js';
import { originConfig, reply } from '../drill-origin.js';
import type { DrillScenario } from '../drill-scenario.js';

const WAITING = 5;

/**
 * A 503 with Retry-After speaks for the origin, not only for the request that got it. Every new
 * attempt of the client to that origin waits for the hold; a request whose budget ends first takes the backup.
 */
export const sharedRetryAfter: DrillScenario = {
  name: 'shared-retry-after',
  title: '503 Retry-After: 3 heard by every request of the client',
  expected: `one GET answered 503 Retry-After: 3 holds the primary for the whole client: ${WAITING} GETs started during the hold wait for it (the primary sees nothing for 3 s, then each once), the GET that got the 503 retries on the backup, a GET with a 2 s deadline goes to the backup at once; health() shows the hold`,
  async run(drill) {
    const primary = await drill.origin('primary', (request) =>
      request.n === 1 ? reply.status(503, { retryAfter: '3' }) : reply.ok(),
    );
    const backup = await drill.origin('backup');
    const client = drill.client({ origins: [originConfig(primary), originConfig(backup)] });

    drill.mark('503 Retry-After: 3');
    const first = client.request({ path: '/v1/items/first' });
    // Let the 503 come back, then start more requests while the hold is in force.
    await drill.advance(100);
    const answeredAt = primary.served[0]?.at ?? 0;
    const holdUntil = client.health().holdUntil['primary'];
    const waiting = Array.from({ length: WAITING }, (_, i) => client.request({ path: `/v1/items/${i}` }));
    const hurried = client.request({ path: '/v1/items/hurried', deadlineMs: 2_000 });
    const outcomes = await drill.drive(Promise.all([first, ...waiting, hurried]));
    outcomes.forEach((outcome) => drill.recordOutcome(outcome));
    const [firstOutcome, ...rest] = outcomes;
    const hurriedOutcome = rest.pop()!;

    drill.check(
      'health() shows the hold on the primary, 3000 ms after the 503',
      holdUntil !== undefined && holdUntil - answeredAt >= 3_000 && holdUntil - answeredAt < 3_100,
      `holdUntil ${holdUntil}, 503 at ${answeredAt}`,
    );
    drill.expectEqual(
      'the GET that got the 503 succeeded on attempt 2, on the backup (a retry goes to a healthy origin other than the one that failed it)',
      [outcomeLabel(firstOutcome), attemptsOf(firstOutcome), 'origin' in firstOutcome && firstOutcome.origin],
      ['succeeded', 2, 'backup'],
    );
    drill.expectEqual(
      `the ${WAITING} GETs started during the hold each succeeded on the primary in 1 attempt`,
      rest.map((outcome) => [
        outcomeLabel(outcome),
        attemptsOf(outcome),
        'origin' in outcome && outcome.origin,
      ]),
      rest.map(() => ['succeeded', 1, 'primary']),
    );
    const during = primary.served.slice(1).filter((request) => request.at < answeredAt + 3_000);
    drill.check(
      'the primary saw nothing until 3000 ms after its 503',
      during.length === 0 && primary.served.length === 1 + WAITING,
      `requests at ${JSON.stringify(primary.served.map((request) => request.at))} ms`,
    );
    drill.expectEqual(
      `${WAITING} waiting-for-hold events, and one origin-held`,
      [
        drill.events.filter((event) => event.type === 'waiting-for-hold').length,
        drill.events.filter((event) => event.type === 'origin-held').length,
      ],
      [WAITING, 1],
    );
    drill.expectEqual(
      'the GET with a 2 s deadline went to the backup at once (the hold outlasts its budget)',
      [
        outcomeLabel(hurriedOutcome),
        'origin' in hurriedOutcome && hurriedOutcome.origin,
        backup.served.filter((request) => request.path === '/v1/items/hurried').map((r) => r.at < 3_000),
      ],
      ['succeeded', 'backup', [true]],
    );
    drill.expectEqual('after the hold, health() shows none', client.health().holdUntil, {});
  },
};
