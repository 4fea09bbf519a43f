import { describe, expect, it } from 'vitest';
import type { FailoverClientOptions } from '../../src/runtime/client-options.js';
import { API, answer, ok, oneOriginClient } from '../helpers/one-origin-client.js';

// The quiet period after a throttle (src/policy/quiet-period.ts) in a client on a simulated clock: default
// `policy.throttle` (4 intervals, at most 30 s), so the interval starts at 30 s / 4 = 7.5 s and each gap between
// request starts moves it a quarter of the way (src/policy/request-interval.ts).

/**
 * A light client: requests at 0, 5000 and 10000, the third answered `third` at 10010. Its interval: 7500, then
 * gaps of 5000: 6875, 6406.25. Quiet for 4 x 6406.25 = 25625 ms after 10010: until 35635.
 */
async function lightClientThrottled(third: Response, options: Partial<FailoverClientOptions> = {}) {
  const h = oneOriginClient((n) => (n === 2 ? third : ok()), options);
  const first = (await h.requestAt(0, '/1')).outcome;
  const second = (await h.requestAt(5_000, '/2')).outcome;
  const throttled = (await h.requestAt(10_000, '/3')).outcome;
  await h.clock.increment(0);
  expect(await first).toMatchObject({ status: 'succeeded' });
  expect(await second).toMatchObject({ status: 'succeeded' });
  return { ...h, throttled };
}

/**
 * A GET of the light client at 15000, during its quiet period: its gap (5000) makes the interval 6054.6875, so the
 * quiet period shortens to 10010 + 24219 = 34229, still past the GET's budget (25000). Its outcome, once settled.
 */
async function requestDuringQuiet(h: Awaited<ReturnType<typeof lightClientThrottled>>) {
  const next = (await h.requestAt(15_000, '/4')).outcome;
  await h.clock.increment(0);
  return next;
}

/** What that GET ends with: throttled at once, nothing sent, told when the quiet period ends. */
const THROTTLED_UNTIL_34229 = { status: 'failed', reason: 'throttled', attempts: 0, holdUntil: 34_229 };

