import { MutationObserver, QueryClient, QueryObserver, onlineManager } from '@tanstack/query-core';
import { beforeEach, describe, expect, it } from 'vitest';
import { manualConnectivity } from '../../src/connectivity/manual-connectivity.js';
import { ArgumentError } from '../../src/errors/argument-error.js';
import { RequestFailedError } from '../../src/errors/request-failed-error.js';
import { metaPolicy, queryDefaults, syncOnlineManager } from '../../src/tanstack-query.js';
import { createFailoverClient } from '../../src/runtime/create-failover-client.js';
import { closedPort, useLoopback } from '../helpers/loopback-server.js';

/** A client of a loopback origin that answers every request with `status`; failwise makes 3 attempts, 1 ms apart. */
async function failingOrigin(loopback: ReturnType<typeof useLoopback>, status: number) {
  const server = await loopback.serve(({ res }) => {
    res.writeHead(status, { 'content-type': 'text/plain' });
    res.end(`status ${status}`);
  });
  const client = createFailoverClient({
    origins: [{ id: 'primary', url: server.url, allowInsecure: true }],
    policy: { attempts: { max: 3 }, backoff: { initialMs: 1, maxMs: 1 }, budgetMs: 5_000 },
  });
  return { server, client };
}

/** Runs one query to its end (success or error) and gives its final state. */
async function runQuery(queryClient: QueryClient, queryFn: () => Promise<unknown>) {
  const observer = new QueryObserver(queryClient, { queryKey: ['items'], queryFn });
  return new Promise<ReturnType<typeof observer.getCurrentResult>>((resolve) => {
    const unsubscribe = observer.subscribe((result) => {
      if (result.status === 'pending' || result.fetchStatus === 'fetching') return;
      unsubscribe();
      resolve(result);
    });
  });
}

