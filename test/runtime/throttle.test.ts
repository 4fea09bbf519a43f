import { describe, expect, it } from 'vitest';
import { answer, ok, oneOriginClient } from '../helpers/one-origin-client.js';

describe('throttling', () => {
  it('sends at most r attempts before the RateLimit reset, and the rest after it', async () => {
    const h = oneOriginClient((n) => (n === 0 ? answer(200, { ratelimit: '"default";r=2;t=5' }) : ok()), {
      policy: { retryAfter: { releaseSpreadMs: 0 } },
    });
    const first = h.client.request({ path: '/first' });
    await h.clock.increment(100);
    await first;
    // Answered at 10: two left until 5010. Four requests at 100: two go, two wait for the reset.
    const four = [1, 2, 3, 4].map((i) => h.client.request({ path: `/r${i}` }));
    await h.clock.runAll(60_000);
    const outcomes = await Promise.all(four);
    for (const outcome of outcomes) expect(outcome).toMatchObject({ status: 'succeeded', attempts: 1 });
    expect(h.sentAt()).toEqual([0, 100, 100, 5_010, 5_010]);
    expect(h.events.filter((e) => e.type === 'waiting-for-hold').map((e) => e.requestId)).toEqual([
      'r4',
      'r5',
    ]);
    await h.client.close();
  });

  it('ends a request that cannot wait for the reset throttled at once, nothing sent; durable work is deferred', async () => {
    const h = oneOriginClient((n) =>
      n === 0 ? answer(200, { 'x-ratelimit-remaining': '0', 'x-ratelimit-reset': '30' }) : ok(),
    );
    const first = h.client.request({ path: '/first' });
    await h.clock.increment(10);
    await first;
    const refused = await h.client.request({ path: '/next' });
    // The quota resets at 10 + 30 s, past the 10 s budget.
    expect(refused).toEqual({
      status: 'failed',
      reason: 'throttled',
      origin: 'api',
      attempts: 0,
      elapsedMs: 0,
      holdUntil: 30_010,
    });
    expect(h.transport.calls).toHaveLength(1);
    const deferred = h.client.request({ method: 'POST', path: '/orders', body: '{}', lifetime: 'durable' });
    await h.clock.increment(0);
    expect(await deferred).toMatchObject({ status: 'deferred', reason: 'throttled' });
    const [entry] = await h.client.outbox.list();
    expect(entry?.nextAttemptAt).toBe(30_010);
    await h.clock.runAll(60_000);
    expect(await h.client.outbox.size()).toBe(0);
    expect(
      h.transport.calls.filter((call) => call.request.method === 'POST').map((call) => call.sentAt),
    ).toEqual([30_010]);
    await h.client.close();
  });

  it('slows its own sending after a bare 429: later attempts wait for send slots, and those past the budget end throttled', async () => {
    // The send rate alone: the client's first request has no pace behind it, so its 429 starts no quiet period
    // (quiet-period.test.ts).
    const h = oneOriginClient((n) => (n === 0 ? answer(429) : ok()));
    const first = h.client.request({ path: '/a' });
    await h.clock.increment(100);
    // The 429 came at 10, the first answer: the rate measured is 0, so the bucket fills at the floor, 0.5 a
    // second, and starts full: one token.
    const burst = [1, 2, 3, 4, 5, 6].map((i) => h.client.request({ path: `/b${i}` }));
    await h.clock.runAll(60_000);
    const outcomes = await Promise.all(burst);
    // At 100 the first of the burst takes the token and goes; the others' slots are 1 / 0.5 = 2 s apart: 2100,
    // 4100, 6100 and 8100. The sixth's, 10100, is not before the end of its budget (10100): it ends throttled,
    // nothing sent, and books nothing.
    expect(outcomes.map((o) => o.status)).toEqual([
      'succeeded',
      'succeeded',
      'succeeded',
      'succeeded',
      'succeeded',
      'failed',
    ]);
    expect(outcomes[5]).toMatchObject({ reason: 'throttled', attempts: 0, holdUntil: 10_100 });
    // The first request's retry asks at 210 (backoff 200 ms), after the burst booked its slots: the bucket then
    // holds 1 - 5 + 0.055 = -3.945, so its slot is 4.945 / 0.5 = 9.89 s away, at 10100, past its budget too.
    expect(await first).toMatchObject({
      status: 'failed',
      reason: 'throttled',
      attempts: 1,
      holdUntil: 10_100,
    });
    expect(h.sentAt()).toEqual([0, 100, 2_100, 4_100, 6_100, 8_100]);
    await h.client.close();
  });

  it('sends everything at once with throttle: false', async () => {
    const h = oneOriginClient((n) => (n === 0 ? answer(429) : ok()), {
      policy: { throttle: false },
    });
    const first = h.client.request({ path: '/a' });
    await h.clock.increment(100);
    const burst = [1, 2, 3].map((i) => h.client.request({ path: `/b${i}` }));
    await h.clock.runAll(60_000);
    await Promise.all([first, ...burst]);
    // The retry after its 200 ms backoff.
    expect(h.sentAt()).toEqual([0, 100, 100, 100, 210]);
    await h.client.close();
  });

  it('holds an origin at most retryAfter.maxHoldMs, however long the Retry-After', async () => {
    const h = oneOriginClient((n) => (n === 0 ? answer(503, { 'retry-after': '86400' }) : ok()));
    const first = h.client.request({ path: '/a' });
    await h.clock.increment(10);
    await first;
    // Answered at 10: held until 10 + 300000, not a day.
    expect(h.client.health().holdUntil).toEqual({ api: 300_010 });
    await h.client.close();
  });

  it('releases the requests a hold kept waiting over releaseSpreadMs, not in one instant', async () => {
    let draw = 0;
    // A repeating sequence of draws, so that each held request gets its own.
    const draws = [0.1, 0.3, 0.5, 0.7, 0.9];
    const h = oneOriginClient((n) => (n === 0 ? answer(503, { 'retry-after': '3' }) : ok()), {
      random: () => draws[draw++ % draws.length]!,
      policy: { attempts: { max: 1 } },
    });
    const first = h.client.request({ path: '/a' });
    await h.clock.increment(10);
    await first;
    const held = [1, 2, 3, 4].map((i) => h.client.request({ path: `/h${i}` }));
    await h.clock.runAll(60_000);
    await Promise.all(held);
    const released = h.sentAt().slice(1);
    // All after the hold's end (3010), within 1000 ms of it, and not all at one time.
    expect(released.every((at) => at >= 3_010 && at < 4_010)).toBe(true);
    expect(new Set(released).size).toBeGreaterThan(1);
    await h.client.close();
  });
});
