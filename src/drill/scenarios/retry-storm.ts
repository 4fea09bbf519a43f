import { retrySlots } from '../../policy/retry-budget.js';
import { healthy, originConfig, reply } from '../drill-origin.js';
import type { DrillScenario } from '../drill-scenario.js';

const READS = 20;

/**
 * Many requests meet an outage at once. Each may retry (3 attempts), but the client-wide retry budget lets
 * only its share of them do so, so the origin sees about the requests themselves, not three times as many.
 */
export const retryStorm: DrillScenario = {
  name: 'retry-storm',
  title: `${READS} concurrent reads meet a 503 outage`,
  expected: `${READS} reads at once get 503: the retry budget lets at most 4 of them retry (20% of ${READS}), the others end retry-budget-exhausted at once; the origin sees at most 28 requests, not 60`,
  async run(drill) {
    const primary = await drill.origin('primary', () => reply.status(503));
    const client = drill.client({ origins: [originConfig(primary)] });
    const { attempts, retryBudget } = client.policy;
    const slots = retrySlots(retryBudget, READS);

    drill.mark('outage');
    const outcomes = await drill.runAll(
      client,
      Array.from({ length: READS }, (_, i) => ({ path: `/v1/items/${i}` })),
    );
    const reasons = outcomes.map((outcome) =>
      outcome.status === 'failed' ? outcome.reason : outcome.status,
    );
    const retried = reasons.filter((reason) => reason === 'attempts-exhausted').length;
    drill.check(
      `${retryBudget.minConcurrency} to ${slots} reads retried (${retryBudget.percent}% of ${READS}, at least minConcurrency), until their attempts ran out`,
      retried >= retryBudget.minConcurrency && retried <= slots,
      `${retried} retried`,
    );
    drill.expectEqual(
      'every other read ended retry-budget-exhausted',
      reasons.filter((reason) => reason === 'retry-budget-exhausted').length,
      READS - retried,
    );
    const fastEnds = drill.events
      .filter((event) => event.type === 'failed')
      .filter((event) => event.reason === 'retry-budget-exhausted');
    drill.check(
      'each of those ended when its first attempt did, with no wait',
      fastEnds.every((event) => event.elapsedMs === 0 && event.attempt === 1),
      `latest end: attempt ${Math.max(...fastEnds.map((e) => e.attempt))} at ${Math.max(...fastEnds.map((e) => e.elapsedMs))} ms`,
    );
    drill.expectEqual(
      `the origin saw ${READS} requests plus ${attempts.max - 1} per read that retried: at most ${READS + slots * (attempts.max - 1)}, not ${READS * attempts.max}`,
      primary.served.length,
      READS + retried * (attempts.max - 1),
    );

    drill.mark('origin back');
    primary.behave = healthy;
    const after = await drill.run(client, { path: '/v1/items' });
    drill.expectEqual('after the outage a read succeeds at once', after.status, 'succeeded');
  },
};
