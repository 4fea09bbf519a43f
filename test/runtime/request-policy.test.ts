import { describe, expect, it } from 'vitest';
import { harness, type Harness } from '../helpers/client-harness.js';
import { respond } from '../helpers/scripted-transport.js';
import { PolicyError } from '../../src/errors/policy-error.js';
import { RequestError } from '../../src/errors/request-error.js';
import { definePolicy } from '../../src/policy/define-policy.js';
import { resolveRoutes } from '../../src/policy/routes.js';
import { prepareRequest, type FailoverRequest } from '../../src/runtime/prepare-request.js';
import { routeRequest } from '../../src/runtime/route-request.js';
import { memoryStore } from '../../src/stores/memory-store.js';
import type { OutboxEntry } from '../../src/stores/outbox-store.js';

// A request's own policy and the client's routes, on a simulated clock and a scripted transport: every reply 503,
// so each request makes every attempt its policy allows.

const unavailable = [{ reply: respond(503) }];
const fast = { backoff: { initialMs: 10, maxMs: 10, jitter: 'none' } } as const;

/** The error `request` rejects with. */
async function rejection(h: Harness, request: FailoverRequest): Promise<RequestError> {
  const error = await h.client.request(request).then(
    () => undefined,
    (error: unknown) => error,
  );
  expect(error).toBeInstanceOf(RequestError);
  return error as RequestError;
}

/** Drives the simulated clock, 10 ms at a time, until `promise` settles (outbox work runs on timers). */
async function settled<T>(h: Harness, promise: Promise<T>): Promise<T> {
  let done = false;
  void promise.then(
    () => (done = true),
    () => (done = true),
  );
  for (let i = 0; i < 1_000 && !done; i++) await h.clock.increment(i % 10 === 0 ? 10 : 0);
  if (!done) throw new Error('did not settle');
  return promise;
}

describe('a request policy (client.request({ policy }))', () => {
  it('sets the attempts of that call only', async () => {
    const h = harness(unavailable, { policy: fast });
    expect(await h.run({ path: '/pay', policy: { attempts: { max: 1 } } })).toMatchObject({ attempts: 1 });
    expect(await h.run({ path: '/feed', policy: { attempts: { max: 5 } } })).toMatchObject({ attempts: 5 });
    expect(await h.run({ path: '/plain' })).toMatchObject({ attempts: 3 });
    expect(h.transport.calls).toHaveLength(9);
  });

  it('sets the timeouts its attempts are sent with', async () => {
    const h = harness([{ reply: respond(200) }]);
    await h.run({ path: '/a', policy: { timeouts: { connectMs: 700, idleMs: 900 } } });
    await h.run({ path: '/b' });
    expect(h.transport.calls.map((call) => [call.connectTimeoutMs, call.idleMs])).toEqual([
      [700, 900],
      [3_000, 60_000],
    ]);
  });

  it('keeps deadlineMs over its own budgetMs', async () => {
    const h = harness([{ reply: 'hang' }]);
    const outcome = await h.run({ path: '/slow', deadlineMs: 1_000, policy: { budgetMs: 9_000 } });
    expect(outcome).toMatchObject({ status: 'failed', reason: 'budget-exhausted', elapsedMs: 1_000 });
  });

  it('is refused with a RequestError naming request.policy.<path>, nothing sent; its cause lists every problem', async () => {
    const h = harness(unavailable);
    const error = await rejection(h, { path: '/a', policy: { attempts: { max: 0 }, budgetMs: -1 } });
    expect(error.message).toBe('request.policy.attempts.max: expected a number >= 1, got 0');
    expect(error.field).toBe('policy.attempts.max');
    expect(error.cause).toBeInstanceOf(PolicyError);
    expect((error.cause as PolicyError).issues.map((issue) => issue.path)).toEqual([
      'request.policy.attempts.max',
      'request.policy.budgetMs',
    ]);
    expect(h.transport.calls).toHaveLength(0);
  });

  it('refuses a client-wide part by name', async () => {
    const h = harness(unavailable);
    const error = await rejection(h, { path: '/a', policy: { health: { failoverAfter: 1 } } as never });
    expect(error.message).toBe(
      "request.policy.health: client-wide: every request shares it, so only the client's policy sets it",
    );
  });

  it('is taken by client.fetch from init, and checked the same way', async () => {
    const h = harness(unavailable, { policy: fast });
    const pending = h.client.fetch('/feed', { policy: { attempts: { max: 2 } } });
    await h.clock.runAll();
    expect((await pending).status).toBe(503);
    expect(h.transport.calls).toHaveLength(2);
    await expect(h.client.fetch('/feed', { policy: { attempts: { max: 101 } } })).rejects.toThrow(
      'request.policy.attempts.max: expected a number <= 100, got 101',
    );
  });
});

