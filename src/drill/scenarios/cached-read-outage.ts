import { healthy, originConfig } from '../drill-origin.js';
import type { DrillScenario } from '../drill-scenario.js';

/**
 * A screen that can show old data reads with `lifetime: 'cached'`. While the origin is down the read is
 * answered from the cache, saying it is stale and how old; once the origin is back, the read is fresh.
 */
export const cachedReadOutage: DrillScenario = {
  name: 'cached-read-outage',
  title: 'Cached read during an outage',
  expected:
    'a cached read fills the cache; with the origin down 60 s later the read is retried (3 attempts), then answered from the cache, stale, with its age; back up: fresh again',
  async run(drill) {
    const primary = await drill.origin('primary');
    const client = drill.client({ origins: [originConfig(primary)] });
    const read = { path: '/v1/notes', lifetime: 'cached' } as const;

    const first = await drill.run(client, read);
    drill.expectEqual(
      'the first read is fresh from the origin',
      [first.status, first.status === 'succeeded' && first.stale === true],
      ['succeeded', false],
    );

    await drill.advance(60_000);
    drill.mark('origin down');
    await primary.stop();
    const down = await drill.run(client, read);
    // The copy's age: the 60 s, plus the time the read spent on its own retries before giving up on the origin.
    const retriesMs = down.status === 'succeeded' ? down.elapsedMs : 0;
    drill.expectEqual(
      'with the origin down: succeeded from the cache, stale, as old as it is',
      down.status === 'succeeded' ? { stale: down.stale, ageMs: down.ageMs } : down.status,
      { stale: true, ageMs: 60_000 + retriesMs },
    );
    const failed = drill.events.filter((event) => event.type === 'attempt-failed');
    drill.check(
      `the read tried the origin first, with its retries (${client.policy.attempts.max} attempts, each a network failure)`,
      failed.length === client.policy.attempts.max &&
        failed.every((event) => event.failureClass === 'connect' || event.failureClass === 'connection-lost'),
      failed.map((event) => event.failureClass).join(', '),
    );
    drill.expectEqual(
      'the stale answer is announced: a succeeded event with stale: true',
      drill.events.filter((event) => event.type === 'succeeded' && event.stale === true).length,
      1,
    );

    drill.mark('origin back');
    await primary.restart();
    primary.behave = healthy;
    const back = await drill.run(client, read);
    drill.expectEqual(
      'back up: fresh from the origin again',
      [back.status, back.status === 'succeeded' && back.stale === true],
      ['succeeded', false],
    );
    drill.expectEqual('the origin served the 2 fresh reads', primary.served.length, 2);
  },
};
