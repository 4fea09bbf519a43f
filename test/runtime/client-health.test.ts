import { getEventListeners } from 'node:events';
import { describe, expect, it } from 'vitest';
import { harness } from '../helpers/client-harness.js';
import { fail, respond } from '../helpers/scripted-transport.js';
import { createFailoverClient } from '../../src/runtime/create-failover-client.js';
import { manualConnectivity } from '../../src/connectivity/manual-connectivity.js';
import type { DecisionEvent } from '../../src/runtime/decision-events.js';

const twoOrigins = [
  { id: 'primary', url: 'https://api.example.test' },
  { id: 'backup', url: 'https://backup.example.test' },
];

describe('client.health()', () => {
  it('starts healthy on the primary', () => {
    const h = harness([], { origins: twoOrigins });
    expect(h.client.health()).toEqual({ state: 'healthy', activeOrigin: 'primary', since: 0, holdUntil: {} });
  });

  it('reports a failover, and emits health-changed with from, to and the criterion, redacted like every event', async () => {
    const h = harness([{ reply: fail('connect') }, { reply: fail('connect') }, { reply: respond(200) }], {
      origins: twoOrigins,
      policy: { health: { suspectAfter: 1, failoverAfter: 2 }, backoff: { jitter: 'none', initialMs: 100 } },
    });
    await h.clock.increment(250);
    // Not h.run(): running every timer would also run the failed-over wait and the probes. A PUT goes where the
    // health machine names each time (a read's retry would take the backup at once), so it meets the failover.
    const pending = h.client.request({ method: 'PUT', path: '/v1/items?token=secret', body: '{}' });
    await h.clock.increment(1000);
    expect(await pending).toMatchObject({ status: 'succeeded', origin: 'backup', attempts: 3 });
    expect(h.transport.calls.map((call) => new URL(call.url).host)).toEqual([
      'api.example.test',
      'api.example.test',
      'backup.example.test',
    ]);
    // Failed over when the second attempt failed: 250 + 100 ms of backoff.
    expect(h.client.health()).toEqual({
      state: 'failedOver',
      activeOrigin: 'backup',
      since: 350,
      holdUntil: {},
    });
    const changed = h.events.filter((event) => event.type === 'health-changed');
    expect(changed).toEqual([
      expect.objectContaining({ from: 'healthy', to: 'suspect', criterion: 'consecutive-failures' }),
      {
        type: 'health-changed',
        origin: 'backup',
        host: 'backup.example.test',
        from: 'suspect',
        to: 'failedOver',
        criterion: 'consecutive-failures',
      },
    ]);
    expect(JSON.stringify(h.events)).not.toContain('secret');
    await h.client.close();
  });
});

describe('a TLS failure', () => {
  it('fails over at once, and the request that met it takes its next attempt on the backup', async () => {
    const h = harness([{ reply: fail('tls') }, { reply: respond(200) }], { origins: twoOrigins });
    const pending = h.client.request({ path: '/v1/items' });
    await h.clock.increment(1_000);
    expect(await pending).toMatchObject({ status: 'succeeded', origin: 'backup', attempts: 2 });
    expect(h.client.health()).toMatchObject({ state: 'failedOver', activeOrigin: 'backup' });
  });

  it('is not retried with a single origin: there is nowhere else to go', async () => {
    const h = harness([{ reply: fail('tls') }, { reply: respond(200) }]);
    expect(await h.run({ path: '/v1/items' })).toMatchObject({
      status: 'failed',
      reason: 'not-retryable',
      attempts: 1,
      failure: { class: 'tls' },
    });
  });
});

