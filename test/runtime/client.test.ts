import { getEventListeners } from 'node:events';
import { withInspector } from '../../src/runtime/with-inspector.js';
import { describe, expect, it } from 'vitest';
import { harness } from '../helpers/client-harness.js';
import { fail, respond } from '../helpers/scripted-transport.js';
import { createFailoverClient } from '../../src/runtime/create-failover-client.js';
import { PolicyError } from '../../src/errors/policy-error.js';
import { RequestError } from '../../src/errors/request-error.js';
import { RequestFailedError } from '../../src/errors/request-failed-error.js';
import { FailwiseError } from '../../src/errors/failwise-error.js';
import { ArgumentError } from '../../src/errors/argument-error.js';
import { memoryStore } from '../../src/stores/memory-store.js';
import type { ConnectivitySource } from '../../src/connectivity/connectivity-source.js';

describe('cancellation', () => {
  it('ends at once when aborted during a backoff wait, and starts no further attempt', async () => {
    const h = harness([{ reply: respond(503) }], {
      policy: { backoff: { initialMs: 1_000, jitter: 'none' } },
    });
    const controller = new AbortController();
    const outcome = h.client.request({ path: '/x', signal: controller.signal });
    await h.clock.increment(400);
    expect(h.transport.calls).toHaveLength(1);
    controller.abort();
    const result = await outcome;
    expect(result).toMatchObject({ status: 'failed', reason: 'cancelled', attempts: 1, elapsedMs: 400 });
    await h.clock.runAll();
    expect(h.transport.calls).toHaveLength(1);
    expect(h.clock.pending()).toBe(0);
  });

  it('aborts the attempt in flight', async () => {
    const h = harness([{ reply: 'hang' }]);
    const controller = new AbortController();
    const outcome = h.client.request({ path: '/x', signal: controller.signal });
    await h.clock.increment(10);
    controller.abort();
    expect(await outcome).toMatchObject({
      status: 'failed',
      reason: 'cancelled',
      failure: { class: 'cancelled' },
    });
    expect(h.transport.aborted).toBe(1);
    expect(h.transport.calls[0]?.signal.aborted).toBe(true);
  });

  it("leaves no listener on the caller's signal once a request ends, however it ended", async () => {
    // One signal for many requests (an app's page-wide controller): each request listens while it runs only.
    const h = harness([
      { reply: respond(200) },
      { reply: respond(503) },
      { reply: respond(200) },
      { reply: respond(404) },
    ]);
    const controller = new AbortController();
    // The first succeeds at once, the second after a retry.
    for (let i = 0; i < 2; i++) {
      const outcome = h.client.request({ path: `/x${i}`, signal: controller.signal });
      expect(getEventListeners(controller.signal, 'abort')).toHaveLength(1);
      await h.clock.runAll();
      expect(await outcome).toMatchObject({ status: 'succeeded', attempts: i + 1 });
      expect(getEventListeners(controller.signal, 'abort')).toHaveLength(0);
    }
    const ended = h.client.request({ path: '/gone', signal: controller.signal });
    await h.clock.runAll();
    expect(await ended).toMatchObject({ status: 'failed', reason: 'not-retryable' });
    expect(getEventListeners(controller.signal, 'abort')).toHaveLength(0);
    // Aborting it now reaches no request: every one has ended.
    controller.abort();
    expect(h.transport.aborted).toBe(0);
  });

  it('starts no attempt for an already aborted signal: attempts 0, nothing sent, no attempt-started event', async () => {
    const h = harness([{ reply: respond(200) }]);
    const outcome = await h.run({ path: '/x', signal: AbortSignal.abort() });
    expect(outcome).toEqual({
      status: 'failed',
      reason: 'cancelled',
      failure: {
        class: 'cancelled',
        requestSent: 'no',
        origin: '',
        message: 'cancelled by the caller before the request started; nothing was sent',
      },
      attempts: 0,
      elapsedMs: 0,
    });
    expect(h.transport.calls).toHaveLength(0);
    expect(h.events.map((event) => event.type)).toEqual(['failed']);
    expect(h.events[0]).toMatchObject({ reason: 'cancelled', failureClass: 'cancelled' });
    await h.client.close();
    expect(h.clock.pending()).toBe(0);
  });
});

