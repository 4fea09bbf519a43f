/**
 * The connectivity hint `changed` (a switch from Wi-Fi to cellular), on a simulated clock and a scripted
 * transport: a read in flight is ended and sent again at once on the new network, a write in flight is left to
 * finish, the transport's pooled connections are dropped first, and no attempt in flight across the change counts
 * against its origin (docs/connectivity.md, "A network change").
 */
import { describe, expect, it } from 'vitest';
import { manualConnectivity } from '../../src/connectivity/manual-connectivity.js';
import type { DecisionEvent } from '../../src/runtime/decision-events.js';
import { harness } from '../helpers/client-harness.js';
import { fail, respond, type ScriptedReply } from '../helpers/scripted-transport.js';

const twoOrigins = [
  { id: 'primary', url: 'https://api.example.test' },
  { id: 'backup', url: 'https://backup.example.test' },
];
// One failure counted against the primary would make it suspect: health tells whether a failure counted.
const touchyHealth = { health: { suspectAfter: 1, failoverAfter: 2 } };

function changing(script: ScriptedReply[], policy: object = touchyHealth) {
  const connectivity = manualConnectivity('online');
  const h = harness(script, { origins: twoOrigins, connectivity, policy });
  const resets: number[] = [];
  // The scripted transport pools nothing; this records how many attempts had been sent at each reset.
  h.transport.reset = () => void resets.push(h.transport.calls.length);
  return { ...h, connectivity, resets };
}

const attemptLog = (events: readonly DecisionEvent[]) =>
  events
    .filter((event) => event.type !== 'health-changed')
    .map((event) => [
      event.type,
      'attempt' in event ? event.attempt : undefined,
      'failureClass' in event ? event.failureClass : undefined,
      'acrossChange' in event ? event.acrossChange : undefined,
    ]);

