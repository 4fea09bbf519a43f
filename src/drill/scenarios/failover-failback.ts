import { originConfig } from '../drill-origin.js';
import type { DrillScenario } from '../drill-scenario.js';
import type { FailoverRequest } from '../../runtime/prepare-request.js';

const DOWN_AT = 3_000;
const BACK_AT = 20_000;
const END_AT = 60_000;
/** Keyed writes: one while traffic is failed over, one after the failback. */
const WRITES_AT = [24_000, 56_000];

/**
 * The primary's process dies (connections refused) and comes back; a read every 2 s and two keyed writes
 * keep traffic going. Default policy: `failoverAfter` (5) counted failures in a row fail traffic over, it
 * stays on the backup for `minFailedOverMs` (30 s), then `probeSuccesses` (3) probes `probeIntervalMs` (5 s)
 * apart fail it back (docs/failover.md). The primary is back long before that: only the probes may reach it.
 */
export const failoverFailback: DrillScenario = {
  name: 'failover-failback',
  title: 'Primary outage, failover, failback',
  expected:
    'the 5th refused connection in a row fails over (each read before it is retried on the backup and succeeds); only 3 probes reach the primary, at +30, +35 and +40 s; traffic fails back at +40 s; each write applied once',
  async run(drill) {
    const primary = await drill.origin('primary');
    const backup = await drill.origin('backup');
    const client = drill.client({ origins: [originConfig(primary), originConfig(backup)] });
    const { failoverAfter, suspectAfter, minFailedOverMs, probeSuccesses, probeIntervalMs } =
      client.policy.health;

    const sent: Array<{ at: number; method: string; status: string; origin: string | undefined }> = [];
    const send = async (request: FailoverRequest) => {
      const at = drill.clock.now();
      const outcome = await drill.run(client, request);
      const origin = outcome.status === 'deferred' ? undefined : outcome.origin;
      sent.push({ at, method: request.method ?? 'GET', status: outcome.status, origin });
    };
    for (let at = 0; at <= END_AT; at += 1_000) {
      await drill.advance(at - drill.clock.now());
      if (at === DOWN_AT) {
        drill.mark('primary down');
        await primary.stop();
      }
      if (at === BACK_AT) {
        drill.mark('primary back');
        await primary.restart();
      }
      if (at % 2_000 === 0) await send({ path: '/v1/items' });
      if (WRITES_AT.includes(at))
        await send({
          method: 'POST',
          path: '/v1/orders',
          body: `{"at":${at}}`,
          idempotencyKey: `order-${at}`,
        });
    }

    const changes = drill.events.filter((event) => event.type === 'health-changed');
    drill.expectEqual(
      'health: healthy → suspect → failedOver → probingFailback → healthy',
      changes.map((change) => `${change.from}→${change.to} (${change.criterion})`),
      [
        'healthy→suspect (consecutive-failures)',
        'suspect→failedOver (consecutive-failures)',
        'failedOver→probingFailback (min-failed-over-elapsed)',
        'probingFailback→healthy (probes-succeeded)',
      ],
    );
    const [suspectAt, failoverAt, probingAt, failbackAt] = changes.map((change) => change.at);
    const failuresBy = (at: number | undefined) =>
      drill.events.filter(
        (event) => event.type === 'attempt-failed' && event.origin === 'primary' && event.at <= (at ?? -1),
      ).length;
    drill.expectEqual(
      `suspect at failure ${suspectAfter} in a row, failover at failure ${failoverAfter}`,
      [failuresBy(suspectAt), failuresBy(failoverAt)],
      [suspectAfter, failoverAfter],
    );
    drill.expectEqual(
      `probing starts minFailedOverMs (${minFailedOverMs / 1_000} s) after the failover`,
      (probingAt ?? 0) - (failoverAt ?? 0),
      minFailedOverMs,
    );
    const probes = primary.served.filter((served) => served.probe).map((served) => served.at);
    const probesWanted = Array.from(
      { length: probeSuccesses },
      (_, k) => (probingAt ?? 0) + k * probeIntervalMs,
    );
    drill.expectEqual(
      `${probeSuccesses} probes, ${probeIntervalMs / 1_000} s apart from then on, the last one fails back`,
      [probes, failbackAt],
      [probesWanted, probesWanted.at(-1)],
    );

    const onPrimaryWhileFailedOver = drill.events.filter(
      (event) =>
        event.type === 'attempt-started' &&
        event.origin === 'primary' &&
        event.at > (failoverAt ?? 0) &&
        event.at < (failbackAt ?? END_AT),
    );
    const servedWhileFailedOver = primary.served.filter(
      (served) => !served.probe && served.at < (failbackAt ?? END_AT),
    );
    drill.check(
      'while failed over, nothing but the probes reaches the primary',
      onPrimaryWhileFailedOver.length === 0 && servedWhileFailedOver.every((served) => served.at < DOWN_AT),
      `${onPrimaryWhileFailedOver.length} attempts sent to it, it saw ${primary.served.length - probes.length} requests`,
    );
    const where = (from: number, to: number) => [
      ...new Set(sent.filter((s) => s.at >= from && s.at < to).map((s) => `${s.status} ${s.origin}`)),
    ];
    drill.expectEqual(
      'requests succeed on the primary before the outage and after the failback, on the backup in between',
      [
        where(0, DOWN_AT),
        where((failoverAt ?? 0) + 1, failbackAt ?? END_AT),
        where(failbackAt ?? END_AT, END_AT + 1),
      ],
      [['succeeded primary'], ['succeeded backup'], ['succeeded primary']],
    );
    const beforeFailover = sent.filter((s) => s.at >= DOWN_AT && s.at <= (failoverAt ?? 0));
    drill.expectEqual(
      `each of the ${failoverAfter} reads of the outage before the failover succeeds: its retry goes to the healthy backup, not back to the primary that refused it`,
      beforeFailover.map((s) => `${s.status} ${s.origin}`),
      beforeFailover.map(() => 'succeeded backup'),
    );
    drill.expectEqual(`${failoverAfter} reads before the failover`, beforeFailover.length, failoverAfter);
    drill.expectEqual(
      'each write is applied once: one on the backup, one on the primary',
      [backup.writesApplied, primary.writesApplied],
      [1, 1],
    );
  },
};