describe('idempotency keys (IETF httpapi Idempotency-Key draft)', () => {
  it('generates a key for idempotencyKey: auto and sends it on every attempt', async () => {
    const h = harness([{ reply: fail('response-timeout') }, { reply: respond(201) }]);
    await h.run({ method: 'POST', path: '/orders', idempotencyKey: 'auto' });
    const keys = h.transport.calls.map((c) => c.headers['idempotency-key']);
    expect(keys[0]).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(keys[1]).toBe(keys[0]);
  });

  it('uses the header name the policy gives', async () => {
    const h = harness([{ reply: respond(201) }], { policy: { idempotency: { header: 'X-Request-Key' } } });
    await h.run({ method: 'POST', path: '/orders', idempotencyKey: 'k1' });
    expect(h.transport.calls[0]?.headers).toMatchObject({ 'x-request-key': 'k1' });
  });

  it('waits and sends the same request again on 409 (the original is still in flight)', async () => {
    const h = harness([{ reply: respond(409) }, { reply: respond(201) }]);
    const outcome = await h.run({ method: 'POST', path: '/orders', body: 'b', idempotencyKey: 'k1' });
    expect(outcome).toMatchObject({ status: 'succeeded', attempts: 2 });
    expect(h.transport.calls[1]).toMatchObject({ body: 'b', headers: { 'idempotency-key': 'k1' } });
  });

  it('does not retry 409 without a key', async () => {
    const h = harness([{ reply: respond(409) }, { reply: respond(201) }]);
    expect(await h.run({ method: 'POST', path: '/orders' })).toMatchObject({
      status: 'failed',
      reason: 'not-retryable',
    });
  });

  it.each([422, 400])('fails visibly on %i with the server response kept', async (status) => {
    const h = harness([{ reply: respond(status, {}, '{"error":"key reused"}') }]);
    const outcome = await h.run({ method: 'POST', path: '/orders', idempotencyKey: 'k1' });
    expect(outcome).toMatchObject({ status: 'failed', reason: 'not-retryable', failure: { status } });
    if (outcome.status === 'failed') expect(await outcome.response?.json()).toEqual({ error: 'key reused' });
  });
});

describe('the attempt header', () => {
  it('tells the server which attempt it sees when the policy names a header', async () => {
    const h = harness([{ reply: respond(503) }, { reply: respond(200) }], {
      policy: { attemptHeader: 'x-failwise-attempt' },
    });
    await h.run({ path: '/x' });
    expect(h.transport.calls.map((c) => c.headers['x-failwise-attempt'])).toEqual([
      'attempt=1; max=3',
      'attempt=2; max=3',
    ]);
  });

  it('sends none by default', async () => {
    const h = harness([{ reply: respond(200) }]);
    await h.run({ path: '/x' });
    expect(Object.keys(h.transport.calls[0]!.headers)).toEqual([]);
  });
});

