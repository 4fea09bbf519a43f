import { attemptsOf, outcomeLabel } from '../drill-harness.js';
import { originConfig, reply } from '../drill-origin.js';
import type { DrillScenario } from '../drill-scenario.js';

/**
 * The origin applies the write, then never answers. The client cannot know whether the write was applied
 * (`requestSent: 'unknown'`), and without an idempotency key a second send could apply it twice, so the
 * request ends `unsafe-to-replay` after its one attempt (rule 2).
 */
export const writeTimeoutNoKey: DrillScenario = {
  name: 'write-timeout-no-key',
  title: 'Write applied, then timeout (no key)',
  expected:
    'the keyless POST ends at the 5 s attempt timeout, failed unsafe-to-replay after 1 attempt; no second request; the origin applied the write once',
  async run(drill) {
    const primary = await drill.origin('primary', () => reply.hang({ apply: true }));
    const client = drill.client({ origins: [originConfig(primary)] });
    const outcome = await drill.run(client, { method: 'POST', path: '/v1/orders', body: 'order 1' });
    // Let the rest of the budget pass: a replay, if there were one, would show up at the origin.
    await drill.advance(client.policy.budgetMs);

    // What the policy decided.
    drill.expectEqual(
      'failed unsafe-to-replay after 1 attempt',
      [outcomeLabel(outcome), attemptsOf(outcome)],
      ['failed unsafe-to-replay', 1],
    );
    drill.expectEqual(
      'the attempt failed as response-timeout, outcome unknown',
      outcome.status === 'failed' ? [outcome.failure?.class, outcome.failure?.requestSent] : [],
      ['response-timeout', 'unknown'],
    );
    drill.expectEqual(
      'the request ended at the 5 s attempt timeout',
      outcome.status === 'failed' ? outcome.elapsedMs : undefined,
      client.policy.timeouts.attemptMs,
    );
    drill.expectEqual('no retry was scheduled', drill.waitsMs(), []);

    // What the origin saw.
    drill.expectEqual(
      'the origin saw 1 request, and applied it',
      primary.served.map((request) => `${request.method} ${request.reply}`),
      ['POST hang applied'],
    );
    drill.expectEqual('the origin applied exactly 1 write', primary.writesApplied, 1);
  },
};
