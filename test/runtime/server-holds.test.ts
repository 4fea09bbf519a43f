import { describe, expect, it } from 'vitest';
import { simulatedClock } from '../../src/clock/simulated-clock.js';
import { createFailoverClient } from '../../src/runtime/create-failover-client.js';
import type { FailoverClientOptions } from '../../src/runtime/client-options.js';
import type { DecisionEvent } from '../../src/runtime/decision-events.js';
import type { TransportRequest } from '../../src/transports/transport.js';
import { createServerHolds } from '../../src/runtime/server-holds.js';
import { holdUntilOf } from '../../src/policy/server-hold.js';
import { respond } from '../helpers/scripted-transport.js';
import { routedTransport } from '../helpers/routed-transport.js';

const PRIMARY = 'https://primary.example.test';
const BACKUP = 'https://backup.example.test';
const both = [
  { id: 'primary', url: PRIMARY },
  { id: 'backup', url: BACKUP },
];

/**
 * A client whose primary answers `first` to its first call and 200 after, with 10 ms of latency; the backup
 * always answers 200. Held requests are released together at the hold's end (`releaseSpreadMs: 0`), so that
 * the times below are the hold's own; test/runtime/throttle.test.ts covers the spread.
 */
function setup(first: Response, options: Partial<FailoverClientOptions> = {}) {
  const clock = simulatedClock();
  let primaryCalls = 0;
  const transport = routedTransport(clock, (request: TransportRequest) => ({
    result: {
      kind: 'response',
      response:
        request.url.startsWith(PRIMARY) && primaryCalls++ === 0 ? first : new Response(null, { status: 200 }),
    },
    latencyMs: 10,
  }));
  const events: DecisionEvent[] = [];
  const client = createFailoverClient({
    origins: both,
    clock,
    transport,
    random: () => 0.5,
    onEvent: (event) => events.push(event),
    ...options,
    policy: { retryAfter: { releaseSpreadMs: 0 }, ...options.policy },
  });
  const sentTo = (base: string) =>
    transport.calls.filter((call) => call.request.url.startsWith(base)).map((call) => call.sentAt);
  return { clock, transport, events, client, sentTo };
}

const busy = (status: number, seconds: string) =>
  respond(status, { 'retry-after': seconds }) as { response: Response };

