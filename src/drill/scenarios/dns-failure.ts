import { attemptsOf, outcomeLabel } from '../drill-harness.js';
import { originConfig } from '../drill-origin.js';
import type { DrillScenario } from '../drill-scenario.js';

/**
 * The primary's host name does not resolve, so nothing is ever sent to it: even a keyless POST may be sent
 * again (rule 2). Three writes in a row: the first uses its 3 attempts on the primary, the second
 * brings the primary to `policy.health.failoverAfter` (5) failures in a row and moves on to the backup, the
 * third goes straight to the backup.
 */
export const dnsFailure: DrillScenario = {
  name: 'dns-failure',
  title: 'DNS failure, keyless POSTs, then failover',
  expected:
    'keyless POSTs are retried (dns, nothing sent): the 1st fails after 3 attempts; the 5th failure in a row fails over, so the 2nd succeeds on the backup on attempt 3 and the 3rd on attempt 1; the backup applies each write once',
  async run(drill) {
    const backup = await drill.origin('backup');
    const client = drill.client({
      origins: [originConfig({ id: 'primary', url: drill.unresolvableUrl('primary') }), originConfig(backup)],
    });
    const order = (n: number) => ({ method: 'POST', path: '/v1/orders', body: `order ${n}` });

    const eventsBefore = drill.events.length;
    const first = await drill.run(client, order(1));
    const firstEvents = drill.events.slice(eventsBefore);
    const second = await drill.run(client, order(2));
    const third = await drill.run(client, order(3));

    // What the policy decided.
    drill.expectEqual(
      'the 1st POST ends failed attempts-exhausted after 3 attempts on the primary',
      [outcomeLabel(first), attemptsOf(first), first.status === 'failed' ? first.origin : undefined],
      ['failed attempts-exhausted', 3, 'primary'],
    );
    // Full jitter: retry k waits in [0, min(maxMs, initialMs * multiplier^(k-1))).
    const { initialMs, multiplier, maxMs } = client.policy.backoff;
    const firstWaits = firstEvents.filter((event) => event.type === 'retry-scheduled');
    drill.check(
      'the 1st POST waited a backoff before attempts 2 and 3 (full jitter: < 200 ms, then < 400 ms)',
      firstWaits.length === 2 &&
        firstWaits.every(
          ({ delayMs = -1 }, i) => delayMs >= 0 && delayMs < Math.min(maxMs, initialMs * multiplier ** i),
        ),
      `waits ${JSON.stringify(firstWaits.map((wait) => wait.delayMs))} ms`,
    );
    drill.expectEqual(
      'the 2nd POST succeeds on the backup, on attempt 3',
      [outcomeLabel(second), attemptsOf(second), second.status === 'succeeded' ? second.origin : undefined],
      ['succeeded', 3, 'backup'],
    );
    drill.expectEqual(
      'the 3rd POST goes straight to the backup and succeeds on attempt 1',
      [outcomeLabel(third), attemptsOf(third), third.status === 'succeeded' ? third.origin : undefined],
      ['succeeded', 1, 'backup'],
    );
    const failures = drill.events.filter((event) => event.type === 'attempt-failed');
    drill.expectEqual(
      'the primary failed 5 times, each dns with nothing sent',
      failures.map((event) => `${event.origin} ${event.failureClass} sent:${event.requestSent}`),
      Array<string>(5).fill('primary dns sent:no'),
    );
    drill.expectEqual(
      'the origin set went healthy -> suspect (2nd failure) -> failedOver (5th failure)',
      drill.events
        .filter((event) => event.type === 'health-changed')
        .map((event) => `${event.from}->${event.to} ${event.criterion}`),
      ['healthy->suspect consecutive-failures', 'suspect->failedOver consecutive-failures'],
    );
    const health = client.health();
    drill.expectEqual(
      'client.health() says failedOver, reads and writes go to the backup',
      [health.state, health.activeOrigin],
      ['failedOver', 'backup'],
    );

    // What the origins saw.
    drill.expectEqual(
      'the backup saw orders 2 and 3, each applied once',
      backup.served.map((request) => `${request.method} ${request.body} applied:${request.applied}`),
      ['POST order 2 applied:true', 'POST order 3 applied:true'],
    );
    drill.expectEqual('the backup applied 2 writes', backup.writesApplied, 2);
  },
};