describe('failwise/tanstack-query with @tanstack/query-core 5', () => {
  const loopback = useLoopback();
  // TanStack's onlineManager is one per process: each test starts from its state by default.
  beforeEach(() => {
    onlineManager.setEventListener(() => undefined);
    onlineManager.setOnline(true);
  });

  it('queryDefaults: a query that keeps failing reaches the origin policy.attempts.max times in all, not 4 x 3', async () => {
    const { server, client } = await failingOrigin(loopback, 503);
    const queryClient = new QueryClient({ defaultOptions: queryDefaults(client) });
    // A typical query function over client.fetch: it throws for a response that is not ok.
    const result = await runQuery(queryClient, async () => {
      const response = await client.fetch('/items');
      if (!response.ok) throw new Error(`HTTP ${response.status}`);
      return response.json();
    });
    expect(result.status).toBe('error');
    expect(result.error).toEqual(new Error('HTTP 503'));
    expect(result.failureCount).toBe(1);
    expect(server.requests).toHaveLength(3);
    queryClient.clear();
    await client.close();
  });

  it("without them TanStack's own retries multiply failwise's attempts (what queryDefaults prevents)", async () => {
    const { server, client } = await failingOrigin(loopback, 503);
    // TanStack's default in browsers and React Native, 3 retries (on a server it is 0), with no delay between
    // them so that the test is quick.
    const queryClient = new QueryClient({ defaultOptions: { queries: { retry: 3, retryDelay: 0 } } });
    const result = await runQuery(queryClient, async () => {
      const outcome = await client.request({ path: '/items' });
      if (outcome.status !== 'succeeded') throw new RequestFailedError(outcome);
      return outcome.response.json();
    });
    expect(result.status).toBe('error');
    expect(result.failureCount).toBe(4);
    expect(server.requests).toHaveLength(12);
    queryClient.clear();
    await client.close();
  });

  it('queryDefaults: a mutation whose function throws is not sent again by TanStack', async () => {
    const { server, client } = await failingOrigin(loopback, 422);
    const queryClient = new QueryClient({ defaultOptions: queryDefaults(client) });
    const observer = new MutationObserver(queryClient, {
      mutationFn: async (order: string) => {
        const outcome = await client.request({
          method: 'POST',
          path: '/orders',
          body: order,
          idempotencyKey: 'auto',
        });
        if (outcome.status !== 'succeeded') throw new RequestFailedError(outcome);
        return outcome.response.status;
      },
    });
    const error: unknown = await observer.mutate('{"qty":1}').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RequestFailedError);
    expect((error as RequestFailedError).outcome).toMatchObject({
      status: 'failed',
      reason: 'not-retryable',
    });
    expect(observer.getCurrentResult().failureCount).toBe(1);
    expect(server.requests).toHaveLength(1);
    queryClient.clear();
    await client.close();
  });

  it("a durable mutation with networkMode 'always' is stored by failwise while offline; TanStack's own pauses it in memory", async () => {
    const connectivity = manualConnectivity('offline');
    syncOnlineManager(onlineManager, connectivity);
    const { server, client: base } = await failingOrigin(loopback, 201);
    await base.close();
    const client = createFailoverClient({
      origins: [{ id: 'primary', url: server.url, allowInsecure: true }],
      connectivity,
    });
    const queryClient = new QueryClient({ defaultOptions: queryDefaults(client) });
    const saveNote = async (text: string) => {
      const outcome = await client.request({
        method: 'PUT',
        path: '/v1/notes/1',
        body: text,
        lifetime: 'durable',
      });
      if (outcome.status === 'failed') throw new RequestFailedError(outcome);
      return outcome.status === 'succeeded' ? 'saved' : 'queued';
    };
    const durable = new MutationObserver(queryClient, { mutationFn: saveNote, networkMode: 'always' });
    expect(await durable.mutate('a')).toBe('queued');
    expect(await client.outbox.size()).toBe(1);

    const paused = new MutationObserver(queryClient, { mutationFn: saveNote });
    void paused.mutate('b');
    // Let TanStack take its turn (no timer: it pauses at once when offline).
    for (let turn = 0; turn < 3; turn++) await new Promise((resolve) => setImmediate(resolve));
    expect(paused.getCurrentResult().isPaused).toBe(true);
    expect(await client.outbox.size()).toBe(1); // only in TanStack's memory
    expect(server.requests).toHaveLength(0);
    queryClient.clear();
    await client.close();
  });

  it('a query over client.fetch is retried on the backup within policy.attempts.max attempts in all', async () => {
    const backup = await loopback.serve(({ res }) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('{"items":[1]}');
    });
    const attempts: string[] = [];
    const client = createFailoverClient({
      origins: [
        { id: 'primary', url: `http://127.0.0.1:${await closedPort()}`, allowInsecure: true },
        { id: 'backup', url: backup.url, allowInsecure: true },
      ],
      policy: {
        attempts: { max: 3 },
        backoff: { initialMs: 1, maxMs: 1 },
        health: { suspectAfter: 1, failoverAfter: 2 },
      },
      onEvent: (event) => void (event.type === 'attempt-started' && attempts.push(event.origin ?? '')),
    });
    const queryClient = new QueryClient({ defaultOptions: queryDefaults(client) });
    const result = await runQuery(queryClient, async () => {
      const response = await client.fetch('/items');
      if (!response.ok) throw new Error(`HTTP ${response.status}`);
      return response.json();
    });
    expect(result.data).toEqual({ items: [1] });
    // The primary refused the first attempt: the retry went to the backup, the healthy origin that had not failed it.
    expect(attempts).toEqual(['primary', 'backup']);
    expect(backup.requests).toHaveLength(1);
    queryClient.clear();
    await client.close();
  });

  it("a query over client.fetch gets a 404's body, and TanStack's own cancel stops failwise's request", async () => {
    const { server, client } = await failingOrigin(loopback, 404);
    const queryClient = new QueryClient({ defaultOptions: queryDefaults(client) });
    const result = await runQuery(queryClient, async () => {
      const response = await client.fetch('/items');
      if (!response.ok) throw new Error(`HTTP ${response.status}: ${await response.text()}`);
      return response.json();
    });
    expect(result.error).toEqual(new Error('HTTP 404: status 404'));
    expect(server.requests).toHaveLength(1);

    const hung = await loopback.serve(() => undefined);
    const ended: string[] = [];
    const hungClient = createFailoverClient({
      origins: [{ id: 'primary', url: hung.url, allowInsecure: true }],
      onEvent: (event) => void (event.type === 'failed' && ended.push(event.reason ?? '')),
    });
    const observer = new QueryObserver(queryClient, {
      queryKey: ['slow'],
      queryFn: ({ signal }) => hungClient.fetch('/slow', { signal }),
    });
    const unsubscribe = observer.subscribe(() => undefined);
    await hung.nextRequest();
    await queryClient.cancelQueries({ queryKey: ['slow'] });
    unsubscribe();
    // TanStack aborted the query's signal: failwise ends the request at once, with nothing sent again.
    for (let turn = 0; ended.length === 0 && turn < 5_000; turn++) await new Promise((r) => setImmediate(r));
    expect(ended).toEqual(['cancelled']);
    expect(hung.requests).toHaveLength(1);
    queryClient.clear();
    await hungClient.close();
    await client.close();
  });

  it('metaPolicy: a query carries its own failwise policy in meta; the origin sees that many attempts, not multiplied', async () => {
    const { server, client } = await failingOrigin(loopback, 503);
    const queryClient = new QueryClient({ defaultOptions: queryDefaults(client) });
    const observer = new QueryObserver(queryClient, {
      queryKey: ['feed'],
      meta: { failwise: { policy: { attempts: { max: 5 } } } },
      queryFn: async (context) => {
        const outcome = await client.request({
          path: '/feed',
          signal: context.signal,
          policy: metaPolicy(context),
        });
        if (outcome.status !== 'succeeded') throw new RequestFailedError(outcome);
        return outcome.response.text();
      },
    });
    const result = await new Promise<ReturnType<typeof observer.getCurrentResult>>((resolve) => {
      const unsubscribe = observer.subscribe((current) => {
        if (current.status === 'pending' || current.fetchStatus === 'fetching') return;
        unsubscribe();
        resolve(current);
      });
    });
    expect(result.status).toBe('error');
    expect(result.failureCount).toBe(1);
    expect(server.requests).toHaveLength(5);
    queryClient.clear();
    await client.close();
  });

  it('metaPolicy: a mutation carries its own failwise policy in meta (one attempt for a payment)', async () => {
    const { server, client } = await failingOrigin(loopback, 503);
    const queryClient = new QueryClient({ defaultOptions: queryDefaults(client) });
    const observer = new MutationObserver(queryClient, {
      meta: { failwise: { policy: { attempts: { max: 1 } } } },
      mutationFn: async (order: string, context) => {
        const outcome = await client.request({
          method: 'POST',
          path: '/payments',
          body: order,
          idempotencyKey: 'auto',
          policy: metaPolicy(context),
        });
        if (outcome.status !== 'succeeded') throw new RequestFailedError(outcome);
        return outcome.response.status;
      },
    });
    const error: unknown = await observer.mutate('{"amount":5}').catch((e: unknown) => e);
    expect((error as RequestFailedError).outcome).toMatchObject({ status: 'failed', attempts: 1 });
    expect(observer.getCurrentResult().failureCount).toBe(1);
    expect(server.requests).toHaveLength(1);
    queryClient.clear();
    await client.close();
  });

  it('metaPolicy: none without meta.failwise; refuses a meta.failwise that is not { policy }', () => {
    expect(metaPolicy({})).toBeUndefined();
    expect(metaPolicy(undefined)).toBeUndefined();
    expect(metaPolicy({ meta: { other: 1 } })).toBeUndefined();
    expect(metaPolicy({ meta: { failwise: { policy: { budgetMs: 100 } } } })).toEqual({ budgetMs: 100 });
    expect(() => metaPolicy({ meta: { failwise: { attempts: { max: 1 } } } })).toThrow(
      new ArgumentError('metaPolicy', 'meta.failwise', 'expected an object { policy }'),
    );
    expect(() => metaPolicy({ meta: { failwise: 5 } })).toThrow(ArgumentError);
  });

  it('queryDefaults refuses what is not a failwise client', () => {
    expect(() => queryDefaults({} as never)).toThrow(
      new ArgumentError('queryDefaults', 'client', 'expected a failwise client (createFailoverClient)'),
    );
    expect(() => queryDefaults(null as never)).toThrow(ArgumentError);
  });

  it('syncOnlineManager: onlineManager follows the device; a failing origin pauses nothing; stops when told', async () => {
    const connectivity = manualConnectivity('offline');
    const stop = syncOnlineManager(onlineManager, connectivity);
    expect(onlineManager.isOnline()).toBe(false);
    connectivity.set('online');
    expect(onlineManager.isOnline()).toBe(true);
    connectivity.set('changed'); // a new network: still online
    expect(onlineManager.isOnline()).toBe(true);

    // The API failing is not the device going offline.
    const { client } = await failingOrigin(loopback, 503);
    expect(await client.request({ path: '/items' })).toMatchObject({ status: 'failed' });
    expect(onlineManager.isOnline()).toBe(true);

    connectivity.set('offline');
    expect(onlineManager.isOnline()).toBe(false);
    stop();
    connectivity.set('online');
    expect(onlineManager.isOnline()).toBe(false); // no longer following: the last state stays
    stop(); // twice is harmless
    await client.close();
  });

  it('syncOnlineManager leaves onlineManager as it is while the source does not know', () => {
    const unknown = { current: () => 'unknown' as const, subscribe: () => () => undefined };
    syncOnlineManager(onlineManager, unknown);
    expect(onlineManager.isOnline()).toBe(true);
    expect(() => syncOnlineManager({} as never, unknown)).toThrow(
      new ArgumentError('syncOnlineManager', 'onlineManager', "expected TanStack Query's onlineManager"),
    );
    expect(() => syncOnlineManager(onlineManager, {} as never)).toThrow(
      new ArgumentError(
        'syncOnlineManager',
        'connectivity',
        'expected a connectivity source (current, subscribe)',
      ),
    );
  });
});
