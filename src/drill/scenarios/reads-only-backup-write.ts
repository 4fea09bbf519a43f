import { originConfig, reply } from '../drill-origin.js';
import type { DrillScenario } from '../drill-scenario.js';
import type { FailoverRequest } from '../../runtime/prepare-request.js';

/**
 * Traffic has failed over to a read replica (`accepts: 'reads'`). A write has nowhere to go: it must end
 * `failed` / `no-healthy-origin` at once, sent to no origin (docs/failover.md, question 2), not even a PUT,
 * which is repeatable but still changes state. Reads go on, served by the replica.
 */
export const readsOnlyBackupWrite: DrillScenario = {
  name: 'reads-only-backup-write',
  title: 'Write while on a reads-only backup',
  expected:
    'the primary answers 503: the 5th in a row fails over to the reads-only replica; a keyed POST and a PUT end failed no-healthy-origin at once, 0 attempts, nothing sent; a read succeeds on the replica',
  async run(drill) {
    drill.mark('primary down');
    const primary = await drill.origin('primary', () => reply.status(503));
    const replica = await drill.origin('replica');
    const client = drill.client({
      origins: [originConfig(primary), originConfig(replica, { accepts: 'reads' })],
    });
    const { failoverAfter } = client.policy.health;

    // Reads until traffic fails over (two with the default policy: 3 attempts each).
    for (let read = 0; read < failoverAfter && client.health().state !== 'failedOver'; read++)
      await drill.run(client, { path: '/v1/items' });
    drill.expectEqual(
      `failed over to the replica after ${failoverAfter} failures in a row`,
      [client.health().state, client.health().activeOrigin, primary.served.length],
      ['failedOver', 'replica', failoverAfter],
    );

    const servedBefore = primary.served.length + replica.served.length;
    const writes: FailoverRequest[] = [
      { method: 'POST', path: '/v1/orders', body: '{"qty":1}', idempotencyKey: 'order-1' },
      { method: 'PUT', path: '/v1/orders/1', body: '{"qty":2}' },
    ];
    const outcomes = [];
    for (const write of writes) outcomes.push(await drill.run(client, write));
    drill.expectEqual(
      'the POST and the PUT end failed no-healthy-origin, 0 attempts, at once',
      outcomes.map((outcome) =>
        outcome.status === 'failed'
          ? `${outcome.reason} ${outcome.attempts} attempts ${outcome.elapsedMs} ms`
          : outcome.status,
      ),
      ['no-healthy-origin 0 attempts 0 ms', 'no-healthy-origin 0 attempts 0 ms'],
    );
    drill.expectEqual(
      'nothing was sent: the origins saw no write',
      [
        primary.served.length + replica.served.length - servedBefore,
        replica.writesApplied,
        primary.writesApplied,
      ],
      [0, 0, 0],
    );

    const read = await drill.run(client, { path: '/v1/items' });
    drill.expectEqual(
      'a read then succeeds on the replica, first attempt',
      read.status === 'succeeded' ? [read.origin, read.attempts] : read.status,
      ['replica', 1],
    );
    drill.expectEqual(
      'the replica only ever saw reads',
      [...new Set(replica.served.map((served) => served.method))],
      ['GET'],
    );
  },
};
