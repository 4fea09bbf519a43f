import { attemptsOf, outcomeLabel } from '../drill-harness.js';
import { originConfig, reply } from '../drill-origin.js';
import type { DrillScenario } from '../drill-scenario.js';

/**
 * The origin answers 503 with a Retry-After. rule 5: wait at least that long; a wait longer than
 * what is left of the budget (10 s) ends the request at once with `retry-after-exceeds-budget`.
 */
export const unavailableRetryAfter: DrillScenario = {
  name: 'unavailable-retry-after',
  title: '503 with Retry-After: 3, then Retry-After: 30',
  expected:
    'a GET answered 503 Retry-After: 3 waits at least 3000 ms and succeeds on attempt 2; a GET answered 503 Retry-After: 30 (past the 10 s budget) ends at once, failed retry-after-exceeds-budget after 1 attempt',
  async run(drill) {
    const primary = await drill.origin('primary', (request) =>
      request.path === '/v1/reports'
        ? reply.status(503, { retryAfter: '30' })
        : request.n === 1
          ? reply.status(503, { retryAfter: '3' })
          : reply.ok(),
    );
    const client = drill.client({ origins: [originConfig(primary)] });

    const short = await drill.run(client, { path: '/v1/items' });
    const shortWaits = drill.waitsMs();
    const eventsBefore = drill.events.length;
    const long = await drill.run(client, { path: '/v1/reports' });
    const longEvents = drill.events.slice(eventsBefore);
    // Let the Retry-After pass: a second request, if there were one, would show up at the origin.
    await drill.advance(30_000);

    // Retry-After: 3.
    drill.expectEqual(
      'Retry-After 3: succeeded on attempt 2',
      [outcomeLabel(short), attemptsOf(short)],
      ['succeeded', 2],
    );
    drill.check(
      'Retry-After 3: one wait, of at least 3000 ms',
      shortWaits.length === 1 && (shortWaits[0] ?? 0) >= 3_000,
      `waits ${JSON.stringify(shortWaits)} ms`,
    );
    const items = primary.served.filter((request) => request.path === '/v1/items');
    const [first, second] = items;
    drill.check(
      'Retry-After 3: the origin saw the second request no earlier than 3000 ms after the first',
      items.length === 2 && first !== undefined && second !== undefined && second.at - first.at >= 3_000,
      `requests at ${JSON.stringify(items.map((request) => request.at))} ms`,
    );

    // Retry-After: 30.
    drill.expectEqual(
      'Retry-After 30: failed retry-after-exceeds-budget after 1 attempt, at once',
      [outcomeLabel(long), attemptsOf(long), long.status === 'failed' ? long.elapsedMs : undefined],
      ['failed retry-after-exceeds-budget', 1, 0],
    );
    drill.expectEqual(
      'Retry-After 30: the failure is unavailable (503), Retry-After read as 30000 ms',
      long.status === 'failed' ? [long.failure?.class, long.failure?.status, long.failure?.retryAfterMs] : [],
      ['unavailable', 503, 30_000],
    );
    drill.expectEqual(
      'Retry-After 30: no retry was scheduled',
      longEvents.filter((event) => event.type === 'retry-scheduled').length,
      0,
    );
    drill.expectEqual(
      'Retry-After 30: the origin saw 1 request, none after it',
      primary.served.filter((request) => request.path === '/v1/reports').map((request) => request.reply),
      ['503 retry-after 30'],
    );
  },
};
