import { attemptsOf } from '../drill-harness.js';
import { manualConnectivity } from '../../connectivity/manual-connectivity.js';
import { originConfig, reply } from '../drill-origin.js';
import type { DrillScenario } from '../drill-scenario.js';

/**
 * The device loses its network while a GET's attempt hangs on the origin. rule 6: nothing more is
 * sent while offline, the request ends `failed` / `offline` (no attempts burnt on a dead network), and a
 * failure that comes back while offline never counts against the origin. The first attempt's 503 is a
 * counted failure, so had the timeout counted too, the primary would be `suspect` (suspectAfter 2).
 */
export const offlineInFlight: DrillScenario = {
  name: 'offline-in-flight',
  title: 'Offline while a GET is in flight',
  expected:
    'attempt 1 gets a 503, attempt 2 hangs; offline at 1 s: the read ends failed offline when attempt 2 times out (5 s), nothing more sent, health stays healthy; online: the next read goes out at once and succeeds',
  async run(drill) {
    const connectivity = manualConnectivity('online');
    const primary = await drill.origin('primary', (request) =>
      request.n === 1 ? reply.status(503) : request.n === 2 ? reply.hang() : reply.ok(),
    );
    const client = drill.client({ origins: [originConfig(primary)], connectivity });
    const { attemptMs } = client.policy.timeouts;
    const { suspectAfter } = client.policy.health;

    const pending = client.request({ path: '/v1/items' });
    // Attempt 1 (503) and the backoff (under 200 ms) are over by 1 s; attempt 2 is hanging.
    await drill.advance(1_000);
    const offlineAt = drill.clock.now();
    drill.mark('offline');
    connectivity.set('offline');
    const hung = primary.served[1];
    drill.check(
      'attempt 2 was in flight (hanging) when the device went offline',
      primary.served.length === 2 && hung?.reply === 'hang',
      `the origin saw ${primary.served.map((served) => served.reply).join(', ')}`,
    );

    const outcome = await drill.drive(pending);
    drill.recordOutcome(outcome);
    drill.expectEqual(
      'the read ends failed offline',
      [outcome.status, outcome.status === 'failed' ? outcome.reason : undefined],
      ['failed', 'offline'],
    );
    const ended = drill.events.find((event) => event.type === 'failed');
    const timedOutAt = (hung?.at ?? 0) + attemptMs;
    drill.check(
      `it ends when attempt 2 times out (${attemptMs / 1_000} s), without a backoff wait`,
      ended?.at === timedOutAt,
      `attempt 2 sent at ${hung?.at} ms, the request ended at ${ended?.at} ms`,
    );
    const startedOffline = drill.events.filter(
      (event) => event.type === 'attempt-started' && event.at >= offlineAt,
    );
    drill.check(
      'no attempt is started while offline: it counts the 2 that went out',
      startedOffline.length === 0 && outcome.status !== 'deferred' && outcome.attempts === 2,
      `${outcome.status === 'deferred' ? '?' : outcome.attempts} attempts counted, ${startedOffline.length} started while offline`,
    );

    await drill.advance(10_000);
    drill.expectEqual('the origin got nothing while offline', primary.served.length, 2);
    drill.expectEqual(
      `the timeout while offline did not count (1 counted failure < suspectAfter ${suspectAfter})`,
      client.health().state,
      'healthy',
    );

    const onlineAt = drill.clock.now();
    drill.mark('online');
    connectivity.set('online');
    const after = await drill.run(client, { path: '/v1/items' });
    drill.expectEqual(
      'online: the next read succeeds on its first attempt',
      [after.status, attemptsOf(after)],
      ['succeeded', 1],
    );
    drill.check(
      'it went out at once',
      primary.served[2]?.at === onlineAt,
      `sent at ${primary.served[2]?.at} ms, online at ${onlineAt} ms`,
    );
    drill.expectEqual(
      'no health-changed event: online or offline, the primary stayed healthy',
      drill.events.filter((event) => event.type === 'health-changed').length,
      0,
    );
  },
};