describe('origin options', () => {
  it('refuses a bad accepts, probe or connectivity, naming each', () => {
    expect(() =>
      createFailoverClient({
        origins: [{ id: 'a', url: 'https://a.example.test', accepts: 'writes' }],
        probe: { method: 'POST', path: 'health', timeout: 5 },
        connectivity: { current: () => 'online' },
      } as never),
    ).toThrow(
      [
        'connectivity.subscribe: expected a function',
        'probe.timeout: unknown option',
        'probe.method: expected "GET" or "HEAD"',
        'probe.path: expected a path that starts with "/"',
        'origins[0].accepts: expected "all" or "reads"',
      ].join('\n'),
    );
    expect(() => createFailoverClient({ origins: twoOrigins, probe: 'GET /health' } as never)).toThrow(
      'probe: expected a function or { method, path }',
    );
  });

  it('sends no write to a reads-only origin: none usable ends no-healthy-origin with nothing sent', async () => {
    const h = harness([], {
      origins: [{ id: 'replica', url: 'https://replica.example.test', accepts: 'reads' }],
    });
    const outcome = await h.run({ method: 'POST', path: '/v1/orders', body: '{}' });
    expect(outcome).toMatchObject({ status: 'failed', reason: 'no-healthy-origin', attempts: 0 });
    expect(h.transport.calls).toHaveLength(0);
  });

  it("leaves no listener on the caller's signal when the request ends before any attempt", async () => {
    // No usable origin ends the request as it starts, before the client has begun to listen to the signal.
    const h = harness([], {
      origins: [{ id: 'replica', url: 'https://replica.example.test', accepts: 'reads' }],
    });
    const controller = new AbortController();
    const outcome = await h.run({
      method: 'POST',
      path: '/v1/orders',
      body: '{}',
      signal: controller.signal,
    });
    expect(outcome).toMatchObject({ status: 'failed', reason: 'no-healthy-origin', attempts: 0 });
    expect(getEventListeners(controller.signal, 'abort')).toHaveLength(0);
  });

  it('sends a PUT or DELETE past a reads-only origin too: repeatable, but not a read', async () => {
    const h = harness([{ reply: respond(204) }], {
      origins: [
        { id: 'replica', url: 'https://replica.example.test', accepts: 'reads' },
        { id: 'main', url: 'https://main.example.test' },
      ],
    });
    for (const method of ['PUT', 'DELETE', 'PATCH'])
      expect(
        await h.run({ method, path: '/v1/items/1', body: method === 'DELETE' ? null : '{}' }),
      ).toMatchObject({ status: 'succeeded', origin: 'main' });
    expect(await h.run({ path: '/v1/items/1' })).toMatchObject({ status: 'succeeded', origin: 'replica' });
  });
});

describe('what counts against an origin', () => {
  it('an attempt that failed on this device (auth.headers() threw) never counts against the origin', async () => {
    const h = harness([{ reply: respond(200) }], {
      origins: twoOrigins,
      auth: {
        headers: () => {
          throw new Error('token store unavailable');
        },
        refresh: async () => undefined,
      },
    });
    for (let i = 0; i < 3; i++) {
      const outcome = await h.run({ path: '/v1/items' });
      expect(outcome).toMatchObject({
        status: 'failed',
        failure: { class: 'unexpected', requestSent: 'no' },
      });
    }
    expect(h.transport.calls).toHaveLength(0);
    expect(h.client.health().state).toBe('healthy');
    expect(h.events.filter((event) => event.type === 'health-changed')).toEqual([]);
  });
  it('an attempt the request budget cut short is announced, but never counts against the origin', async () => {
    const h = harness([{ reply: 'hang' }], { origins: twoOrigins });
    const outcome = await h.run({ path: '/v1/items' });
    expect(outcome).toMatchObject({ status: 'failed', reason: 'budget-exhausted', attempts: 2 });
    const fields = (e: DecisionEvent) => [
      e.type,
      'attempt' in e ? e.attempt : undefined,
      'failureClass' in e ? e.failureClass : undefined,
      'reason' in e ? e.reason : undefined,
    ];
    expect(h.events.map(fields)).toEqual([
      ['attempt-started', 1, undefined, undefined],
      ['attempt-failed', 1, 'response-timeout', undefined],
      ['retry-scheduled', 1, 'response-timeout', undefined],
      ['attempt-started', 2, undefined, undefined],
      ['attempt-failed', 2, 'response-timeout', 'budget-exhausted'],
      ['failed', 2, 'response-timeout', 'budget-exhausted'],
    ]);
    // One counted failure (the 5 s timeout) is under suspectAfter (2): the cut attempt did not count.
    expect(h.client.health().state).toBe('healthy');
  });
});

