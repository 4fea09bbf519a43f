import { originConfig, reply } from '../drill-origin.js';
import type { DrillScenario } from '../drill-scenario.js';
import type { Outcome } from '../../policy/outcome.js';
import type { Policy } from '../../policy/policy.js';

const DURATION_MS = 600_000;
const EVERY_MS = 2_000;

/**
 * The most failovers the health policy allows in `durationMs` (docs/failover.md, question 5): after the k-th
 * failover traffic stays off the primary for its failed-over time (minFailedOverMs, doubled on each failover
 * soon after a failback, at most maxFailedOverMs), then needs probeSuccesses probes probeIntervalMs apart
 * before it can return and fail over again.
 */
function maxFailovers(health: Policy['health'], durationMs: number): number {
  const { minFailedOverMs, maxFailedOverMs, probeSuccesses, probeIntervalMs } = health;
  let count = 0;
  let failedOverMs = minFailedOverMs;
  for (let at = 0; at <= durationMs; at += failedOverMs + (probeSuccesses - 1) * probeIntervalMs) {
    count += 1;
    if (count > 1) failedOverMs = Math.min(failedOverMs * 2, maxFailedOverMs);
  }
  return count;
}

/**
 * A primary whose health check passes but which answers 503 to every other API request: it never fails
 * `failoverAfter` times in a row, so only the failure ratio can catch it, and every failback lets it trip
 * the ratio again. Hysteresis must keep the switches few and ever further apart (docs/failover.md).
 */
export const flappingPrimary: DrillScenario = {
  name: 'flapping-primary',
  title: 'Flapping primary (every other request 503)',
  expected:
    'a read every 2 s for 10 min: failovers on the failure ratio, at most 5 (the bound from the policy), failed over 30, 60, 120, 240 s (doubling), only probes reach the primary meanwhile, all 300 reads end',
  async run(drill) {
    let apiRequests = 0;
    const primary = await drill.origin('primary', (request) => {
      if (request.probe) return reply.ok();
      apiRequests += 1;
      return apiRequests % 2 === 1 ? reply.status(503) : reply.ok();
    });
    const backup = await drill.origin('backup');
    const client = drill.client({ origins: [originConfig(primary), originConfig(backup)] });
    const { health } = client.policy;
    const { minFailedOverMs, maxFailedOverMs, probeSuccesses, probeIntervalMs } = health;

    drill.mark('primary flapping');
    const outcomes: Outcome[] = [];
    for (let at = 0; at < DURATION_MS; at += EVERY_MS) {
      await drill.advance(at - drill.clock.now());
      outcomes.push(await drill.run(client, { path: '/v1/feed' }));
    }

    const ended = outcomes.filter(
      (outcome) => outcome.status === 'succeeded' || (outcome.status === 'failed' && outcome.reason),
    );
    const succeeded = outcomes.filter((outcome) => outcome.status === 'succeeded').length;
    drill.check(
      `no read is lost: all ${DURATION_MS / EVERY_MS} end, succeeded or failed with a reason`,
      outcomes.length === DURATION_MS / EVERY_MS && ended.length === outcomes.length,
      `${outcomes.length} outcomes, ${succeeded} succeeded`,
    );

    const changes = drill.events.filter((event) => event.type === 'health-changed');
    const failovers = changes.filter((change) => change.to === 'failedOver');
    const probing = changes.filter((change) => change.to === 'probingFailback');
    const failbacks = changes.filter((change) => change.to === 'healthy');
    const bound = maxFailovers(health, DURATION_MS);
    drill.check(
      `it flaps, and hysteresis bounds it: 2 to ${bound} failovers in ${DURATION_MS / 60_000} min`,
      failovers.length >= 2 && failovers.length <= bound,
      `${failovers.length} failovers, at ${failovers.map((change) => change.at / 1_000).join(', ')} s`,
    );
    drill.expectEqual(
      'every failover is on the failure ratio, every failback on the probes',
      [...new Set(failovers.map((change) => change.criterion))].concat([
        ...new Set(failbacks.map((change) => change.criterion)),
      ]),
      ['failure-ratio', 'probes-succeeded'],
    );

    // The failed-over time doubles when traffic fails over again within maxFailedOverMs of a failback.
    const expectedMs: number[] = [];
    for (const [k, failover] of failovers.entries()) {
      const previous = expectedMs[k - 1];
      const failback = failbacks[k - 1];
      expectedMs.push(
        previous !== undefined && failback !== undefined && failover.at - failback.at < maxFailedOverMs
          ? Math.min(previous * 2, maxFailedOverMs)
          : minFailedOverMs,
      );
    }
    const failedOverMs = probing.map((change, k) => change.at - (failovers[k]?.at ?? 0));
    drill.expectEqual(
      'each stay on the backup lasts its failed-over time (30 s, doubling)',
      failedOverMs.map((ms) => ms / 1_000),
      expectedMs.slice(0, probing.length).map((ms) => ms / 1_000),
    );
    const gaps = failovers.slice(1).map((failover, k) => failover.at - (failovers[k]?.at ?? 0));
    drill.check(
      `consecutive failovers are at least their failed-over time plus ${probeSuccesses - 1} probe intervals apart`,
      gaps.every((gap, k) => gap >= (expectedMs[k] ?? 0) + (probeSuccesses - 1) * probeIntervalMs),
      `gaps ${gaps.map((gap) => gap / 1_000).join(', ')} s`,
    );

    const offPrimary = failovers.map((failover, k) => [failover.at, failbacks[k]?.at ?? Infinity] as const);
    const liveWhileOff = primary.served.filter(
      (served) => !served.probe && offPrimary.some(([from, to]) => served.at > from && served.at < to),
    );
    drill.expectEqual('while failed over, only probes reach the primary', liveWhileOff.length, 0);
  },
};
