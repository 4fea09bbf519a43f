import { originConfig, type Reply } from '../drill-origin.js';
import type { DrillScenario } from '../drill-scenario.js';

const REQUESTS = 200;
/** The API's quota: this many requests in each window, fixed windows from time 0. */
const QUOTA = 100;
const WINDOW_MS = 5_000;
/** How fast the app asks: one request every 25 ms, twice what the API admits. */
const EVERY_MS = 25;

/**
 * A third-party API that admits 100 requests per 5 s window and says so in its `RateLimit` and
 * `RateLimit-Policy` fields, answering 429 past the quota. One client asks it 200 times, twice as fast as
 * it admits: the client keeps to the quota the fields name, so the second half waits for the reset rather
 * than be refused, and every request is done within its budget.
 */
export const rateLimitedApi: DrillScenario = {
  name: 'rate-limited-api',
  title: `${REQUESTS} GETs to an API that admits ${QUOTA} per ${WINDOW_MS / 1000} s`,
  expected: `${REQUESTS} GETs, one every ${EVERY_MS} ms, to an API whose RateLimit fields name a quota of ${QUOTA} per ${WINDOW_MS / 1000} s: the client sends at most the quota each window, the rest wait for the reset (released over 1 s, not at once), few or no 429s, and all ${REQUESTS} succeed within their budget`,
  async run(drill) {
    const counts = new Map<number, number>();
    const api = await drill.origin('api', (request): Reply => {
      const window = Math.floor(request.at / WINDOW_MS);
      const used = counts.get(window) ?? 0;
      const admitted = used < QUOTA;
      if (admitted) counts.set(window, used + 1);
      const resetS = Math.ceil(((window + 1) * WINDOW_MS - request.at) / 1000);
      return {
        kind: 'respond',
        status: admitted ? 200 : 429,
        headers: {
          ratelimit: `"default";r=${admitted ? QUOTA - used - 1 : 0};t=${resetS}`,
          'ratelimit-policy': `"default";q=${QUOTA};w=${WINDOW_MS / 1000}`,
        },
      };
    });
    const client = drill.client({ origins: [originConfig(api)] });

    drill.mark(`${REQUESTS} GETs, one every ${EVERY_MS} ms`);
    const pending = [];
    for (let i = 0; i < REQUESTS; i++) {
      pending.push(client.request({ path: `/v1/items/${i}` }));
      await drill.advance(EVERY_MS);
    }
    const outcomes = await drill.drive(Promise.all(pending));
    outcomes.forEach((outcome) => drill.recordOutcome(outcome));

    drill.expectEqual(
      `all ${REQUESTS} GETs succeeded`,
      outcomes.filter((outcome) => outcome.status === 'succeeded').length,
      REQUESTS,
    );
    const refused = api.served.filter((request) => request.reply.startsWith('429'));
    drill.check(
      'the API answered 429 to at most 2 requests',
      refused.length <= 2,
      `${refused.length} answered 429`,
    );
    const firstWindow = api.served.filter((request) => request.at < WINDOW_MS && request.reply === '200');
    drill.expectEqual(`the API admitted ${QUOTA} in its first window`, firstWindow.length, QUOTA);
    const held = drill.events.filter((event) => event.type === 'waiting-for-hold');
    drill.check(
      `the requests past the quota waited for the reset (about ${REQUESTS - QUOTA})`,
      held.length >= REQUESTS - QUOTA - 2,
      `${held.length} waited`,
    );
    // Released over releaseSpreadMs after the reset, not in one instant.
    const released = new Set(api.served.filter((request) => request.at >= WINDOW_MS).map((r) => r.at));
    drill.check(
      'those were released over a spread of times after the reset, not at one instant',
      released.size > 10,
      `${released.size} distinct times`,
    );
    const slowest = Math.max(...outcomes.map((outcome) => ('elapsedMs' in outcome ? outcome.elapsedMs : 0)));
    drill.check(
      `every GET ended within its budget (${client.policy.budgetMs} ms)`,
      slowest < client.policy.budgetMs,
      `slowest ${slowest} ms`,
    );
  },
};
