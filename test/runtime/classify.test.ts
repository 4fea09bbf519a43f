/**
 * The client's `classify`: the app's own verdict on each attempt, sync or async, before failwise decides. It may
 * call a 503 a success or a 200 a failure, it is cut by the attempt timeout, what it throws fails only that
 * attempt, and it never makes a write safe to replay.
 */
import { describe, expect, it } from 'vitest';
import { PolicyError } from '../../src/errors/policy-error.js';
import type { ClassifyHook } from '../../src/runtime/client-options.js';
import { createFailoverClient } from '../../src/runtime/create-failover-client.js';
import { withInspector } from '../../src/runtime/with-inspector.js';
import { harness } from '../helpers/client-harness.js';
import { fail, respond } from '../helpers/scripted-transport.js';

const policy = { attempts: { max: 3 }, backoff: { initialMs: 10, maxMs: 10 } };

/** Each classify given as it is and as an async function answering the same. */
function bothWays(classify: ClassifyHook): [string, ClassifyHook][] {
  return [
    ['sync', classify],
    ['async', async (args) => classify(args)],
  ];
}

describe("the client's classify", () => {
  for (const [how, classify] of bothWays(({ response }) =>
    response?.status === 503 ? 'success' : undefined,
  ))
    it(`(${how}) makes a 503 a success, its response handed to the app`, async () => {
      const h = harness([{ reply: respond(503, {}, 'maintenance page') }], { policy, classify });
      const outcome = await h.run({ path: '/items' });
      expect(outcome.status).toBe('succeeded');
      if (outcome.status !== 'succeeded') return;
      expect(outcome.response.status).toBe(503);
      expect(await outcome.response.text()).toBe('maintenance page');
      expect(h.transport.calls).toHaveLength(1);
    });

  for (const [how, classify] of bothWays(({ response }) =>
    response?.status === 200 ? 'unavailable' : undefined,
  ))
    it(`(${how}) makes a 200 a failure of its class, retried as that class is`, async () => {
      const h = harness([{ reply: respond(200, {}, 'degraded') }], { policy, classify });
      const outcome = await h.run({ path: '/items' });
      expect(outcome).toMatchObject({
        status: 'failed',
        reason: 'attempts-exhausted',
        attempts: 3,
        failure: {
          class: 'unavailable',
          requestSent: 'yes',
          status: 200,
          classifiedByApp: true,
          message: "HTTP 200 (classified unavailable by the app's classify)",
        },
      });
      expect(h.transport.calls).toHaveLength(3);
    });

  it('retries only the classes failwise retries: a 200 it calls client-error is not retried', async () => {
    const h = harness([{ reply: respond(200) }], { policy, classify: () => 'client-error' });
    const outcome = await h.run({ path: '/items' });
    expect(outcome).toMatchObject({ status: 'failed', reason: 'not-retryable', attempts: 1 });
  });

  it('leaves the attempt to failwise when it returns undefined', async () => {
    const seen: unknown[] = [];
    const h = harness(
      [{ reply: respond(503) }, { reply: fail('connect') }, { reply: respond(200, {}, 'ok') }],
      {
        policy,
        classify: ({ request, attempt, response, error }) => {
          seen.push({ request, attempt, status: response?.status, error });
          return undefined;
        },
      },
    );
    const outcome = await h.run({ method: 'GET', path: '/items?token=secret#top' });
    expect(outcome.status).toBe('succeeded');
    expect(h.transport.calls).toHaveLength(3);
    const request = { method: 'GET', path: '/items', origin: 'primary', route: undefined };
    expect(seen).toEqual([
      { request, attempt: 1, status: 503, error: undefined },
      {
        request,
        attempt: 2,
        status: undefined,
        error: { class: 'connect', phase: 'connect', requestSent: 'no', message: 'scripted connect' },
      },
      { request, attempt: 3, status: 200, error: undefined },
    ]);
  });

  it('makes an error it calls a success a success, with an empty 204', async () => {
    const h = harness([{ reply: fail('connection-lost') }], { policy, classify: () => 'success' });
    const outcome = await h.run({ path: '/items' });
    expect(outcome.status).toBe('succeeded');
    if (outcome.status === 'succeeded') expect(outcome.response.status).toBe(204);
  });

  it('gives an error a class of its own, keeping whether it was sent', async () => {
    const h = harness([{ reply: fail('connect') }], { policy, classify: () => 'tls' });
    const outcome = await h.run({ path: '/items' });
    expect(outcome).toMatchObject({
      status: 'failed',
      reason: 'not-retryable',
      failure: { class: 'tls', requestSent: 'no', classifiedByApp: true },
    });
  });

  for (const [how, classify] of [
    [
      'throws',
      () => {
        throw new TypeError('no such field');
      },
    ],
    ['rejects', () => Promise.reject(new RangeError('bad'))],
    ['returns something else', () => 'maybe' as never],
  ] as [string, ClassifyHook][])
    it(`fails the attempt as unexpected when it ${how}, and the client keeps working`, async () => {
      let calls = 0;
      const h = harness([{ reply: respond(200, {}, 'ok') }], {
        policy,
        classify: (args) => (++calls === 1 ? classify(args) : undefined),
      });
      const first = await h.run({ path: '/items' });
      expect(first).toMatchObject({
        status: 'failed',
        // An unexpected status is not retried (isRetryableFailure).
        reason: 'not-retryable',
        failure: { class: 'unexpected', requestSent: 'yes', status: 200 },
      });
      expect(first.status === 'failed' && first.failure?.classifiedByApp).toBeUndefined();
      expect(first.status === 'failed' && first.failure?.message).toMatch(
        /^HTTP 200 \(classify (threw|returned)/,
      );
      const second = await h.run({ path: '/items' });
      expect(second.status).toBe('succeeded');
    });

  it('reads the body from a clone, and the app still gets it whole', async () => {
    const body = JSON.stringify({ data: { item: 1 } });
    const h = harness([{ reply: respond(200, { 'content-type': 'application/json' }, body) }], {
      policy,
      classify: async ({ response }) => {
        const json = (await response!.clone().json()) as { errors?: unknown };
        return json.errors === undefined ? undefined : 'server-error';
      },
    });
    const outcome = await h.run({ path: '/graphql' });
    expect(outcome.status).toBe('succeeded');
    if (outcome.status === 'succeeded') expect(await outcome.response.text()).toBe(body);
  });

  it('never makes an unsafe write replayable: a retryable class on a write ends unsafe-to-replay', async () => {
    const h = harness([{ reply: respond(200) }], { policy, classify: () => 'unavailable' });
    const outcome = await h.run({ method: 'POST', path: '/orders', body: '{}' });
    expect(outcome).toMatchObject({
      status: 'failed',
      reason: 'unsafe-to-replay',
      attempts: 1,
      failure: { class: 'unavailable', requestSent: 'yes' },
    });
    expect(h.transport.calls).toHaveLength(1);
  });

  it('cannot make an error that may have been sent safe for a write either', async () => {
    const h = harness([{ reply: fail('connection-lost') }], { policy, classify: () => 'connect' });
    const outcome = await h.run({ method: 'POST', path: '/orders', body: '{}' });
    expect(outcome).toMatchObject({
      status: 'failed',
      reason: 'unsafe-to-replay',
      failure: { class: 'connect', requestSent: 'unknown' },
    });
  });

  it('is cut by the attempt timeout when it never settles', async () => {
    const h = harness([{ reply: respond(200) }], {
      policy: { attempts: { max: 2 }, timeouts: { attemptMs: 1_000 }, backoff: { initialMs: 10, maxMs: 10 } },
      classify: () => new Promise<undefined>(() => {}),
    });
    const started = h.clock.now();
    const outcome = await h.run({ path: '/items' });
    expect(outcome).toMatchObject({
      status: 'failed',
      reason: 'attempts-exhausted',
      attempts: 2,
      failure: { class: 'response-timeout' },
    });
    expect(h.clock.now() - started).toBeGreaterThanOrEqual(2_000);
  });

  it('decides the same when the machines run as XState actors under an inspector', async () => {
    const h = harness([{ reply: respond(200) }, { reply: respond(503) }], {
      policy,
      classify: ({ response }) => (response?.status === 200 ? 'unavailable' : 'success'),
      inspect: withInspector(() => {}),
    });
    const outcome = await h.run({ path: '/items' });
    expect(outcome.status === 'succeeded' && outcome.response.status).toBe(503);
    expect(h.transport.calls).toHaveLength(2);
  });

  it("is cut by the caller's signal while it runs", async () => {
    const h = harness([{ reply: respond(200) }], {
      policy,
      classify: () => new Promise<undefined>(() => {}),
    });
    const controller = new AbortController();
    const outcome = h.client.request({ path: '/items', signal: controller.signal });
    await h.clock.increment(10);
    controller.abort();
    await h.clock.runAll();
    expect(await outcome).toMatchObject({ status: 'failed', reason: 'cancelled' });
  });

  it('counts toward failover as its class does: 200s it calls unavailable fail the primary over', async () => {
    const h = harness([{ reply: respond(200) }], {
      origins: [
        { id: 'primary', url: 'https://api.example.test' },
        { id: 'backup', url: 'https://backup.example.test' },
      ],
      policy: { ...policy, attempts: { max: 1 }, health: { failoverAfter: 1 } },
      classify: ({ request }) => (request.origin === 'primary' ? 'unavailable' : undefined),
    });
    const outcome = h.client.request({ path: '/items' });
    // Only until the attempt has failed: running on would fail back after the health probe (a HEAD failwise
    // classifies itself, as `probe` says).
    await h.clock.increment(1);
    expect(await outcome).toMatchObject({ status: 'failed', failure: { class: 'unavailable', status: 200 } });
    expect(h.client.health()).toMatchObject({ state: 'failedOver', activeOrigin: 'backup' });
    expect(h.events.find((event) => event.type === 'health-changed')).toMatchObject({
      from: 'healthy',
      to: 'failedOver',
      criterion: 'consecutive-failures',
    });
    expect((await h.run({ path: '/items' })).status).toBe('succeeded');
  });

  it('must be a function', () => {
    const options = { origins: [{ id: 'primary', url: 'https://api.example.test' }] };
    expect(() => createFailoverClient({ ...options, classify: 'unavailable' as never })).toThrow(PolicyError);
    expect(() => createFailoverClient({ ...options, classify: 'unavailable' as never })).toThrow(
      /classify: expected a function/,
    );
  });
});
