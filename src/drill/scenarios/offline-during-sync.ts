import { manualConnectivity } from '../../connectivity/manual-connectivity.js';
import { originConfig, reply } from '../drill-origin.js';
import type { DrillScenario } from '../drill-scenario.js';

const SYNC_KEYS = ['sync-1', 'sync-2', 'sync-3'];

/**
 * Durable writes made offline wait in the outbox; going online wakes it (rule 6) and it sends them
 * one by one, in order. The device loses its network again while sync-2 is on the wire: the origin applies
 * it and the connection drops. Sync-2 must stay queued (the failure is the device's, rule 6) and go
 * out again, with its key, as soon as the device is back; the origin's key record then keeps it applied once.
 * Sync-2's first attempt gets a 503, a counted failure, so had the drop counted too the primary would be
 * `suspect` (suspectAfter 2).
 */
export const offlineDuringSync: DrillScenario = {
  name: 'offline-during-sync',
  title: 'Offline during a queued sync',
  expected:
    '3 keyed durable writes made offline are deferred, nothing sent; online at 60 s: sent in order; offline again while sync-2 is applied and dropped: it stays queued, health healthy; online 10 s later: resent at once with its key; each write applied once, in order, outbox empty',
  async run(drill) {
    const connectivity = manualConnectivity('offline');
    let dropped = false;
    const primary = await drill.origin('primary', (request) => {
      if (request.idempotencyKey !== 'sync-2' || dropped) return reply.ok(201);
      if (request.n === 2) return reply.status(503);
      // The device loses its network as the write lands: the origin applies it, the connection breaks.
      dropped = true;
      drill.mark('offline');
      connectivity.set('offline');
      return reply.drop({ apply: true });
    });
    const client = drill.client({ origins: [originConfig(primary)], connectivity });
    const { suspectAfter } = client.policy.health;
    const sends = () => primary.served.map((served) => served.idempotencyKey);

    drill.mark('offline');
    const queued = [];
    for (const [index, key] of SYNC_KEYS.entries())
      queued.push(
        await drill.run(client, {
          method: 'POST',
          path: '/v1/sync',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ n: index + 1 }),
          lifetime: 'durable',
          idempotencyKey: key,
        }),
      );
    drill.expectEqual(
      'each write made offline is deferred (offline)',
      queued.map((outcome) => (outcome.status === 'deferred' ? outcome.reason : outcome.status)),
      ['offline', 'offline', 'offline'],
    );
    await drill.advance(60_000);
    drill.expectEqual('nothing is sent in 60 s offline', primary.served.length, 0);
    drill.expectEqual('the outbox holds the 3 writes', await client.outbox.size(), 3);

    const onlineAt = drill.clock.now();
    drill.mark('online');
    connectivity.set('online');
    await drill.advance(1_000);
    drill.check(
      'online: the outbox sends at once, in order (sync-1, then sync-2)',
      primary.served[0]?.at === onlineAt &&
        JSON.stringify(sends()) === JSON.stringify(['sync-1', 'sync-2', 'sync-2']),
      `sent ${sends().join(', ')}, the first at ${primary.served[0]?.at} ms`,
    );
    const inFlight = primary.served[2];
    drill.check(
      'sync-2 reached the origin and was applied as the device went offline',
      inFlight?.reply === 'drop applied' && connectivity.current() === 'offline',
      `the origin's reply: ${inFlight?.reply}`,
    );

    await drill.advance(9_000);
    const waiting = await client.outbox.list();
    drill.expectEqual(
      'offline again: sync-2 stays in the outbox, pending, sync-3 behind it',
      waiting.map((entry) => `${entry.idempotencyKey} ${entry.status}`),
      ['sync-2 pending', 'sync-3 pending'],
    );
    drill.expectEqual(
      'sync-2 counts the 2 attempts that went out, none while offline',
      waiting[0]?.attempts,
      2,
    );
    drill.expectEqual('nothing is sent while offline again', primary.served.length, 3);
    drill.expectEqual(
      `the drop while offline did not count (1 counted failure < suspectAfter ${suspectAfter})`,
      client.health().state,
      'healthy',
    );

    const backAt = drill.clock.now();
    drill.mark('online');
    connectivity.set('online');
    await drill.advance(1_000);
    const resent = primary.served[3];
    drill.check(
      'online again: sync-2 is resent at once, with its key',
      resent?.at === backAt && resent.idempotencyKey === 'sync-2',
      `then ${primary.served
        .slice(3)
        .map((served) => `${served.idempotencyKey} at ${served.at} ms`)
        .join(', ')}`,
    );
    drill.expectEqual(
      'each write is applied exactly once, in order',
      primary.served.filter((served) => served.applied).map((served) => served.idempotencyKey),
      SYNC_KEYS,
    );
    drill.expectEqual('the outbox is empty', await client.outbox.size(), 0);
    drill.expectEqual(
      'no entry dead-lettered, no health-changed event',
      drill.events.filter(
        (event) =>
          event.type === 'health-changed' ||
          (event.type === 'outbox-changed' && event.change === 'entry-dead-lettered'),
      ).length,
      0,
    );
  },
};
