import { attemptsOf, outcomeLabel } from '../drill-harness.js';
import { originConfig, reply } from '../drill-origin.js';
import type { DrillScenario } from '../drill-scenario.js';
import type { FailoverRequest } from '../../runtime/prepare-request.js';

/**
 * The origin answers 503 (without Retry-After) the first time each path is asked for. A 503 means the request
 * reached the server (`requestSent: 'yes'`), so rule 2 decides: a read and a write with an
 * idempotency key are sent again after a backoff wait; a keyless write is not (`unsafe-to-replay`).
 */
export const unavailableNoRetryAfter: DrillScenario = {
  name: 'unavailable-no-retry-after',
  title: '503 without Retry-After (GET, POSTs)',
  expected:
    'after a 503, a GET and a POST with idempotencyKey auto are retried after a backoff wait in [0, 200) ms and succeed on attempt 2 (the write applied once); a keyless POST is not replayed: failed unsafe-to-replay after 1 attempt',
  async run(drill) {
    const answered = new Set<string>();
    const primary = await drill.origin('primary', (request) => {
      if (answered.has(request.path)) return reply.ok(request.method === 'GET' ? 200 : 201);
      answered.add(request.path);
      return reply.status(503);
    });
    const client = drill.client({ origins: [originConfig(primary)] });
    // Full jitter: the first retry waits in [0, min(maxMs, initialMs)).
    const { initialMs, maxMs } = client.policy.backoff;

    const retried: Array<[string, FailoverRequest]> = [
      ['GET', { path: '/v1/items' }],
      ['POST with key', { method: 'POST', path: '/v1/orders', body: 'order 1', idempotencyKey: 'auto' }],
    ];
    for (const [name, request] of retried) {
      const eventsBefore = drill.events.length;
      const outcome = await drill.run(client, request);
      const waits = drill.events.slice(eventsBefore).filter((event) => event.type === 'retry-scheduled');
      const served = primary.served.filter((seen) => seen.path === request.path);
      const wait = waits[0]?.delayMs ?? -1;

      drill.expectEqual(
        `${name}: succeeded on attempt 2`,
        [outcomeLabel(outcome), attemptsOf(outcome)],
        ['succeeded', 2],
      );
      drill.check(
        `${name}: one backoff wait, within [0, 200) ms, between the origin's two requests`,
        waits.length === 1 &&
          wait >= 0 &&
          wait < Math.min(initialMs, maxMs) &&
          served.length === 2 &&
          served[1]!.at - served[0]!.at === wait,
        `waits ${JSON.stringify(waits.map((event) => event.delayMs))} ms, requests at ${JSON.stringify(served.map((seen) => seen.at))} ms`,
      );
    }
    const orders = primary.served.filter((request) => request.path === '/v1/orders');
    drill.check(
      'POST with key: both requests carried the same key; the origin applied it once',
      orders.length === 2 &&
        orders[0]!.idempotencyKey !== undefined &&
        orders[0]!.idempotencyKey === orders[1]!.idempotencyKey &&
        orders.filter((request) => request.applied).length === 1,
      `replies ${JSON.stringify(orders.map((request) => request.reply))}`,
    );

    const keyless = await drill.run(client, { method: 'POST', path: '/v1/payments', body: 'payment 1' });
    // Let the rest of the budget pass: a replay, if there were one, would show up at the origin.
    await drill.advance(client.policy.budgetMs);
    drill.expectEqual(
      'keyless POST: failed unsafe-to-replay after 1 attempt',
      [outcomeLabel(keyless), attemptsOf(keyless)],
      ['failed unsafe-to-replay', 1],
    );
    drill.expectEqual(
      'keyless POST: the failure is unavailable (503), request sent',
      keyless.status === 'failed'
        ? [keyless.failure?.class, keyless.failure?.status, keyless.failure?.requestSent]
        : [],
      ['unavailable', 503, 'yes'],
    );
    drill.expectEqual(
      'keyless POST: the origin saw 1 request, none after it',
      primary.served.filter((request) => request.path === '/v1/payments').map((request) => request.reply),
      ['503'],
    );
    drill.expectEqual('the origin applied 1 write in all (the keyed order)', primary.writesApplied, 1);
  },
};
