import { describe, expect, it, vi } from 'vitest';
import { harness } from '../helpers/client-harness.js';
import { fail, respond } from '../helpers/scripted-transport.js';
import { createFailoverClient } from '../../src/runtime/create-failover-client.js';
import { PolicyError } from '../../src/errors/policy-error.js';
import type { ReconcileHook } from '../../src/runtime/client-options.js';

// Each rule of docs/rules.md (1-5, 8, 9) has a test here, named after it. The client runs on a simulated clock
// with a scripted transport, so every wait is exact and nothing sleeps.

describe('rule 1: every request ends within attempts.max and its budget', () => {
  it('stops after attempts.max attempts of a retryable failure', async () => {
    const h = harness([{ reply: respond(503) }]);
    const outcome = await h.run({ path: '/items' });
    expect(outcome).toMatchObject({ status: 'failed', reason: 'attempts-exhausted', attempts: 3 });
    expect(h.transport.calls).toHaveLength(3);
  });

  it('counts attempts the transport reports it made itself', async () => {
    const h = harness([{ reply: { ...fail('connect'), attempts: 2 } }]);
    const outcome = await h.run({ path: '/items' });
    expect(outcome).toMatchObject({ status: 'failed', reason: 'attempts-exhausted', attempts: 3 });
    expect(h.transport.calls).toHaveLength(2);
    expect(h.transport.calls[1]?.url).toBe('https://api.example.test/items');
  });

  it('ends at the budget when the origin never answers', async () => {
    const h = harness([{ reply: 'hang' }], {
      policy: { budgetMs: 2_000, timeouts: { attemptMs: 2_000, connectMs: 1_000 } },
    });
    const outcome = await h.run({ path: '/slow' });
    expect(outcome).toMatchObject({
      status: 'failed',
      reason: 'budget-exhausted',
      attempts: 1,
      elapsedMs: 2_000,
    });
    expect(outcome.status === 'failed' && outcome.failure?.class).toBe('response-timeout');
    expect(h.clock.pending()).toBe(0);
  });

  it('honours a per-request deadlineMs over policy.budgetMs', async () => {
    const h = harness([{ reply: respond(503), latencyMs: 100 }], { policy: { attempts: { max: 10 } } });
    const outcome = await h.run({ path: '/items', deadlineMs: 1_000 });
    expect(outcome.status).toBe('failed');
    expect(outcome.status === 'failed' && outcome.elapsedMs).toBeLessThanOrEqual(1_000);
    expect(outcome.status === 'failed' && outcome.reason).toBe('budget-exhausted');
  });
});