describe('client.fetch', () => {
  it('resolves with the Response of a succeeded outcome', async () => {
    const h = harness([{ reply: respond(200, { 'content-type': 'application/json' }, '{"ok":true}') }]);
    const response = h.client.fetch('/x', {
      method: 'GET',
      headers: { accept: 'application/json' },
      mode: 'cors',
    });
    await h.clock.runAll();
    expect(await (await response).json()).toEqual({ ok: true });
  });

  it("resolves with a 404's Response, as fetch does, so the app reads the server's error body", async () => {
    const h = harness([{ reply: respond(404, {}, 'nope') }]);
    const response = h.client.fetch('/missing');
    await h.clock.runAll();
    const answered = await response;
    expect(answered.status).toBe(404);
    expect(await answered.text()).toBe('nope');
    expect(h.transport.calls).toHaveLength(1);
  });

  it('rejects with RequestFailedError carrying the whole outcome when no server answered', async () => {
    const h = harness([{ reply: fail('connect', 'no') }], { policy: { attempts: { max: 2 } } });
    const response = h.client.fetch('/x').catch((e: unknown) => e);
    await h.clock.runAll();
    const error = await response;
    expect(error).toBeInstanceOf(RequestFailedError);
    expect((error as RequestFailedError).outcome).toMatchObject({
      status: 'failed',
      reason: 'attempts-exhausted',
      attempts: 2,
      failure: { class: 'connect', requestSent: 'no' },
    });
  });
});

describe('bad input', () => {
  it('rejects a malformed request with RequestError naming the field', async () => {
    const h = harness([{ reply: respond(200) }]);
    const cases: [unknown, string][] = [
      [{ path: 'no-slash' }, 'request.path: expected a path starting with "/", got "no-slash"'],
      [{ path: '/x', method: 'GE T' }, 'request.method: expected an HTTP method token, got "GE T"'],
      [
        { path: '/x', deadlineMs: -1 },
        'request.deadlineMs: expected an integer from 1 to 2147483647 (ms), got -1',
      ],
      [
        { path: '/x', idempotencyKey: '' },
        'request.idempotencyKey: expected a non-empty string of printable ASCII (a header value) or "auto"',
      ],
      [
        { path: '/x', body: new Blob(['x']) },
        'request.body: expected a string, bytes or URLSearchParams: a stream, Blob or FormData cannot be replayed safely',
      ],
      [
        { path: '/x', lifetime: 'forever' },
        'request.lifetime: expected "interactive", "durable" or "cached", got "forever"',
      ],
      [{ path: '/x', bodyy: 'typo' }, 'request.bodyy: unknown field'],
      [{ path: '/x', signal: {} }, 'request.signal: expected an AbortSignal'],
      [{ path: '/x', body: 'q=1' }, 'request.body: a GET request cannot have a body'],
    ];
    for (const [request, message] of cases) {
      const error = await h.client.request(request as never).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(RequestError);
      expect((error as Error).message).toBe(message);
    }
    expect(h.transport.calls).toHaveLength(0);
  });

  it('refuses every bad option at once with PolicyError', () => {
    const make = () =>
      createFailoverClient({
        origins: [
          { id: 'a', url: 'https://a.example.test' },
          { id: 'a', url: 'ftp://b.example.test' },
          { id: '', url: 'https://c.example.test?token=x' },
        ],
        policy: { attempts: { max: 0 }, budgetMs: 1_000, timeouts: { attemptMs: 5_000 } },
        retries: 3,
      } as never);
    expect(make).toThrow(PolicyError);
    const lines = (() => {
      try {
        make();
      } catch (error) {
        return (error as Error).message.split('\n');
      }
      return [];
    })();
    expect(lines).toEqual(
      expect.arrayContaining([
        'retries: unknown option',
        'origins[1].id: duplicate origin id "a"',
        'origins[1].url: expected an http(s) URL, got protocol "ftp:"',
        'origins[2].id: expected a non-empty string',
        'origins[2].url: must not contain a query, fragment or credentials; send credentials with `auth`',
        'policy.attempts.max: expected a number >= 1, got 0',
        'policy.timeouts.attemptMs: must not exceed policy.budgetMs (1000), got 5000',
      ]),
    );
    expect(lines).toHaveLength(7);
  });

  it('names each option that is not the shape it must be', () => {
    const make = () =>
      createFailoverClient({
        origins: [
          { id: 'a', url: 'https://a.example.test', allowInsecure: 'yes', credentials: 'always', weight: 2 },
        ],
        transport: {},
        clock: 5,
        auth: { headers: () => ({}) },
        onEvent: 'log',
        inspect: { next: () => undefined },
      } as never);
    expect(make).toThrow(
      [
        'transport.send: expected a function',
        'clock: expected an object',
        'auth.refresh: expected a function',
        'onEvent: expected a function',
        "inspect: expected withInspector(observer) from 'failwise/machines' (an inspection observer goes inside it)",
        'origins[0].weight: unknown option',
        'origins[0].allowInsecure: expected a boolean',
        'origins[0].credentials: expected "send" or "omit"',
      ].join('\n'),
    );
  });

  it('refuses an empty origin list', () => {
    expect(() => createFailoverClient({ origins: [] })).toThrow(
      'origins: expected a non-empty array of { id, url }',
    );
  });
});

