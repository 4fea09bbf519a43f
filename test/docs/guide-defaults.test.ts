import { describe, expect, it } from 'vitest';
import { harness } from '../helpers/client-harness.js';
import { respond } from '../helpers/scripted-transport.js';

// docs/guide.md, "What the defaults add up to, for a GET": each example, run with the default policy.
describe('the guide: what the defaults add up to', () => {
  it('503 every time: three attempts, waits below 200 and then 400 ms, attempts-exhausted with the last 503', async () => {
    for (const random of [0, 0.5, 0.999]) {
      const h = harness([{ reply: respond(503, {}, 'busy') }], { random: () => random });
      const outcome = await h.run({ path: '/v1/items' });
      expect(outcome).toMatchObject({ status: 'failed', reason: 'attempts-exhausted', attempts: 3 });
      expect(outcome.status === 'failed' && (await outcome.response?.text())).toBe('busy');
      const waits = h.events.filter((e) => e.type === 'retry-scheduled').map((e) => e.delayMs);
      expect(waits).toHaveLength(2);
      expect(waits[0]).toBeLessThan(200);
      expect(waits[1]).toBeLessThan(400);
    }
  });

  it('503 with Retry-After: 4: attempts at 0, 4 and 8 s; Retry-After: 30 ends it at once', async () => {
    const h = harness([{ reply: respond(503, { 'retry-after': '4' }) }]);
    const sentAt: number[] = [];
    const send = h.transport.send.bind(h.transport);
    h.transport.send = (request) => (sentAt.push(h.clock.now()), send(request));
    expect(await h.run({ path: '/v1/items' })).toMatchObject({
      status: 'failed',
      reason: 'attempts-exhausted',
    });
    expect(sentAt).toEqual([0, 4_000, 8_000]);

    const long = harness([{ reply: respond(503, { 'retry-after': '30' }) }]);
    expect(await long.run({ path: '/v1/items' })).toMatchObject({
      status: 'failed',
      reason: 'retry-after-exceeds-budget',
      attempts: 1,
      elapsedMs: 0,
    });
  });

  it('never answers: response-timeout at 5 s, the second attempt cut at 10 s, budget-exhausted', async () => {
    const h = harness([{ reply: 'hang' }]);
    const outcome = await h.run({ path: '/v1/items' });
    expect(outcome).toMatchObject({
      status: 'failed',
      reason: 'budget-exhausted',
      attempts: 2,
      elapsedMs: 10_000,
    });
    const failed = h.events.filter((e) => e.type === 'attempt-failed');
    expect(failed[0]).toMatchObject({ failureClass: 'response-timeout', elapsedMs: 5_000 });
  });

  it("idempotencyKey: 'auto' makes a new key for each call, so an app's own retry needs its own key", async () => {
    const h = harness([{ reply: respond(201) }]);
    await h.run({ method: 'POST', path: '/v1/orders', idempotencyKey: 'auto' });
    await h.run({ method: 'POST', path: '/v1/orders', idempotencyKey: 'auto' });
    const keys = h.transport.calls.map((call) => call.headers['idempotency-key']);
    expect(keys).toHaveLength(2);
    expect(keys[0]).not.toBe(keys[1]);
  });
});