describe('routes', () => {
  const routes = [
    { id: 'payments', match: { method: 'POST', path: '/v1/payments' }, policy: { attempts: { max: 1 } } },
    {
      match: { path: /^\/v1\/feed/ },
      policy: { attempts: { max: 5 }, backoff: { initialMs: 20, maxMs: 20 } },
    },
  ];

  it('give the requests they match their policy; the first match wins; the rest go by the client policy', async () => {
    const h = harness(unavailable, { policy: fast, routes });
    expect(await h.run({ method: 'POST', path: '/v1/payments?card=1', body: '{}' })).toMatchObject({
      attempts: 1,
    });
    expect(await h.run({ path: '/v1/feed/7' })).toMatchObject({ attempts: 5 });
    expect(await h.run({ path: '/v1/payments' })).toMatchObject({ attempts: 3 });
  });

  it('precedence: the request policy over the route policy over the client policy, field by field', async () => {
    const h = harness(unavailable, { policy: { ...fast, attempts: { max: 4 } }, routes });
    const started = h.clock.now();
    // The feed route's backoff (20 ms), the request's attempts (2), the client's jitter (none).
    expect(await h.run({ path: '/v1/feed', policy: { attempts: { max: 2 } } })).toMatchObject({
      attempts: 2,
    });
    const [first, second] = h.events.filter((event) => event.type === 'attempt-started');
    expect(second!.elapsedMs - first!.elapsedMs).toBe(20);
    expect(h.clock.now() - started).toBe(20);
  });

  it('are named in decision events (the id, else the index), the path without its query', async () => {
    const h = harness(unavailable, { policy: fast, routes });
    await h.run({ method: 'POST', path: '/v1/payments?card=4242', body: '{}' });
    await h.run({ path: '/v1/feed?cursor=1', policy: { attempts: { max: 1 } } });
    await h.run({ path: '/elsewhere', policy: { attempts: { max: 1 } } });
    const ends = h.events.filter((event) => event.type === 'failed');
    expect(ends.map((event) => ['route' in event ? event.route : '-', event.path])).toEqual([
      ['payments', '/v1/payments'],
      [1, '/v1/feed'],
      ['-', '/elsewhere'],
    ]);
    for (const event of h.events) expect(JSON.stringify(event)).not.toContain('4242');
  });

  it('bad routes throw PolicyError at construction, naming the path', () => {
    expect(() =>
      harness(unavailable, {
        routes: [
          { match: {}, policy: {} },
          { match: { method: 'P O' }, policy: { backoff: { maxMs: -5 } } },
        ],
      }),
    ).toThrow(
      new PolicyError([
        {
          path: 'routes[1].match.method',
          message: 'expected an HTTP method or a non-empty list of them, got "P O"',
        },
        { path: 'routes[1].policy.backoff.maxMs', message: 'expected a number >= 0, got -5' },
      ]),
    );
  });

  it('a route is laid over the client policy: a limit it breaks there is named', () => {
    expect(() =>
      harness(unavailable, {
        policy: { budgetMs: 2_000 },
        routes: [{ match: {}, policy: { timeouts: { attemptMs: 3_000 } } }],
      }),
    ).toThrow(
      'routes[0].policy.timeouts.attemptMs: must not exceed routes[0].policy.budgetMs (2000), got 3000',
    );
  });
});

describe('routeRequest', () => {
  const client = definePolicy({ attempts: { max: 4 } });
  const prepare = (request: FailoverRequest) => prepareRequest(request, () => 'key');

  it('gives the client policy object itself to a request with no policy and no route to match', () => {
    expect(routeRequest(prepare({ path: '/a' }), client, undefined)).toBe(client);
    const routes = resolveRoutes([{ match: { path: '/b' }, policy: { attempts: { max: 1 } } }], client);
    expect(routeRequest(prepare({ path: '/a' }), client, routes)).toBe(client);
  });

  it('gives a matched route its own policy object, made once with the client', () => {
    const routes = resolveRoutes(
      [{ id: 'b', match: { path: '/b' }, policy: { attempts: { max: 1 } } }],
      client,
    )!;
    const prepared = prepare({ path: '/b/1' });
    expect(routeRequest(prepared, client, routes)).toBe(routes[0]!.policy);
    expect(prepared.route).toBe('b');
  });
});

describe('a durable request with a policy of its own', () => {
  const order = { method: 'POST', path: '/v1/orders', body: '{}', lifetime: 'durable' } as const;

  it('keeps it in its outbox entry, and every send of the entry runs by it', async () => {
    const store = memoryStore();
    const h = harness(unavailable, { store, policy: fast });
    const outcome = await settled(h, h.client.request({ ...order, policy: { attempts: { max: 1 } } }));
    expect(outcome).toMatchObject({ status: 'deferred' });
    expect(h.transport.calls).toHaveLength(1);
    const [entry] = await store.list();
    expect(entry!.request.policy).toEqual({ attempts: { max: 1 } });
    await settled(h, h.client.outbox.flush());
    expect(h.transport.calls).toHaveLength(2);
    await h.client.close();
  });

  it('an entry written without one (by an older failwise) is read and sent by the client policy', async () => {
    const store = memoryStore();
    const entry: OutboxEntry = {
      id: 'old-1',
      createdAt: 0,
      request: { method: 'POST', path: '/v1/orders', headers: {}, body: '{}' },
      idempotencyKey: 'k-old-1',
      attempts: 0,
      nextAttemptAt: 0,
      failures: [],
      status: 'pending',
    };
    await store.add(entry);
    const h = harness(unavailable, { store, policy: { ...fast, attempts: { max: 2 } } });
    await settled(h, h.client.outbox.flush());
    expect(h.transport.calls).toHaveLength(2);
    await h.client.close();
  });
});