describe('connectivity (rule 6)', () => {
  it('while offline, an interactive request fails offline at once and nothing is sent', async () => {
    const connectivity = manualConnectivity('offline');
    const h = harness([{ reply: respond(200) }], { origins: twoOrigins, connectivity });
    const outcome = await h.run({ path: '/v1/items' });
    expect(outcome).toEqual({ status: 'failed', reason: 'offline', attempts: 0, elapsedMs: 0 });
    expect(h.transport.calls).toHaveLength(0);
    expect(h.events).toMatchObject([{ type: 'failed', reason: 'offline', attempt: 0 }]);
    expect(h.events[0]).not.toHaveProperty('origin');
    connectivity.set('online');
    expect(await h.run({ path: '/v1/items' })).toMatchObject({ status: 'succeeded', origin: 'primary' });
  });

  it('going offline between attempts sends nothing more', async () => {
    const connectivity = manualConnectivity('online');
    const h = harness([{ reply: fail('connect') }, { reply: respond(200) }], {
      origins: twoOrigins,
      connectivity,
    });
    const outcome = h.client.request({ path: '/v1/items' });
    await h.clock.increment(0);
    // The first attempt failed; the request waits its backoff. Going offline ends it at once, without
    // counting an attempt that was never sent.
    connectivity.set('offline');
    await h.clock.increment(0);
    expect(await outcome).toMatchObject({ status: 'failed', reason: 'offline', attempts: 1, elapsedMs: 0 });
    expect(h.transport.calls).toHaveLength(1);
    expect(h.client.health().state).toBe('healthy');
    expect(h.events.map((event) => event.type)).toEqual([
      'attempt-started',
      'attempt-failed',
      'retry-scheduled',
      'failed',
    ]);
  });

  it('going offline during a Retry-After wait ends the request at once, not when the wait is over', async () => {
    const connectivity = manualConnectivity('online');
    const h = harness([{ reply: respond(503, { 'retry-after': '8' }) }, { reply: respond(200) }], {
      connectivity,
    });
    const outcome = h.client.request({ path: '/v1/items' });
    await h.clock.increment(1_000);
    connectivity.set('offline');
    await h.clock.increment(0);
    expect(await outcome).toMatchObject({
      status: 'failed',
      reason: 'offline',
      attempts: 1,
      elapsedMs: 1_000,
    });
    expect(h.transport.calls).toHaveLength(1);
    expect(h.clock.pending()).toBe(0);
  });

  it('an attempt in flight when the device goes offline finishes; no further attempt starts', async () => {
    const connectivity = manualConnectivity('online');
    const h = harness(
      [{ reply: fail('connection-lost', 'unknown'), latencyMs: 2_000 }, { reply: respond(200) }],
      {
        connectivity,
      },
    );
    const outcome = h.client.request({ path: '/v1/items' });
    await h.clock.increment(1_000);
    connectivity.set('offline');
    await h.clock.increment(1_000);
    expect(await outcome).toMatchObject({
      status: 'failed',
      reason: 'offline',
      attempts: 1,
      elapsedMs: 2_000,
    });
    expect(h.transport.calls).toHaveLength(1);
    expect(h.events.some((event) => event.type === 'retry-scheduled')).toBe(false);
  });

  it('back online before the attempt in flight ends: the request goes on as if nothing happened', async () => {
    const connectivity = manualConnectivity('online');
    const h = harness([{ reply: fail('connect'), latencyMs: 2_000 }, { reply: respond(200) }], {
      connectivity,
    });
    const outcome = h.client.request({ path: '/v1/items' });
    await h.clock.increment(500);
    connectivity.set('offline');
    await h.clock.increment(500);
    connectivity.set('online');
    await h.clock.runAll();
    expect(await outcome).toMatchObject({ status: 'succeeded', attempts: 2 });
    expect(h.transport.calls).toHaveLength(2);
  });
});
