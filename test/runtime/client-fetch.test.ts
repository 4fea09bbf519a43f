import { describe, expect, expectTypeOf, it } from 'vitest';
import { simulatedClock } from '../../src/clock/simulated-clock.js';
import { manualConnectivity } from '../../src/connectivity/manual-connectivity.js';
import { PolicyError } from '../../src/errors/policy-error.js';
import { RequestError } from '../../src/errors/request-error.js';
import { isGraphQLQuery } from '../../src/policy/graphql-query.js';
import { createFailoverClient } from '../../src/runtime/create-failover-client.js';
import { fetchTransport } from '../../src/transports/fetch-transport.js';
import { harness } from '../helpers/client-harness.js';
import { fail, respond } from '../helpers/scripted-transport.js';

const ORIGINS = [
  { id: 'primary', url: 'https://api.example.test/v1' },
  { id: 'backup', url: 'https://backup.example.test' },
];

/** A client over a scripted transport, answered at once; its calls as the transport saw them. */
function client(...replies: Parameters<typeof harness>[0]) {
  return harness(replies, { origins: ORIGINS });
}

describe('client.fetch as a drop-in fetch', () => {
  it('has fetch’s type and works unbound', async () => {
    const h = client({ reply: respond(204) });
    expectTypeOf(h.client.fetch).toExtend<typeof globalThis.fetch>();
    const { fetch } = h.client;
    const response = fetch('/items');
    await h.clock.runAll();
    expect((await response).status).toBe(204);
    expect(h.transport.calls[0]!.url).toBe('https://api.example.test/v1/items');
  });

  it('maps an absolute URL (a string or a URL) under a configured origin onto its path, so failover applies', async () => {
    const h = client({ reply: respond(200, {}, 'a') }, { reply: respond(200, {}, 'b') });
    const first = h.client.fetch('https://api.example.test/v1/items?page=2');
    const second = h.client.fetch(new URL('https://backup.example.test/items#top'));
    await h.clock.runAll();
    await Promise.all([first, second]);
    // Both are sent to the primary (the health machine's choice), with the path after the origin's url.
    expect(h.transport.calls.map((call) => call.url)).toEqual([
      'https://api.example.test/v1/items?page=2',
      'https://api.example.test/v1/items#top',
    ]);
  });

  it('maps the origin itself onto "/", and a query right after it onto "/?..."', async () => {
    const h = client({ reply: respond(204) });
    const a = h.client.fetch('https://api.example.test/v1');
    const b = h.client.fetch('https://api.example.test/v1?x=1');
    await h.clock.runAll();
    await Promise.all([a, b]);
    expect(h.transport.calls.map((call) => call.url)).toEqual([
      'https://api.example.test/v1/',
      'https://api.example.test/v1/?x=1',
    ]);
  });

  it('rejects a URL under no configured origin with RequestError, naming the origin and never the query', async () => {
    const h = client({ reply: respond(204) });
    for (const url of [
      'https://evil.example.test/v1/items?token=secret',
      'https://api.example.test/v10/items?token=secret', // not under /v1
      'http://api.example.test/v1/items?token=secret', // another scheme
    ]) {
      const error: unknown = await h.client.fetch(url).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(RequestError);
      expect((error as Error).message).toMatch(
        /^request\.input: https?:\/\/[a-z.]+ is not under any configured origin$/,
      );
      expect((error as Error).message).not.toContain('secret');
    }
    await expect(h.client.fetch('not a url')).rejects.toThrow(
      new RequestError(
        'input',
        'expected a path starting with "/" or an absolute URL under a configured origin',
      ),
    );
    expect(h.transport.calls).toHaveLength(0);
  });

  it('takes a Request: its method, headers, body (read once, as bytes) and signal; init overrides them', async () => {
    const h = client({ reply: respond(201) });
    const request = new Request('https://api.example.test/v1/orders', {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-trace': 'r' },
      body: '{"qty":1}',
    });
    const response = h.client.fetch(request, { idempotencyKey: 'order-1' });
    await h.clock.runAll();
    expect((await response).status).toBe(201);
    const call = h.transport.calls[0]!;
    expect(call).toMatchObject({ url: 'https://api.example.test/v1/orders', method: 'POST' });
    expect(call.headers).toEqual({
      'content-type': 'application/json',
      'x-trace': 'r',
      'idempotency-key': 'order-1',
    });
    expect(new TextDecoder().decode(call.body as Uint8Array)).toBe('{"qty":1}');

    const h2 = client({ reply: respond(200) });
    const again = new Request('https://api.example.test/v1/orders', { method: 'POST', body: 'old' });
    const overridden = h2.client.fetch(again, {
      method: 'PUT',
      headers: { 'x-other': '1' },
      body: 'x',
    });
    await h2.clock.runAll();
    await overridden;
    expect(h2.transport.calls[0]).toMatchObject({ method: 'PUT', headers: { 'x-other': '1' }, body: 'x' });
  });

  it('reads a FormData or Blob body once, as the bytes and content type fetch would send', async () => {
    const h = client({ reply: respond(201) });
    const form = new FormData();
    form.append('name', 'failwise');
    const sent = h.client.fetch('/upload', { method: 'POST', body: form });
    await h.clock.runAll();
    await sent;
    const call = h.transport.calls[0]!;
    const type = call.headers['content-type']!;
    expect(type).toMatch(/^multipart\/form-data; boundary=/);
    const text = new TextDecoder().decode(call.body as Uint8Array);
    expect(text).toContain('name="name"');
    expect(text).toContain('failwise');

    const h2 = client({ reply: respond(201) });
    const blob = h2.client.fetch('/raw', { method: 'POST', body: new Blob(['abc'], { type: 'text/plain' }) });
    await h2.clock.runAll();
    await blob;
    expect(h2.transport.calls[0]!.headers['content-type']).toBe('text/plain');
    expect(new TextDecoder().decode(h2.transport.calls[0]!.body as Uint8Array)).toBe('abc');
  });

  it('resolves with the last response the server gave once the attempts ran out (a 503), its body readable', async () => {
    const h = harness(
      [
        { reply: respond(503, {}, 'busy') },
        { reply: respond(503, {}, 'busy') },
        { reply: respond(503, {}, 'still busy') },
      ],
      { origins: ORIGINS, policy: { backoff: { initialMs: 0, maxMs: 0 } } },
    );
    const response = h.client.fetch('/x');
    await h.clock.runAll();
    const answered = await response;
    expect(answered.status).toBe(503);
    expect(await answered.text()).toBe('still busy');
    expect(h.transport.calls).toHaveLength(3);
  });

  it('rejects with a DOMException named AbortError when the caller aborts, before or during the request', async () => {
    const before = client({ reply: respond(200) });
    const aborted = new AbortController();
    aborted.abort();
    const early: unknown = await before.client
      .fetch('/x', { signal: aborted.signal })
      .catch((e: unknown) => e);
    expect(early).toBeInstanceOf(DOMException);
    expect((early as DOMException).name).toBe('AbortError');
    expect(before.transport.calls).toHaveLength(0);

    const during = client({ reply: 'hang' });
    const controller = new AbortController();
    const response = during.client.fetch(
      new Request('https://backup.example.test/x', { signal: controller.signal }),
    );
    await during.clock.increment(10);
    expect(during.transport.calls).toHaveLength(1);
    controller.abort(new DOMException('user left', 'AbortError'));
    const error: unknown = await response.catch((e: unknown) => e);
    expect(error).toBeInstanceOf(DOMException);
    expect((error as DOMException).message).toBe('user left'); // the signal's own reason, as fetch gives it
    expect(during.transport.calls[0]!.signal.aborted).toBe(true);
  });

  it('rejects on a closed client, as client.request does', async () => {
    const h = client({ reply: fail('connect', 'no') });
    await h.client.close();
    await expect(h.client.fetch('/x')).rejects.toThrow('failwise: this client is closed');
  });

  it("passes fetch's own init members to the fetch transport; failwise's method, headers, body and signal win", async () => {
    const seen: RequestInit[] = [];
    const clock = simulatedClock();
    const c = createFailoverClient({
      origins: ORIGINS,
      clock,
      transport: fetchTransport({
        fetch: (_url, init) => (seen.push(init!), Promise.resolve(new Response('ok', { status: 200 }))),
      }),
    });
    const response = c.fetch('/x', {
      credentials: 'include',
      mode: 'cors',
      redirect: 'manual',
      cache: 'no-store',
      referrer: '',
      referrerPolicy: 'no-referrer',
      integrity: 'sha256-abc',
      keepalive: true,
      priority: 'high',
      headers: { accept: 'text/plain' },
    });
    await clock.runAll();
    expect(await (await response).text()).toBe('ok');
    expect(seen[0]).toMatchObject({
      credentials: 'include',
      mode: 'cors',
      redirect: 'manual',
      cache: 'no-store',
      referrer: '',
      referrerPolicy: 'no-referrer',
      integrity: 'sha256-abc',
      keepalive: true,
      priority: 'high',
      method: 'GET',
      headers: { accept: 'text/plain' },
    });
    expect(seen[0]!.signal).toBeInstanceOf(AbortSignal);
    await c.close();
  });
});

