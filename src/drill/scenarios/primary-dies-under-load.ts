import { retrySlots } from '../../policy/retry-budget.js';
import { originConfig, reply } from '../drill-origin.js';
import type { DrillScenario } from '../drill-scenario.js';

const READS = 20;

/**
 * The primary's process dies with many reads on the wire, and a healthy backup stands by. The client-wide retry
 * budget lets only a share of requests retry against a failing origin; a read's retry goes to another healthy
 * origin instead (Envoy's `previous_hosts`), which the budget does not ration, so the failover loses none.
 */
export const primaryDiesUnderLoad: DrillScenario = {
  name: 'primary-dies-under-load',
  title: `${READS} reads in flight when the primary dies`,
  expected: `the primary dies with ${READS} reads on the wire, a healthy backup stands by: each read's retry goes to the backup, not back to the primary, and claims nothing from the retry budget (which would let only 4 retry against the primary); all ${READS} succeed`,
  async run(drill) {
    // The primary reads each request and is about to answer when its process dies.
    const primary = await drill.origin('primary', () => reply.hang());
    const backup = await drill.origin('backup');
    const client = drill.client({ origins: [originConfig(primary), originConfig(backup)] });
    const slots = retrySlots(client.policy.retryBudget, READS);

    const pending = Array.from({ length: READS }, (_, i) => client.request({ path: `/v1/items/${i}` }));
    await drill.settle();
    const onTheWire = primary.held;
    drill.mark('primary dies');
    await primary.stop();
    const outcomes = await drill.drive(Promise.all(pending));
    outcomes.forEach((outcome) => drill.recordOutcome(outcome));

    drill.expectEqual(`all ${READS} reads were on the wire at the primary when it died`, onTheWire, READS);
    drill.expectEqual(
      `every read succeeded, on the backup, at its 2nd attempt`,
      outcomes.map((o) => (o.status === 'succeeded' ? `${o.origin} ${o.attempts}` : `${o.status}`)),
      outcomes.map(() => 'backup 2'),
    );
    const refused = drill.events.filter(
      (event) => event.type === 'failed' && event.reason === 'retry-budget-exhausted',
    );
    drill.check(
      `none ended retry-budget-exhausted, though the budget lets only ${slots} of ${READS} retry against a failing origin`,
      refused.length === 0 && slots < READS,
      `${refused.length} refused; ${slots} slots`,
    );
    const failedOnPrimary = drill.events.flatMap((event) =>
      event.type === 'attempt-failed' && event.origin === 'primary' ? [event.failureClass] : [],
    );
    drill.expectEqual(
      'each read failed once on the primary, its connection lost as the process died',
      failedOnPrimary,
      outcomes.map(() => 'connection-lost'),
    );
    drill.expectEqual(
      'the backup served each read once, and the primary got nothing after it died',
      [
        backup.served.filter((request) => !request.probe).length,
        primary.served.filter((request) => !request.probe).length,
      ],
      [READS, READS],
    );
  },
};