describe('the quiet period after a throttle', () => {
  it('a light client that meets a 429 sends nothing to that origin for the quiet period, then sends', async () => {
    const h = await lightClientThrottled(answer(429));
    // The 429's retry asks at 10210 (backoff 200 ms): the quiet period ends past its budget (20000), so it ends
    // throttled, not retried into the busy origin.
    const retried = h.throttled;
    await h.clock.increment(300);
    expect(await retried).toMatchObject({
      status: 'failed',
      reason: 'throttled',
      attempts: 1,
      holdUntil: 35_635,
    });
    // A request at 15000: its gap (5000) makes the interval 6054.6875, so the quiet period shortens to
    // 10010 + 24219 = 34229, still past its budget (25000): it ends at once, nothing sent.
    const next = (await h.requestAt(15_000, '/4')).outcome;
    await h.clock.increment(0);
    expect(await next).toEqual({
      status: 'failed',
      reason: 'throttled',
      origin: 'api',
      attempts: 0,
      elapsedMs: 0,
      holdUntil: 34_229,
    });
    // After it the origin takes the client's requests again at once (the send rate's bucket has its token).
    const after = (await h.requestAt(34_229, '/5')).outcome;
    await h.clock.runAll(60_000);
    expect(await after).toMatchObject({ status: 'succeeded', attempts: 1 });
    expect(h.sentAt()).toEqual([0, 5_000, 10_000, 34_229]);
    await h.client.close();
  });

  it('does not hold the request a Retry-After answered: it comes back then, while the client’s others keep quiet', async () => {
    const h = await lightClientThrottled(answer(429, { 'retry-after': '2' }));
    // The retry waits the Retry-After (rule 5: the longer of it and the 200 ms backoff), to 12010, when the
    // server's hold ends, and goes: the server said when, and the 429 switched the send rate on with one token.
    await h.clock.increment(3_000);
    expect(await h.throttled).toMatchObject({ status: 'succeeded', attempts: 2 });
    // The quiet period that 429 began (until 35635, shortened to 34229 by the next start, as above) holds the rest.
    expect(await requestDuringQuiet(h)).toMatchObject(THROTTLED_UNTIL_34229);
    expect(h.sentAt()).toEqual([0, 5_000, 10_000, 12_010]);
    await h.client.close();
  });

  it('is not started by the 429 of a client’s first request: with no pace behind it, the retry goes after its backoff', async () => {
    const h = oneOriginClient((n) => (n === 0 ? answer(429) : ok()));
    const only = (await h.requestAt(0, '/1')).outcome;
    await h.clock.runAll(60_000);
    expect(await only).toMatchObject({ status: 'succeeded', attempts: 2 });
    // The 429 at 10, then the backoff's first wait (200 ms, no jitter here).
    expect(h.sentAt()).toEqual([0, 210]);
    await h.client.close();
  });

  it('is not started by one 429 to a burst at launch: the burst is no pace, so its retry goes and later requests are sent', async () => {
    const h = oneOriginClient((n) => (n === 1 ? answer(429) : ok()));
    const burst = [];
    for (const path of ['/a', '/b', '/c']) burst.push((await h.requestAt(0, path)).outcome);
    const later = (await h.requestAt(2_000, '/d')).outcome;
    await h.clock.runAll(60_000);
    for (const outcome of await Promise.all([...burst, later]))
      expect(outcome).toMatchObject({ status: 'succeeded' });
    // The burst at 0; the 429 at 10, its retry at 210 (backoff 200 ms); the request of 2000 at 2210, its slot of
    // the send rate the 429 switched on (a token every 2 s at first). A quiet period (4 x the burst's interval,
    // 4219 ms, then shorter for its own start) would have held it past its budget and ended it throttled.
    expect(h.sentAt()).toEqual([0, 0, 0, 210, 2_210]);
    await h.client.close();
  });

  /** A client's only request, refused twice running with `refusal`, then answered 200. */
  async function refusedTwice(refusal: () => Response) {
    const h = oneOriginClient((n) => (n < 2 ? refusal() : ok()));
    const only = (await h.requestAt(0, '/1')).outcome;
    await h.clock.runAll(60_000);
    const outcome = await only;
    await h.client.close();
    return { outcome, sentAt: h.sentAt() };
  }

  it('is started by a first request’s second 429 running: its third attempt would wait past its budget, so it ends throttled', async () => {
    const { outcome, sentAt } = await refusedTwice(() => answer(429));
    // 429 at 10, the retry at 210 (backoff 200 ms), 429 at 220: quiet for 4 x 7500 ms (no pace yet), to 30220.
    expect(outcome).toMatchObject({ status: 'failed', reason: 'throttled', attempts: 2, holdUntil: 30_220 });
    expect(sentAt).toEqual([0, 210]);
  });

  it('holds a Retry-After’s retry once the origin has throttled twice running', async () => {
    const { outcome, sentAt } = await refusedTwice(() => answer(429, { 'retry-after': '1' }));
    // 429 at 10: back at 1010 as told (one 429 starts no quiet period); 429 at 1020, the second running: quiet
    // to 31020, and the request told when is held by it too.
    expect(outcome).toMatchObject({ status: 'failed', reason: 'throttled', attempts: 2, holdUntil: 31_020 });
    expect(sentAt).toEqual([0, 1_010]);
  });

  it('is started by an answer whose RateLimit field leaves nothing remaining, a 2xx too', async () => {
    const h = await lightClientThrottled(answer(200, { ratelimit: '"default";r=0;t=1' }));
    await h.clock.increment(100);
    expect(await h.throttled).toMatchObject({ status: 'succeeded' });
    // The quota resets at 11010, but the quiet period runs to 34229 (as above): a request at 15000 ends throttled.
    expect(await requestDuringQuiet(h)).toMatchObject(THROTTLED_UNTIL_34229);
    expect(h.sentAt()).toEqual([0, 5_000, 10_000]);
    await h.client.close();
  });

  it('defers durable work to the end of the quiet period', async () => {
    const h = await lightClientThrottled(answer(429), { policy: { retryAfter: { releaseSpreadMs: 0 } } });
    await h.clock.increment(300);
    await h.throttled;
    await h.clock.increment(15_000 - h.clock.now());
    // Started at 15000, the write's gap shortens the quiet period to 34229 (as above).
    const deferred = h.client.request({ method: 'POST', path: '/orders', body: '{}', lifetime: 'durable' });
    await h.clock.increment(0);
    expect(await deferred).toMatchObject({ status: 'deferred', reason: 'throttled' });
    const [entry] = await h.client.outbox.list();
    expect(entry?.nextAttemptAt).toBe(34_229);
    await h.clock.runAll(120_000);
    expect(await h.client.outbox.size()).toBe(0);
    const posts = h.transport.calls.filter((call) => call.request.method === 'POST');
    expect(posts.map((call) => call.sentAt)).toEqual([34_229]);
    await h.client.close();
  });

  it('a heavy client barely notices: a 429 after 60 requests 50 ms apart keeps it quiet about 200 ms', async () => {
    // 80 requests 50 ms apart; the one started at 3000 is answered 429 at 3010. After 60 gaps of 50 ms the
    // interval is 50 + 7450 x 0.75^60 = 50.0002 ms: quiet until 3010 + 201 = 3211.
    const h = oneOriginClient((n) => (n === 60 ? answer(429) : ok()));
    const outcomes: ReturnType<typeof h.client.request>[] = [];
    for (let i = 0; i < 80; i++) outcomes.push((await h.requestAt(i * 50, `/${i}`)).outcome);
    await h.clock.runAll(60_000);
    const settled = await Promise.all(outcomes);
    expect(settled.every((outcome) => outcome.status === 'succeeded')).toBe(true);
    const sent = h.sentAt();
    // Nothing goes out from the 429 until the quiet period ends, and all of it within about a second of it.
    expect(sent.filter((at) => at > 3_010 && at < 3_211)).toEqual([]);
    expect(sent.filter((at) => at >= 3_211).length).toBeGreaterThan(0);
    // Each request's first attempt went out less than a second after it was asked for (the ones the quiet period
    // held were released over releaseSpreadMs after 3211, then paced by the send rate), where a light client's
    // quiet period is tens of seconds.
    const waits = Array.from({ length: 80 }, (_, i) => {
      const call = h.transport.calls.find((c) => c.request.url === `${API}/${i}`);
      return call!.sentAt - i * 50;
    });
    expect(Math.max(...waits)).toBeLessThan(1_000);
    expect(waits.filter((wait) => wait > 0).length).toBeGreaterThan(0);
    await h.client.close();
  });

  it('is off with quietIntervals 0: the retry of a light client’s 429 goes after its backoff', async () => {
    const h = await lightClientThrottled(answer(429), { policy: { throttle: { quietIntervals: 0 } } });
    await h.clock.runAll(60_000);
    expect(await h.throttled).toMatchObject({ status: 'succeeded', attempts: 2 });
    expect(h.sentAt()).toEqual([0, 5_000, 10_000, 10_210]);
    await h.client.close();
  });
});