describe('fetchOptions on client.request', () => {
  it('refuses an unknown member, a bad value and fetch options on durable work, with RequestError', async () => {
    const h = client({ reply: respond(200) });
    await expect(
      h.client.request({ path: '/x', fetchOptions: { credential: 'include' } as never }),
    ).rejects.toThrow(
      /^request\.fetchOptions\.credential: unknown member \(known: credentials, mode, redirect, cache, referrer, referrerPolicy, integrity, keepalive, priority\)$/,
    );
    await expect(h.client.request({ path: '/x', fetchOptions: { mode: 'open' as never } })).rejects.toThrow(
      new RequestError('fetchOptions.mode', 'expected one of "cors", "no-cors", "same-origin", "navigate"'),
    );
    await expect(
      h.client.request({ path: '/x', fetchOptions: { keepalive: 'yes' as never } }),
    ).rejects.toThrow(new RequestError('fetchOptions.keepalive', 'expected a boolean'));
    await expect(
      h.client.request({
        path: '/x',
        method: 'POST',
        lifetime: 'durable',
        fetchOptions: { credentials: 'include' },
      }),
    ).rejects.toThrow(
      new RequestError(
        'fetchOptions',
        'a durable request is stored and sent later by the outbox: it takes no fetch options',
      ),
    );
    expect(h.transport.calls).toHaveLength(0);
  });
});

