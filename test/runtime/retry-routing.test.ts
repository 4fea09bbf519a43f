import { describe, expect, it } from 'vitest';
import { simulatedClock } from '../../src/clock/simulated-clock.js';
import { createFailoverClient } from '../../src/runtime/create-failover-client.js';
import type { FailoverClientOptions } from '../../src/runtime/client-options.js';
import type { DecisionEvent } from '../../src/runtime/decision-events.js';
import type { FailoverRequest } from '../../src/runtime/prepare-request.js';
import type { Outcome } from '../../src/policy/outcome.js';
import type { Transport, TransportResult } from '../../src/transports/transport.js';
import { fail, respond } from '../helpers/scripted-transport.js';

// Where a retry goes (CONTRACT rule 7, Envoy's previous_hosts) and what it costs of the client-wide retry
// budget: a read's retry goes to another origin that is healthy and takes reads, and claims no slot; a write
// that may have reached its origin stays there; a retry back to an origin that failed the request claims one.
// Simulated time, a transport that answers by origin, and no randomness (`random: () => 0.5`).

type Origin = 'primary' | 'backup';
const HOSTS: Record<Origin, string> = { primary: 'primary.example.test', backup: 'backup.example.test' };
const originOf = (url: string): Origin => (new URL(url).host === HOSTS.primary ? 'primary' : 'backup');

/** A transport whose answer depends on the origin, 10 ms after the request, recording who got what. */
function byOrigin(clock: ReturnType<typeof simulatedClock>, answer: Record<Origin, () => TransportResult>) {
  const calls: Array<{ origin: Origin; method: string; path: string; at: number }> = [];
  const transport: Transport = {
    name: 'by-origin',
    send(request) {
      const origin = originOf(request.url);
      calls.push({ origin, method: request.method, path: new URL(request.url).pathname, at: clock.now() });
      return new Promise((resolve) => clock.setTimeout(() => resolve(answer[origin]()), 10));
    },
  };
  return { transport, calls };
}

function setup(
  answer: Record<Origin, () => TransportResult>,
  options: Partial<FailoverClientOptions> = {},
  origins: readonly Origin[] = ['primary', 'backup'],
) {
  const clock = simulatedClock();
  const net = byOrigin(clock, answer);
  const events: DecisionEvent[] = [];
  const client = createFailoverClient({
    origins: origins.map((id) => ({ id, url: `https://${HOSTS[id]}` })),
    clock,
    transport: net.transport,
    random: () => 0.5,
    onEvent: (event) => events.push(event),
    ...options,
  });
  const all = async (requests: FailoverRequest[]): Promise<Outcome[]> => {
    const pending = requests.map((request) => client.request(request));
    await clock.runAll();
    return Promise.all(pending);
  };
  const run = async (request: FailoverRequest) => (await all([request]))[0]!;
  // The requests' attempts only: once traffic fails over, the health machine's probes of the primary follow.
  const sent = () => net.calls.filter((c) => c.path.startsWith('/items') || c.path.startsWith('/orders'));
  const path = (origin: Origin) =>
    sent()
      .filter((c) => c.origin === origin)
      .map((c) => c.path);
  return { client, clock, calls: net.calls, sent, events, all, run, path };
}

const down = () => respond(503);
const up = () => respond(200);
const noBudget = { policy: { retryBudget: { percent: 0, minConcurrency: 0 } } };
const reads = (n: number): FailoverRequest[] =>
  Array.from({ length: n }, (_, i) => ({ path: `/items/${i}` }));

