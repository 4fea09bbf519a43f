import { attemptsOf, outcomeLabel } from '../drill-harness.js';
import { originConfig, reply } from '../drill-origin.js';
import type { DrillScenario } from '../drill-scenario.js';

/** How many requests meet the expired token at once. */
const CONCURRENT = 10;
const EXPIRED_TOKEN = 'expired-token';
const FRESH_TOKEN = 'fresh-token';
const EXPIRED = `Bearer ${EXPIRED_TOKEN}`;
const FRESH = `Bearer ${FRESH_TOKEN}`;

/**
 * N requests go out at once with a token the origin no longer accepts. rule 3: a 401 is never
 * retried as is; `auth.refresh()` runs at most once, shared by the concurrent requests, then each makes
 * one more attempt, at once (a refresh is not a backoff), so the origin sees 2N requests and no storm.
 */
export const expiredToken: DrillScenario = {
  name: 'expired-token',
  title: `Expired token, ${CONCURRENT} concurrent GETs (401)`,
  expected: `${CONCURRENT} concurrent GETs get 401; auth.refresh() runs once; each succeeds on attempt 2 with no wait; the origin sees ${2 * CONCURRENT} requests`,
  async run(drill) {
    const primary = await drill.origin('primary', (request) =>
      request.authorization === FRESH ? reply.ok() : reply.status(401),
    );
    let authorization = EXPIRED;
    let refreshes = 0;
    const client = drill.client({
      origins: [originConfig(primary)],
      auth: {
        headers: () => ({ authorization }),
        refresh: () => {
          refreshes += 1;
          authorization = FRESH;
          return Promise.resolve();
        },
      },
    });
    const outcomes = await drill.runAll(
      client,
      Array.from({ length: CONCURRENT }, (_, i) => ({ path: `/v1/items/${i + 1}` })),
    );

    // What the policy decided.
    drill.expectEqual('auth.refresh() was called exactly once', refreshes, 1);
    drill.expectEqual(
      `all ${CONCURRENT} requests succeeded on attempt 2`,
      outcomes.map((outcome) => `${outcomeLabel(outcome)} ${attemptsOf(outcome)}`),
      Array<string>(CONCURRENT).fill('succeeded 2'),
    );
    drill.expectEqual(
      `${CONCURRENT} first attempts failed unauthorized`,
      drill.events
        .filter((event) => event.type === 'attempt-failed')
        .map((event) => `${event.attempt} ${event.failureClass}`),
      Array<string>(CONCURRENT).fill('1 unauthorized'),
    );
    drill.expectEqual('no backoff wait was scheduled', drill.waitsMs(), []);
    drill.check(
      'no decision event carries a token (docs/rules.md, rule 9)',
      ![EXPIRED_TOKEN, FRESH_TOKEN].some((token) => JSON.stringify(drill.events).includes(token)),
    );

    // What the origin saw.
    // Requests reach the origin over real sockets, so their order across paths is not fixed; per path it is.
    drill.expectEqual(`the origin saw ${2 * CONCURRENT} requests`, primary.served.length, 2 * CONCURRENT);
    drill.expectEqual(
      'each path was asked for twice: with the expired token (401), then with the fresh one (200)',
      outcomes.map((_, i) =>
        primary.served
          .filter((request) => request.path === `/v1/items/${i + 1}`)
          .map((request) => `${request.authorization} ${request.reply}`),
      ),
      Array.from({ length: CONCURRENT }, () => [`${EXPIRED} 401`, `${FRESH} 200`]),
    );
    drill.expectEqual(
      'every request reached the origin at the same instant: no wait before the second attempts',
      [...new Set(primary.served.map((request) => request.at))],
      [0],
    );
  },
};