describe('server holds', () => {
  it('holds back every new attempt of the client to the origin until the Retry-After ends', async () => {
    const h = setup(busy(503, '3').response);
    const first = h.client.request({ path: '/a' });
    await h.clock.increment(100);
    // Answered 503 Retry-After: 3 at 10 ms: the primary is held until 3010 for every request.
    expect(h.client.health().holdUntil).toEqual({ primary: 3_010 });
    const second = h.client.request({ path: '/b' });
    await h.clock.runAll(60_000);
    const [a, b] = await Promise.all([first, second]);
    expect([a.status, b.status]).toEqual(['succeeded', 'succeeded']);
    // Nothing reached the primary between the 503's answer and the end of its hold. The read it answered waited
    // out the Retry-After and took its retry to the backup, the origin that had not failed it.
    expect(h.sentTo(PRIMARY)).toEqual([0, 3_010]);
    expect(h.sentTo(BACKUP)).toEqual([3_010]);
    expect(h.events.find((event) => event.type === 'origin-held')).toEqual({
      type: 'origin-held',
      origin: 'primary',
      host: 'primary.example.test',
      status: 503,
      retryAfterMs: 3_000,
      holdUntil: 3_010,
      requestId: 'r1',
    });
    expect(h.events.find((event) => event.type === 'waiting-for-hold')).toMatchObject({
      type: 'waiting-for-hold',
      requestId: 'r2',
      origin: 'primary',
      attempt: 1,
      delayMs: 2_910,
      holdUntil: 3_010,
      elapsedMs: 0,
    });
    expect(h.client.health().holdUntil).toEqual({});
    await h.client.close();
    expect(h.clock.pending()).toBe(0);
  });

  it('sends a read that cannot wait for the hold within its budget to another origin at once', async () => {
    const h = setup(busy(429, '30').response);
    const first = h.client.request({ path: '/a' });
    await h.clock.increment(100);
    const second = h.client.request({ path: '/b' });
    await h.clock.runAll(60_000);
    const [a, b] = await Promise.all([first, second]);
    // The read that got the 429 itself goes to the backup too: waiting 30 s is past its 10 s budget.
    expect(a).toMatchObject({ status: 'succeeded', origin: 'backup', attempts: 2 });
    expect(b).toMatchObject({ status: 'succeeded', origin: 'backup', attempts: 1, elapsedMs: 10 });
    expect(h.sentTo(PRIMARY)).toEqual([0]);
    expect(h.sentTo(BACKUP)).toEqual([10, 100]);
    await h.client.close();
  });

  it('waits for the hold when the budget allows it, rather than move the request to another origin', async () => {
    const h = setup(busy(503, '2').response, { policy: { budgetMs: 10_000 } });
    void h.client.request({ path: '/a' });
    await h.clock.increment(500);
    const b = h.client.request({ path: '/b', deadlineMs: 3_000 });
    await h.clock.runAll(60_000);
    expect(await b).toMatchObject({ status: 'succeeded', origin: 'primary', attempts: 1, elapsedMs: 1_520 });
    await h.client.close();
  });

  it('ends a request with no other origin retry-after-exceeds-budget at once, without sending it', async () => {
    const h = setup(busy(503, '30').response, { origins: [both[0]!] });
    void h.client.request({ path: '/a' });
    await h.clock.increment(100);
    const b = await h.client.request({ path: '/b' });
    expect(b).toEqual({
      status: 'failed',
      reason: 'retry-after-exceeds-budget',
      origin: 'primary',
      attempts: 0,
      elapsedMs: 0,
      holdUntil: 30_010,
    });
    expect(h.sentTo(PRIMARY)).toEqual([0]);
    await h.client.close();
  });

  it('never moves a write that may have reached the held origin to another one', async () => {
    const h = setup(busy(503, '30').response);
    const pending = h.client.request({ method: 'POST', path: '/orders', body: '{}', idempotencyKey: 'k1' });
    await h.clock.runAll(1_000);
    const write = await pending;
    expect(write).toMatchObject({ status: 'failed', reason: 'retry-after-exceeds-budget', attempts: 1 });
    expect(h.sentTo(BACKUP)).toEqual([]);
    // A keyed write that was never sent may take the backup while the primary is held.
    const next = h.client.request({ method: 'POST', path: '/orders', body: '{}', idempotencyKey: 'k2' });
    await h.clock.runAll(1_000);
    const fresh = await next;
    expect(fresh).toMatchObject({ status: 'succeeded', origin: 'backup', attempts: 1 });
    await h.client.close();
  });

  it('defers durable work that meets a hold past its budget to the end of the hold', async () => {
    const h = setup(busy(503, '30').response, { origins: [both[0]!] });
    void h.client.request({ path: '/a' });
    await h.clock.increment(100);
    const deferred = h.client.request({ method: 'POST', path: '/orders', body: '{}', lifetime: 'durable' });
    await h.clock.increment(0);
    expect(await deferred).toMatchObject({ status: 'deferred', reason: 'retry-after-exceeds-budget' });
    const [entry] = await h.client.outbox.list();
    expect(entry?.nextAttemptAt).toBe(30_010);
    await h.clock.runAll(60_000);
    expect(await h.client.outbox.size()).toBe(0);
    // The write reached the primary once, when the hold had ended.
    expect(
      h.transport.calls.filter((call) => call.request.method === 'POST').map((call) => call.sentAt),
    ).toEqual([30_010]);
    await h.client.close();
  });

  it('holds the origin when a probe is answered 429 with a Retry-After: no probe before it ends', async () => {
    // The primary refuses connections until the probes begin, answers the first probe 429 Retry-After: 20, then
    // 200; the wait after a failed probe (5 s at most, no jitter here) is shorter than the hold.
    const clock = simulatedClock();
    let probes = 0;
    const transport = routedTransport(clock, (request: TransportRequest) => {
      const probe = request.method === 'HEAD';
      if (request.url.startsWith(PRIMARY) && !probe)
        return {
          result: { kind: 'error', phase: 'connect', requestSent: 'no', message: 'refused' },
          latencyMs: 1,
        };
      if (probe && probes++ === 0)
        return { result: { kind: 'response', response: busy(429, '20').response }, latencyMs: 10 };
      return { result: { kind: 'response', response: new Response(null, { status: 200 }) }, latencyMs: 10 };
    });
    const client = createFailoverClient({
      origins: both,
      clock,
      transport,
      random: () => 0.5,
      policy: { attempts: { max: 1 }, health: { reprobeJitter: 'none' } },
    });
    for (let i = 0; i < 5; i++) await Promise.all([client.request({ path: '/a' }), clock.increment(10)]);
    expect(client.health().state).toBe('failedOver');
    await clock.increment(30_100);
    // The first probe was answered 429 Retry-After: 20: the primary is held for 20 s from its answer.
    const first = transport.calls.find((call) => call.request.method === 'HEAD')!;
    const held = first.answeredAt! + 20_000;
    expect(client.health().holdUntil).toEqual({ primary: held });
    await clock.runAll(120_000);
    const probeTimes = transport.calls
      .filter((call) => call.request.method === 'HEAD')
      .map((call) => call.sentAt);
    // Before this fix the next probe went out reprobeAfterMs (5 s) after the first, inside the hold.
    expect(probeTimes.filter((at) => at > first.sentAt && at < held)).toEqual([]);
    expect(probeTimes.length).toBeGreaterThan(3);
    expect(client.health().state).toBe('healthy');
    await client.close();
  });
});