describe('a network change', () => {
  it('ends a read in flight and sends it again at once, well before its attempt timeout, on a healthy origin', async () => {
    const h = changing([{ reply: 'hang' }, { reply: respond(200), latencyMs: 40 }]);
    const outcome = h.client.request({ path: '/v1/items' });
    await h.clock.increment(1_000);
    h.connectivity.set('changed');
    await h.clock.increment(40);
    expect(await outcome).toMatchObject({
      status: 'succeeded',
      origin: 'primary',
      attempts: 2,
      elapsedMs: 1_040,
    });
    expect(h.transport.calls).toHaveLength(2);
    expect(h.transport.aborted).toBe(1);
    // No backoff between the two attempts, and the ended one is marked as crossing the change.
    expect(attemptLog(h.events)).toEqual([
      ['attempt-started', 1, undefined, undefined],
      ['attempt-failed', 1, 'connection-lost', true],
      ['attempt-started', 2, undefined, undefined],
      ['succeeded', 2, undefined, undefined],
    ]);
    expect(h.client.health()).toMatchObject({ state: 'healthy', activeOrigin: 'primary' });
    await h.client.close();
  });

  it('drops the transport’s pooled connections before the read is sent again', async () => {
    const h = changing([{ reply: 'hang' }, { reply: respond(200) }]);
    const outcome = h.client.request({ path: '/v1/items' });
    await h.clock.increment(500);
    h.connectivity.set('changed');
    await h.clock.increment(0);
    expect(await outcome).toMatchObject({ status: 'succeeded', attempts: 2 });
    expect(h.resets).toEqual([1]);
    await h.client.close();
  });

  it('resets the transport when nothing is in flight, and a transport whose reset throws changes nothing', async () => {
    const h = changing([{ reply: respond(200) }]);
    h.connectivity.set('changed');
    expect(h.resets).toEqual([0]);
    h.transport.reset = () => {
      throw new Error('reset failed');
    };
    expect(() => h.connectivity.set('changed')).not.toThrow();
    expect(await h.run({ path: '/v1/items' })).toMatchObject({ status: 'succeeded', attempts: 1 });
    await h.client.close();
  });

  it.each(['POST', 'PATCH', 'PUT', 'DELETE'])(
    'leaves a write in flight alone (%s): it ends with its own answer',
    async (method) => {
      const h = changing([{ reply: respond(201), latencyMs: 3_000 }]);
      const outcome = h.client.request({ method, path: '/v1/orders', body: '{}' });
      await h.clock.increment(1_000);
      h.connectivity.set('changed');
      await h.clock.increment(2_000);
      expect(await outcome).toMatchObject({ status: 'succeeded', attempts: 1, elapsedMs: 3_000 });
      expect(h.transport.aborted).toBe(0);
      expect(h.transport.calls).toHaveLength(1);
      await h.client.close();
    },
  );

  it('leaves a GET declared a write (idempotent: false) alone', async () => {
    const h = changing([{ reply: respond(200), latencyMs: 3_000 }]);
    const outcome = h.client.request({ path: '/v1/report', idempotent: false });
    await h.clock.increment(1_000);
    h.connectivity.set('changed');
    await h.clock.increment(2_000);
    expect(await outcome).toMatchObject({ status: 'succeeded', attempts: 1, elapsedMs: 3_000 });
    expect(h.transport.aborted).toBe(0);
    await h.client.close();
  });

  it('never counts the failure of a write in flight across the change against its origin', async () => {
    const h = changing(
      [{ reply: fail('connection-lost', 'unknown'), latencyMs: 2_000 }, { reply: respond(201) }],
      { ...touchyHealth, backoff: { jitter: 'none', initialMs: 100 } },
    );
    const outcome = h.client.request({ method: 'POST', path: '/v1/orders', idempotencyKey: 'order-1' });
    await h.clock.increment(1_000);
    h.connectivity.set('changed');
    await h.clock.increment(1_000);
    // The write's failure is its own to retry (with its key, after the backoff), but the primary is not blamed.
    expect(h.client.health().state).toBe('healthy');
    await h.clock.increment(100);
    expect(await outcome).toMatchObject({ status: 'succeeded', origin: 'primary', attempts: 2 });
    expect(attemptLog(h.events)).toEqual([
      ['attempt-started', 1, undefined, undefined],
      ['attempt-failed', 1, 'connection-lost', true],
      ['retry-scheduled', 1, 'connection-lost', undefined],
      ['attempt-started', 2, undefined, undefined],
      ['succeeded', 2, undefined, undefined],
    ]);
    await h.client.close();
  });

  it('never counts the timeout of a write in flight across the change against its origin', async () => {
    const h = changing([{ reply: 'hang' }], { ...touchyHealth, attempts: { max: 1 } });
    const outcome = h.client.request({ method: 'POST', path: '/v1/orders' });
    await h.clock.increment(1_000);
    h.connectivity.set('changed');
    await h.clock.increment(4_000);
    expect(await outcome).toMatchObject({
      status: 'failed',
      reason: 'unsafe-to-replay',
      failure: { class: 'response-timeout' },
    });
    expect(h.client.health().state).toBe('healthy');
    await h.client.close();
  });

  it('counts the failure of an attempt started after the change as usual', async () => {
    const h = changing([{ reply: 'hang' }, { reply: fail('connect') }, { reply: respond(200) }]);
    const outcome = h.client.request({ path: '/v1/items' });
    await h.clock.increment(1_000);
    h.connectivity.set('changed');
    await h.clock.increment(0);
    // The re-sent read met a refused connection on the new network: that is the primary's.
    expect(h.client.health().state).not.toBe('healthy');
    await h.clock.runAll(10_000);
    expect(await outcome).toMatchObject({ status: 'succeeded', attempts: 3 });
    await h.client.close();
  });

  it('counts the re-sent read as an attempt: with none left the read ends attempts-exhausted at the change', async () => {
    const h = changing([{ reply: 'hang' }], { ...touchyHealth, attempts: { max: 1 } });
    const outcome = h.client.request({ path: '/v1/items' });
    await h.clock.increment(1_000);
    h.connectivity.set('changed');
    await h.clock.increment(0);
    expect(await outcome).toMatchObject({
      status: 'failed',
      reason: 'attempts-exhausted',
      attempts: 1,
      elapsedMs: 1_000,
      failure: { class: 'connection-lost', origin: 'primary' },
    });
    expect(h.client.health().state).toBe('healthy');
    await h.client.close();
  });

  it('keeps within attempts.max however often the network changes (rule 1)', async () => {
    const h = changing([{ reply: 'hang' }]);
    const outcome = h.client.request({ path: '/v1/items' });
    for (let i = 0; i < 5; i += 1) {
      await h.clock.increment(100);
      h.connectivity.set('changed');
    }
    expect(await outcome).toMatchObject({ status: 'failed', reason: 'attempts-exhausted', attempts: 3 });
    expect(h.transport.calls).toHaveLength(3);
    expect(h.client.health().state).toBe('healthy');
    await h.client.close();
  });

  it('keeps the re-sent read within the time budget', async () => {
    const h = changing([{ reply: 'hang' }]);
    const outcome = h.client.request({ path: '/v1/items', deadlineMs: 1_500 });
    await h.clock.increment(1_000);
    h.connectivity.set('changed');
    await h.clock.increment(500);
    expect(await outcome).toMatchObject({
      status: 'failed',
      reason: 'budget-exhausted',
      attempts: 2,
      elapsedMs: 1_500,
    });
    await h.client.close();
  });

  it('does not cut a backoff wait short: no attempt was in flight', async () => {
    const h = changing([{ reply: fail('connect') }, { reply: respond(200) }], {
      health: { suspectAfter: 5, failoverAfter: 6 },
      backoff: { jitter: 'none', initialMs: 300 },
    });
    const outcome = h.client.request({ path: '/v1/items' });
    await h.clock.increment(100);
    h.connectivity.set('changed');
    await h.clock.increment(200);
    expect(await outcome).toMatchObject({ status: 'succeeded', attempts: 2, elapsedMs: 300 });
    await h.client.close();
  });
});