describe('rule 2: a write that may have reached the server is replayed only with an idempotency key', () => {
  it('does not resend a POST without a key after a response timeout', async () => {
    const h = harness([{ reply: 'hang' }, { reply: respond(201) }]);
    const outcome = await h.run({ method: 'POST', path: '/orders', body: '{"qty":1}' });
    expect(outcome).toMatchObject({ status: 'failed', reason: 'unsafe-to-replay', attempts: 1 });
    expect(outcome.status === 'failed' && outcome.failure).toMatchObject({
      class: 'response-timeout',
      requestSent: 'unknown',
    });
    expect(h.transport.calls).toHaveLength(1);
  });

  it('resends a POST with its key, the same key and the same origin on every attempt', async () => {
    const h = harness([{ reply: fail('connection-lost') }, { reply: respond(201) }]);
    const outcome = await h.run({ method: 'POST', path: '/orders', body: 'x', idempotencyKey: 'order-42' });
    expect(outcome).toMatchObject({ status: 'succeeded', attempts: 2, origin: 'primary' });
    expect(h.transport.calls.map((c) => c.headers['idempotency-key'])).toEqual(['order-42', 'order-42']);
    expect(new Set(h.transport.calls.map((c) => c.url)).size).toBe(1);
    expect(h.transport.calls.map((c) => c.body)).toEqual(['x', 'x']);
  });

  it('retries a POST without a key when nothing was sent', async () => {
    const h = harness([{ reply: fail('connect') }, { reply: respond(201) }]);
    const outcome = await h.run({ method: 'POST', path: '/orders' });
    expect(outcome).toMatchObject({ status: 'succeeded', attempts: 2 });
  });

  it('treats a browser-style opaque failure of a write as possibly applied, and retries a read', async () => {
    const write = harness([{ reply: fail('unknown') }, { reply: respond(201) }]);
    expect(await write.run({ method: 'PATCH', path: '/orders/1' })).toMatchObject({
      status: 'failed',
      reason: 'unsafe-to-replay',
    });
    expect(write.transport.calls).toHaveLength(1);
    const read = harness([{ reply: fail('unknown') }, { reply: respond(200) }]);
    expect(await read.run({ path: '/orders/1' })).toMatchObject({ status: 'succeeded', attempts: 2 });
  });

  it('retries PUT and DELETE, which are idempotent, unless the request says otherwise', async () => {
    const put = harness([{ reply: fail('connection-lost') }, { reply: respond(200) }]);
    expect(await put.run({ method: 'PUT', path: '/doc' })).toMatchObject({
      status: 'succeeded',
      attempts: 2,
    });
    const unsafe = harness([{ reply: fail('connection-lost') }, { reply: respond(200) }]);
    expect(await unsafe.run({ method: 'PUT', path: '/doc', idempotent: false })).toMatchObject({
      status: 'failed',
      reason: 'unsafe-to-replay',
    });
  });

  it('asks reconcile, and ends succeeded with reconciled: true when the write was applied', async () => {
    const reconcile = vi.fn(async (_args: Parameters<ReconcileHook>[0]) => ({
      status: 'applied' as const,
      response: new Response('{"id":7}', { status: 200 }),
    }));
    const h = harness([{ reply: fail('connection-lost') }], { reconcile });
    const outcome = await h.run({ method: 'POST', path: '/orders?debug=1', body: 'b' });
    expect(outcome).toMatchObject({ status: 'succeeded', reconciled: true, attempts: 1 });
    expect(outcome.status === 'succeeded' && (await outcome.response.json())).toEqual({ id: 7 });
    expect(reconcile).toHaveBeenCalledTimes(1);
    expect(reconcile.mock.calls[0]?.[0]).toMatchObject({
      request: {
        method: 'POST',
        url: 'https://api.example.test/orders?debug=1',
        origin: 'primary',
        body: 'b',
      },
      failure: { class: 'connection-lost', requestSent: 'unknown' },
      attempts: 1,
    });
  });

  it('sends the write again when reconcile says it was not applied', async () => {
    const h = harness([{ reply: fail('connection-lost') }, { reply: respond(201) }], {
      reconcile: async () => ({ status: 'not-applied' }),
    });
    expect(await h.run({ method: 'POST', path: '/orders' })).toMatchObject({
      status: 'succeeded',
      attempts: 2,
    });
  });

  it('asks reconcile again after each attempt that may have reached the server: one answer clears one attempt', async () => {
    const reconcile = vi.fn(async (_args: Parameters<ReconcileHook>[0]) => ({
      status: 'not-applied' as const,
    }));
    const h = harness(
      [{ reply: fail('connection-lost') }, { reply: fail('connection-lost') }, { reply: respond(201) }],
      { reconcile },
    );
    expect(await h.run({ method: 'POST', path: '/orders' })).toMatchObject({
      status: 'succeeded',
      attempts: 3,
    });
    expect(reconcile).toHaveBeenCalledTimes(2);
    expect(reconcile.mock.calls.map(([args]) => args.attempts)).toEqual([1, 2]);
  });

  it('fails unsafe-to-replay when reconcile cannot tell', async () => {
    const h = harness([{ reply: fail('response-timeout') }], {
      reconcile: async () => ({ status: 'unknown' }),
    });
    expect(await h.run({ method: 'POST', path: '/orders' })).toMatchObject({
      status: 'failed',
      reason: 'unsafe-to-replay',
    });
    const throwing = harness([{ reply: fail('response-timeout') }], {
      reconcile: () => Promise.reject(new Error('reconcile endpoint down')),
    });
    expect(await throwing.run({ method: 'POST', path: '/orders' })).toMatchObject({
      status: 'failed',
      reason: 'unsafe-to-replay',
    });
  });
});