describe('holdUntilOf', () => {
  const failure = { class: 'unavailable' as const, requestSent: 'yes' as const, origin: 'o', message: '' };
  it('holds for a 429 or a 503 with a Retry-After, for as long as the server asked', () => {
    expect(holdUntilOf({ ...failure, status: 503, retryAfterMs: 2_000 }, 100)).toBe(2_100);
    expect(holdUntilOf({ ...failure, class: 'rate-limited', status: 429, retryAfterMs: 1 }, 0)).toBe(1);
  });
  it('does not hold for other statuses, no Retry-After, or one of 0', () => {
    expect(holdUntilOf({ ...failure, status: 502, retryAfterMs: 2_000 }, 0)).toBeUndefined();
    expect(holdUntilOf({ ...failure, status: 503 }, 0)).toBeUndefined();
    expect(holdUntilOf({ ...failure, status: 503, retryAfterMs: 0 }, 0)).toBeUndefined();
  });
});

describe('createServerHolds', () => {
  const answer = (retryAfterMs: number) => ({
    class: 'unavailable' as const,
    requestSent: 'yes' as const,
    origin: 'primary',
    status: 503,
    retryAfterMs,
    message: '',
  });
  it('keeps the later end when holds overlap, and forgets a hold once it has ended', () => {
    const holds = createServerHolds();
    expect(holds.note(answer(5_000), 0)).toBe(5_000);
    // A shorter hold inside the one in force changes nothing.
    expect(holds.note(answer(1_000), 100)).toBeUndefined();
    expect(holds.note(answer(5_000), 1_000)).toBe(6_000);
    expect(holds.until('primary', 5_999)).toBe(6_000);
    expect(holds.inForce(5_999)).toEqual({ primary: 6_000 });
    expect(holds.until('primary', 6_000)).toBeUndefined();
    expect(holds.inForce(6_000)).toEqual({});
  });
});