describe('client.close', () => {
  it('ends requests in flight as cancelled and refuses new ones', async () => {
    const h = harness([{ reply: 'hang' }]);
    const outcome = h.client.request({ path: '/x' });
    await h.clock.increment(5);
    await h.client.close();
    expect(await outcome).toMatchObject({ status: 'failed', reason: 'cancelled' });
    expect(h.clock.pending()).toBe(0);
    await expect(h.client.request({ path: '/x' })).rejects.toThrow(FailwiseError);
  });

  it('ignores an onEvent observer that throws', async () => {
    const h = harness([{ reply: respond(200) }], {
      onEvent: () => {
        throw new Error('observer bug');
      },
    });
    expect(await h.run({ path: '/x' })).toMatchObject({ status: 'succeeded' });
  });
});

describe('inspection', () => {
  it('passes the inspect observer to each request actor, as the Stately inspector needs', async () => {
    const inspected: { type: string; value?: unknown }[] = [];
    const h = harness([{ reply: respond(503) }, { reply: respond(200) }], {
      inspect: withInspector((event) =>
        inspected.push({
          type: event.type,
          value:
            event.type === '@xstate.snapshot' ? (event.snapshot as { value?: unknown }).value : undefined,
        }),
      ),
    });
    expect(await h.run({ path: '/x' })).toMatchObject({ status: 'succeeded', attempts: 2 });
    expect(inspected.some((e) => e.type === '@xstate.actor')).toBe(true);
    const states = inspected.flatMap((e) => (e.type === '@xstate.snapshot' ? [JSON.stringify(e.value)] : []));
    expect(states).toEqual(
      expect.arrayContaining(['{"active":"attempting"}', '{"active":"backingOff"}', '"succeeded"']),
    );
  });
});

describe("a connectivity source of the app's own", () => {
  it('refuses a hint failwise does not know, back to the source, and reads none of it as offline', async () => {
    // A source that tells each listener in turn, as failwise's own do (one that throws does not stop the rest).
    const listeners: Array<(hint: unknown) => void> = [];
    const source: ConnectivitySource = {
      current: () => 'online',
      subscribe: (listener) => (listeners.push(listener as (hint: unknown) => void), () => undefined),
    };
    const h = harness([{ reply: respond(201) }], { connectivity: source, store: memoryStore() });
    // Durable work loads with import(): its outbox subscribes then.
    await h.client.outbox.size();
    expect(listeners).toHaveLength(3);
    const thrown: unknown[] = [];
    for (const listener of listeners) {
      try {
        listener('maybe');
      } catch (error) {
        thrown.push(error);
      }
    }
    expect(thrown).toEqual([
      new ArgumentError(
        'connectivity listener',
        'hint',
        'expected "online", "offline" or "changed", got "maybe"',
      ),
    ]);
    // Neither the outbox nor the origin set took it for offline: a durable write is sent at once.
    const outcome = h.client.request({ method: 'POST', path: '/orders', body: '{}', lifetime: 'durable' });
    for (let i = 0; i < 50; i++) await h.clock.increment(0);
    expect(await outcome).toMatchObject({ status: 'succeeded', attempts: 1 });
    expect(h.client.health().state).toBe('healthy');
    await h.client.close();
  });
});