describe('rule 3: 401 is refreshed at most once per request, shared by concurrent requests', () => {
  it('fails unauthorized at once without auth', async () => {
    const h = harness([{ reply: respond(401) }]);
    expect(await h.run({ path: '/me' })).toMatchObject({
      status: 'failed',
      reason: 'unauthorized',
      attempts: 1,
    });
  });

  it('refreshes once, then makes one more attempt with the new credentials', async () => {
    let token = 'old';
    const refresh = vi.fn(async () => {
      token = 'new';
    });
    const h = harness([{ reply: respond(401) }, { reply: respond(200) }], {
      auth: { headers: () => ({ Authorization: `Bearer ${token}` }), refresh },
    });
    expect(await h.run({ path: '/me' })).toMatchObject({ status: 'succeeded', attempts: 2 });
    expect(h.transport.calls.map((c) => c.headers['authorization'])).toEqual(['Bearer old', 'Bearer new']);
    expect(refresh).toHaveBeenCalledTimes(1);
  });

  it('ends unauthorized when the refreshed credentials are refused too', async () => {
    const refresh = vi.fn(async () => {});
    const h = harness([{ reply: respond(401) }], { auth: { headers: () => ({}), refresh } });
    expect(await h.run({ path: '/me' })).toMatchObject({
      status: 'failed',
      reason: 'unauthorized',
      attempts: 2,
    });
    expect(refresh).toHaveBeenCalledTimes(1);
  });

  it('shares one refresh among concurrent 401s', async () => {
    let token = 0;
    const refresh = vi.fn(async () => {
      token += 1;
    });
    const h = harness([{ reply: respond(401), latencyMs: 10 }], {
      auth: { headers: () => ({ authorization: `t${token}` }), refresh },
    });
    // Every request sent with the old token is refused; the new token is accepted.
    h.transport.send = ((send) => (request) =>
      request.headers['authorization'] === 't0' ? send(request) : Promise.resolve(respond(200)))(
      h.transport.send.bind(h.transport),
    );
    const outcomes = Promise.all(Array.from({ length: 8 }, () => h.client.request({ path: '/me' })));
    await h.clock.runAll();
    for (const outcome of await outcomes) expect(outcome).toMatchObject({ status: 'succeeded', attempts: 2 });
    expect(refresh).toHaveBeenCalledTimes(1);
  });

  it('ends unauthorized when the refresh itself fails', async () => {
    const h = harness([{ reply: respond(401) }], {
      auth: { headers: () => ({}), refresh: () => Promise.reject(new Error('refresh token expired')) },
    });
    expect(await h.run({ path: '/me' })).toMatchObject({
      status: 'failed',
      reason: 'unauthorized',
      attempts: 1,
    });
  });
});

describe('rule 4: a status the policy does not name as retryable is not retried', () => {
  it.each([400, 403, 404, 409, 422, 500, 501])('does not retry %i', async (status) => {
    const h = harness([{ reply: respond(status, {}, 'server says no') }, { reply: respond(200) }]);
    const outcome = await h.run({ path: '/items' });
    expect(outcome).toMatchObject({ status: 'failed', reason: 'not-retryable', attempts: 1 });
    expect(outcome.status === 'failed' && outcome.failure?.status).toBe(status);
    if (outcome.status === 'failed') expect(await outcome.response?.text()).toBe('server says no');
  });

  it.each([408, 429, 502, 503, 504])('retries %i by default', async (status) => {
    const h = harness([{ reply: respond(status) }, { reply: respond(200) }]);
    expect(await h.run({ path: '/items' })).toMatchObject({ status: 'succeeded', attempts: 2 });
  });

  it('retries exactly the statuses the policy names', async () => {
    const h = harness([{ reply: respond(500) }, { reply: respond(200) }], {
      policy: { retryableStatuses: [500] },
    });
    expect(await h.run({ path: '/items' })).toMatchObject({ status: 'succeeded', attempts: 2 });
    const none = harness([{ reply: respond(503) }], { policy: { retryableStatuses: [] } });
    expect(await none.run({ path: '/items' })).toMatchObject({ status: 'failed', reason: 'not-retryable' });
  });
});