describe('a probe across a network change', () => {
  it('is sent again at once, and its answer on the new network counts, not the old network’s timeout', async () => {
    const h = changing([
      { reply: fail('tls') },
      { reply: respond(200) },
      { reply: 'hang' },
      { reply: respond(200) },
    ]);
    // A TLS failure fails traffic over at once; the request takes its next attempt on the backup.
    const outcome = h.client.request({ path: '/v1/items' });
    await h.clock.increment(1_000);
    expect(await outcome).toMatchObject({ status: 'succeeded', origin: 'backup' });
    expect(h.client.health().state).toBe('failedOver');

    // After minFailedOverMs the primary is probed; the probe hangs on the old network.
    await h.clock.increment(30_000);
    expect(h.transport.calls.map((call) => [call.method, new URL(call.url).host])).toEqual([
      ['GET', 'api.example.test'],
      ['GET', 'backup.example.test'],
      ['HEAD', 'api.example.test'],
    ]);
    await h.clock.increment(1_000);
    h.connectivity.set('changed');
    await h.clock.increment(0);
    expect(h.transport.calls).toHaveLength(4);
    expect(h.transport.calls[3]).toMatchObject({ method: 'HEAD', url: 'https://api.example.test/' });
    expect(h.transport.aborted).toBe(1);
    expect(h.resets).toEqual([3]);

    // Past the first probe's timeout: the probe answered, so the primary is not back to failedOver.
    await h.clock.increment(5_000);
    expect(h.client.health().state).toBe('probingFailback');
    await h.clock.increment(10_000);
    expect(h.client.health()).toMatchObject({ state: 'healthy', activeOrigin: 'primary' });
    await h.client.close();
  });

  it('is not sent again once the health machine let go of it, even by a probe that ignores its signal', async () => {
    const connectivity = manualConnectivity('online');
    let probes = 0;
    const h = harness([{ reply: fail('tls') }, { reply: respond(200) }], {
      origins: twoOrigins,
      connectivity,
      // An app's probe that never answers and never looks at its signal.
      probe: () => (probes++, new Promise<boolean>(() => undefined)),
    });
    const outcome = h.client.request({ path: '/v1/items' });
    await h.clock.increment(1_000);
    expect(await outcome).toMatchObject({ status: 'succeeded', origin: 'backup' });
    await h.clock.increment(30_000);
    expect(probes).toBe(1);
    // The probe timeout (5 s) ends it; the machine rests before the next one.
    await h.clock.increment(5_000);
    expect(h.client.health().state).toBe('failedOver');
    connectivity.set('changed');
    await h.clock.increment(0);
    expect(probes).toBe(1);
    await h.client.close();
  });
});