describe('where a retry goes', () => {
  it('a read failed by the primary is retried on the healthy backup, though traffic has not failed over', async () => {
    const t = setup({ primary: down, backup: up });
    expect(await t.run({ path: '/items' })).toMatchObject({
      status: 'succeeded',
      origin: 'backup',
      attempts: 2,
    });
    expect(t.calls.map((c) => c.origin)).toEqual(['primary', 'backup']);
    // One failure is far from the failover criteria: the next read still starts on the primary.
    expect(t.client.health()).toMatchObject({ state: 'healthy', activeOrigin: 'primary' });
  });

  it('a read whose connection the primary refused, or that timed out there, is retried on the backup', async () => {
    for (const failure of [fail('connect', 'no'), fail('response-timeout', 'unknown')]) {
      const t = setup({ primary: () => failure, backup: up });
      expect(await t.run({ path: '/items' })).toMatchObject({ status: 'succeeded', origin: 'backup' });
    }
  });

  it('a read retried on another origin claims nothing from the retry budget, even a budget of none', async () => {
    const t = setup({ primary: down, backup: up }, noBudget);
    expect(await t.run({ path: '/items' })).toMatchObject({ status: 'succeeded', origin: 'backup' });
  });

  it('20 reads in flight when the primary dies all succeed on the backup; the primary sees each once', async () => {
    const t = setup({ primary: down, backup: up });
    const outcomes = await t.all(reads(20));
    expect(outcomes.map((o) => [o.status, 'origin' in o && o.origin])).toEqual(
      reads(20).map(() => ['succeeded', 'backup']),
    );
    expect(t.path('primary')).toHaveLength(20);
    expect(t.path('backup').sort()).toEqual(
      reads(20)
        .map((r) => r.path)
        .sort(),
    );
    expect(t.events.filter((e) => e.type === 'failed')).toEqual([]);
  });

  it('a keyed write answered 503 (requestSent yes) is retried on the primary it reached, never the backup', async () => {
    const t = setup({ primary: down, backup: up });
    const outcome = await t.run({ method: 'POST', path: '/orders', body: '{}', idempotencyKey: 'k-1' });
    expect(outcome).toMatchObject({ status: 'failed', reason: 'attempts-exhausted', origin: 'primary' });
    expect(t.calls.map((c) => c.origin)).toEqual(['primary', 'primary', 'primary']);
  });

  it('a keyed write whose connection was lost (requestSent unknown) stays on the primary', async () => {
    let n = 0;
    const t = setup({ primary: () => (++n === 1 ? fail('connection-lost', 'unknown') : up()), backup: up });
    const outcome = await t.run({ method: 'POST', path: '/orders', body: '{}', idempotencyKey: 'k-1' });
    expect(outcome).toMatchObject({ status: 'succeeded', origin: 'primary', attempts: 2 });
    expect(t.calls.map((c) => c.origin)).toEqual(['primary', 'primary']);
  });

  it('a pinned write needs a slot of the retry budget to go back to its origin', async () => {
    const t = setup({ primary: down, backup: up }, noBudget);
    const outcome = await t.run({ method: 'POST', path: '/orders', body: '{}', idempotencyKey: 'k-1' });
    expect(outcome).toMatchObject({ status: 'failed', reason: 'retry-budget-exhausted', attempts: 1 });
    expect(t.calls.map((c) => c.origin)).toEqual(['primary']);
  });

  it('a PUT, not a read, is retried where the health machine names: the primary, claiming a slot', async () => {
    const t = setup({ primary: down, backup: up }, noBudget);
    expect(await t.run({ method: 'PUT', path: '/items/1', body: '{}' })).toMatchObject({
      status: 'failed',
      reason: 'retry-budget-exhausted',
      attempts: 1,
    });
    expect(t.calls.map((c) => c.origin)).toEqual(['primary']);
  });

  it('a read that both origins failed goes back to one only with a slot of the retry budget', async () => {
    const granted = setup({ primary: down, backup: down });
    expect(await granted.run({ path: '/items' })).toMatchObject({
      status: 'failed',
      reason: 'attempts-exhausted',
      attempts: 3,
    });
    expect(granted.calls.map((c) => c.origin)).toEqual(['primary', 'backup', 'primary']);

    const refused = setup({ primary: down, backup: down }, noBudget);
    expect(await refused.run({ path: '/items' })).toMatchObject({
      status: 'failed',
      reason: 'retry-budget-exhausted',
      attempts: 2,
    });
    expect(refused.calls.map((c) => c.origin)).toEqual(['primary', 'backup']);
  });
});

describe('the retry budget with one origin', () => {
  it('still stops a retry storm: of 20 reads at once against a failing origin, only its share retries', async () => {
    const t = setup({ primary: down, backup: up }, {}, ['primary']);
    const outcomes = await t.all(reads(20));
    const { retryBudget, attempts } = t.client.policy;
    // 20 in progress: max(minConcurrency 3, 20 % of 20) = 4 slots; each of those 4 uses all its attempts.
    const slots = Math.max(retryBudget.minConcurrency, Math.floor((retryBudget.percent * 20) / 100));
    expect(slots).toBe(4);
    const ends = outcomes.map((o) => (o.status === 'failed' ? `${o.reason} ${o.attempts}` : o.status));
    expect(ends.sort()).toEqual([
      ...Array<string>(slots).fill(`attempts-exhausted ${attempts.max}`),
      ...Array<string>(20 - slots).fill('retry-budget-exhausted 1'),
    ]);
    expect(t.calls).toHaveLength(20 + slots * (attempts.max - 1));
  });

  it('when both origins fail, each sees every read once, and no read goes back to either', async () => {
    const t = setup({ primary: down, backup: down });
    const outcomes = await t.all(reads(20));
    // Each read's second attempt went to the other origin at no cost. By then the primary had failed over and
    // the backup had been taken out of rotation: the health machine names no origin for a third.
    expect(outcomes.map((o) => o.status === 'failed' && `${o.reason} ${o.attempts}`)).toEqual(
      reads(20).map(() => 'no-healthy-origin 2'),
    );
    expect([t.path('primary').length, t.path('backup').length]).toEqual([20, 20]);
  });
});