describe('rule 5: Retry-After is waited for, and a wait past the budget ends the request', () => {
  it.each([429, 503])('waits at least the Retry-After of a %i before the next attempt', async (status) => {
    const h = harness([{ reply: respond(status, { 'retry-after': '3' }) }, { reply: respond(200) }]);
    const sentAt: number[] = [];
    const send = h.transport.send.bind(h.transport);
    h.transport.send = (request) => (sentAt.push(h.clock.now()), send(request));
    expect(await h.run({ path: '/items' })).toMatchObject({ status: 'succeeded', attempts: 2 });
    expect(sentAt[1]! - sentAt[0]!).toBeGreaterThanOrEqual(3_000);
    expect(h.events.find((e) => e.type === 'retry-scheduled')).toMatchObject({
      delayMs: 3_000,
      retryAfterMs: 3_000,
    });
  });

  it('ends retry-after-exceeds-budget when the server asks for more time than is left', async () => {
    const h = harness([{ reply: respond(503, { 'retry-after': '30' }) }, { reply: respond(200) }]);
    const outcome = await h.run({ path: '/items' });
    expect(outcome).toMatchObject({ status: 'failed', reason: 'retry-after-exceeds-budget', attempts: 1 });
    expect(outcome.status === 'failed' && outcome.elapsedMs).toBe(0);
  });

  it('ends retry-after-exceeds-budget when Retry-After is over retryAfter.maxMs, whatever the budget', async () => {
    const h = harness([{ reply: respond(429, { 'retry-after': '120' }) }], {
      policy: { budgetMs: 600_000, retryAfter: { maxMs: 60_000 } },
    });
    expect(await h.run({ path: '/items' })).toMatchObject({
      status: 'failed',
      reason: 'retry-after-exceeds-budget',
    });
  });

  it('accepts an HTTP-date Retry-After', async () => {
    const h = harness([
      { reply: respond(503, { 'retry-after': new Date(2_000).toUTCString() }) },
      { reply: respond(200) },
    ]);
    expect(await h.run({ path: '/items' })).toMatchObject({ status: 'succeeded', attempts: 2 });
    expect(h.events.find((e) => e.type === 'retry-scheduled')?.delayMs).toBe(2_000);
  });
});

describe('rule 8: credentials go only to origins allowed to have them; http: is refused', () => {
  it('refuses an http: origin unless it says allowInsecure', () => {
    let error: unknown;
    try {
      createFailoverClient({ origins: [{ id: 'a', url: 'http://api.example.test' }] });
    } catch (thrown) {
      error = thrown;
    }
    // Written out, not built with PolicyError: its formatting is part of what is checked.
    expect(error).toBeInstanceOf(PolicyError);
    expect((error as PolicyError).message).toBe(
      'origins[0].url: http: is refused; use https: or set allowInsecure: true (docs/rules.md, rule 8)',
    );
    expect((error as PolicyError).issues).toEqual([
      {
        path: 'origins[0].url',
        message: 'http: is refused; use https: or set allowInsecure: true (docs/rules.md, rule 8)',
      },
    ]);
    expect(() =>
      createFailoverClient({ origins: [{ id: 'a', url: 'http://127.0.0.1:9', allowInsecure: true }] }),
    ).not.toThrow();
  });

  it('sends no credentials to an origin with credentials: omit', async () => {
    const h = harness([{ reply: respond(200) }], {
      origins: [{ id: 'partner', url: 'https://partner.example.test', credentials: 'omit' }],
      auth: { headers: () => ({ authorization: 'Bearer secret' }), refresh: async () => {} },
    });
    await h.run({ path: '/x', headers: { Cookie: 'sid=1', 'X-Trace': 'ok' } });
    expect(h.transport.calls[0]?.headers).toEqual({ 'x-trace': 'ok' });
  });
});

describe('rule 9: decision events carry no query string, header value, token or body', () => {
  it('redacts every event of a request full of secrets', async () => {
    const h = harness([{ reply: respond(503, { 'retry-after': '1' }) }, { reply: respond(200) }], {
      auth: { headers: () => ({ authorization: 'Bearer tok-SECRET1' }), refresh: async () => {} },
    });
    await h.run({
      method: 'POST',
      path: '/v1/orders?api_key=SECRET2#frag',
      headers: { 'x-api-key': 'SECRET3' },
      body: '{"card":"SECRET4"}',
      idempotencyKey: 'SECRET5',
    });
    expect(h.events.map((e) => e.type)).toEqual([
      'attempt-started',
      'attempt-failed',
      'origin-held',
      'retry-scheduled',
      'attempt-started',
      'succeeded',
    ]);
    const text = JSON.stringify(h.events);
    for (const secret of ['SECRET1', 'SECRET2', 'SECRET3', 'SECRET4', 'SECRET5', 'frag'])
      expect(text).not.toContain(secret);
    expect(h.events[0]).toEqual({
      type: 'attempt-started',
      requestId: 'r1',
      origin: 'primary',
      host: 'api.example.test',
      method: 'POST',
      path: '/v1/orders',
      attempt: 1,
      elapsedMs: 0,
    });
  });
});