describe('isIdempotent and isGraphQLQuery', () => {
  const query = JSON.stringify({ query: 'query Items { items { id } }' });
  const mutation = JSON.stringify({ query: 'mutation Add { add { id } }' });

  it('retries a GraphQL query sent as a POST after a response timeout, and never replays a mutation so', async () => {
    const h = harness([{ reply: fail('response-timeout') }, { reply: respond(200, {}, '{"data":{}}') }], {
      origins: ORIGINS,
      isIdempotent: isGraphQLQuery,
      policy: { backoff: { initialMs: 0, maxMs: 0 } },
    });
    expect(await h.run({ method: 'POST', path: '/graphql', body: query })).toMatchObject({
      status: 'succeeded',
      attempts: 2,
    });

    const m = harness([{ reply: fail('response-timeout') }, { reply: respond(200) }], {
      origins: ORIGINS,
      isIdempotent: isGraphQLQuery,
      policy: { backoff: { initialMs: 0, maxMs: 0 } },
    });
    expect(await m.run({ method: 'POST', path: '/graphql', body: mutation })).toMatchObject({
      status: 'failed',
      reason: 'unsafe-to-replay',
      attempts: 1,
    });
    expect(m.transport.calls).toHaveLength(1);
  });

  it("a request's own idempotent field wins over isIdempotent", async () => {
    const h = harness([{ reply: fail('response-timeout') }, { reply: respond(200) }], {
      origins: ORIGINS,
      isIdempotent: () => true,
    });
    expect(await h.run({ method: 'POST', path: '/x', body: 'b', idempotent: false })).toMatchObject({
      status: 'failed',
      reason: 'unsafe-to-replay',
    });
  });

  it('hands isIdempotent the method, path, headers and body; one that throws or answers otherwise rejects the request', async () => {
    const asked: unknown[] = [];
    const h = harness([{ reply: respond(200) }], {
      origins: ORIGINS,
      isIdempotent: (request) => (asked.push(request), undefined),
    });
    await h.run({ method: 'post', path: '/q?x=1', headers: { 'X-A': 'b' }, body: 'text' });
    expect(asked).toEqual([{ method: 'POST', path: '/q?x=1', headers: { 'x-a': 'b' }, body: 'text' }]);

    const throwing = harness([{ reply: respond(200) }], {
      origins: ORIGINS,
      isIdempotent: () => {
        throw new TypeError('boom');
      },
    });
    await expect(throwing.client.request({ path: '/x' })).rejects.toThrow(
      new RequestError('(isIdempotent)', "the client's isIdempotent threw (TypeError)"),
    );
    const odd = harness([{ reply: respond(200) }], { origins: ORIGINS, isIdempotent: () => 'yes' as never });
    await expect(odd.client.request({ path: '/x' })).rejects.toThrow(
      new RequestError(
        '(isIdempotent)',
        'the client\'s isIdempotent must return true, false or undefined, got "yes"',
      ),
    );
    expect(() => createFailoverClient({ origins: ORIGINS, isIdempotent: true as never })).toThrow(
      PolicyError,
    );
  });

  it('a durable entry is stored with the verdict, so its later sends treat it the same', async () => {
    const h = harness([{ reply: respond(201) }], {
      origins: ORIGINS,
      isIdempotent: isGraphQLQuery,
      connectivity: manualConnectivity('offline'),
    });
    const outcome = await h.run({ method: 'POST', path: '/graphql', body: query, lifetime: 'durable' });
    expect(outcome).toMatchObject({ status: 'deferred', reason: 'offline' });
    expect((await h.client.outbox.list()).map((entry) => entry.request.idempotent)).toEqual([true]);
  });
});
