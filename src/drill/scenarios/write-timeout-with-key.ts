import { attemptsOf, outcomeLabel } from '../drill-harness.js';
import { originConfig, reply } from '../drill-origin.js';
import type { DrillScenario } from '../drill-scenario.js';

/**
 * The origin applies the write, then never answers; this time the POST carries an idempotency key, so it may
 * be sent again (rule 2): with the same key, to the same origin, which recognises the key and does
 * not apply the write a second time.
 */
export const writeTimeoutWithKey: DrillScenario = {
  name: 'write-timeout-with-key',
  title: 'Write applied, then timeout (with key)',
  expected:
    'the POST with idempotencyKey auto times out at 5 s, is retried after a backoff wait with the same key on the same origin, and succeeds on attempt 2; the origin applied the write once',
  async run(drill) {
    const primary = await drill.origin('primary', (request) =>
      request.n === 1 ? reply.hang({ apply: true }) : reply.ok(201),
    );
    const client = drill.client({ origins: [originConfig(primary)] });
    const outcome = await drill.run(client, {
      method: 'POST',
      path: '/v1/orders',
      body: 'order 1',
      idempotencyKey: 'auto',
    });

    // What the policy decided.
    drill.expectEqual(
      'succeeded on attempt 2, on the primary',
      [outcomeLabel(outcome), attemptsOf(outcome), 'origin' in outcome && outcome.origin],
      ['succeeded', 2, 'primary'],
    );
    drill.expectEqual(
      'attempt 1 failed as response-timeout, outcome unknown',
      drill.events
        .filter((event) => event.type === 'attempt-failed')
        .map((event) => `${event.attempt} ${event.failureClass} sent:${event.requestSent}`),
      ['1 response-timeout sent:unknown'],
    );
    const [first, second] = primary.served;
    const wait = drill.waitsMs()[0];
    drill.check(
      'the second attempt went out after the 5 s attempt timeout plus the backoff wait (< 200 ms)',
      first !== undefined &&
        second !== undefined &&
        wait !== undefined &&
        wait < client.policy.backoff.initialMs &&
        second.at - first.at === client.policy.timeouts.attemptMs + wait,
      `attempts at ${first?.at} and ${second?.at} ms, wait ${wait} ms`,
    );

    // What the origin saw.
    // The key is a random UUID: shown only on failure, so the report reads the same on every run.
    const sameKey = first?.idempotencyKey !== undefined && first.idempotencyKey === second?.idempotencyKey;
    drill.check(
      'both requests carried the same idempotency key',
      sameKey,
      sameKey ? undefined : `keys ${first?.idempotencyKey} and ${second?.idempotencyKey}`,
    );
    drill.expectEqual(
      'the origin saw 2 requests and applied only the first',
      primary.served.map((request) => `${request.method} ${request.reply}`),
      ['POST hang applied', 'POST 201'],
    );
    drill.expectEqual('the origin applied exactly 1 write', primary.writesApplied, 1);
  },
};
