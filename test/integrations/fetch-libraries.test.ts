// client.fetch as the `fetch` of the libraries apps use: each one fails over to a backup, gets
// a 404's body, is cancelled by its own abort, and never makes more attempts in all than policy.attempts.max.
// Real libraries, real loopback origins on 127.0.0.1.
import { ApolloClient, HttpLink, InMemoryCache, gql } from '@apollo/client';
import { Client, cacheExchange, fetchExchange } from '@urql/core';
import ky, { HTTPError } from 'ky';
import createOpenApiClient from 'openapi-fetch';
import { describe, expect, it } from 'vitest';
import { isGraphQLQuery } from '../../src/policy/graphql-query.js';
import { createFailoverClient } from '../../src/runtime/create-failover-client.js';
import { closedPort, useLoopback, type LoopbackServer } from '../helpers/loopback-server.js';

type Loopback = ReturnType<typeof useLoopback>;

const JSON_TYPE = { 'content-type': 'application/json' };

/** A backup origin answering `status` with a JSON body; a primary that refuses connections. */
async function origins(loopback: Loopback, status: number, body: unknown) {
  const backup = await loopback.serve(({ res }) => {
    res.writeHead(status, JSON_TYPE);
    res.end(JSON.stringify(body));
  });
  const primary = `http://127.0.0.1:${await closedPort()}`;
  return { backup, primary };
}

/**
 * A failwise client over them that fails over after 2 failures of the primary. A read's retry goes to the backup
 * at once (its 2nd attempt), the healthy origin other than the one that failed it.
 */
function failoverClient(primary: string, backup: LoopbackServer) {
  const client = createFailoverClient({
    origins: [
      { id: 'primary', url: primary, allowInsecure: true },
      { id: 'backup', url: backup.url, allowInsecure: true },
    ],
    isIdempotent: isGraphQLQuery,
    policy: {
      attempts: { max: 3 },
      backoff: { initialMs: 1, maxMs: 1 },
      health: { suspectAfter: 1, failoverAfter: 2 },
    },
    onEvent: (event) => {
      if (event.type === 'attempt-started') attempts.push(event.origin ?? '');
      if (event.type === 'failed') ended.push(event.reason ?? '');
    },
  });
  /** The origin of every attempt failwise started, whichever library asked; the reasons of requests that failed. */
  const attempts: string[] = [];
  const ended: string[] = [];
  /** Resolves once a request has ended `failed` (checked each turn of the event loop, for at most 5 s). */
  const failed = async () => {
    for (let turn = 0; ended.length === 0; turn++) {
      if (turn > 5_000) throw new Error('no request ended failed');
      await new Promise((resolve) => setImmediate(resolve));
    }
    return ended;
  };
  return Object.assign(client, { attempts, failed });
}

/** A server that never answers (until the test ends): for cancellation. */
async function hanging(loopback: Loopback) {
  return loopback.serve(() => undefined);
}

describe('client.fetch under ky 1 (its own retry off: `retry: 0`)', () => {
  const loopback = useLoopback();

  it('retries on the backup, within policy.attempts.max attempts', async () => {
    const { backup, primary } = await origins(loopback, 200, { items: [1] });
    const client = failoverClient(primary, backup);
    const api = ky.create({ prefixUrl: primary, fetch: client.fetch, retry: 0 });
    expect(await api.get('v1/items').json()).toEqual({ items: [1] });
    expect(backup.requests).toHaveLength(1);
    expect(client.attempts).toEqual(['primary', 'backup']);
    // One failure makes the primary suspect, not failed over: the next request starts there again.
    expect(client.health()).toMatchObject({ state: 'suspect', activeOrigin: 'primary' });
    await client.close();
  });

  it("gets a 404's body in its HTTPError", async () => {
    const { backup } = await origins(loopback, 404, { error: 'no such item' });
    const client = failoverClient(backup.url, backup);
    const error: unknown = await ky(`${backup.url}/v1/items/9`, { fetch: client.fetch, retry: 0 }).catch(
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(HTTPError);
    expect(await (error as HTTPError).response.json()).toEqual({ error: 'no such item' });
    expect(backup.requests).toHaveLength(1);
    await client.close();
  });

  it('is cancelled by its own abort', async () => {
    const server = await hanging(loopback);
    const client = failoverClient(server.url, server);
    const controller = new AbortController();
    const pending = ky(`${server.url}/slow`, {
      fetch: client.fetch,
      retry: 0,
      signal: controller.signal,
      timeout: false,
    });
    await server.nextRequest();
    controller.abort();
    const error: unknown = await pending.catch((e: unknown) => e);
    expect((error as Error).name).toBe('AbortError');
    expect(server.requests).toHaveLength(1);
    await client.close();
  });
});

describe('client.fetch under openapi-fetch', () => {
  const loopback = useLoopback();
  interface Paths {
    '/v1/items/{id}': {
      get: {
        parameters: { path: { id: string } };
        responses: {
          200: { content: { 'application/json': { id: string } } };
          404: { content: { 'application/json': { error: string } } };
        };
      };
    };
  }

  it('retries on the backup, within policy.attempts.max attempts', async () => {
    const { backup, primary } = await origins(loopback, 200, { id: '7' });
    const client = failoverClient(primary, backup);
    const api = createOpenApiClient<Paths>({ baseUrl: primary, fetch: client.fetch });
    const { data } = await api.GET('/v1/items/{id}', { params: { path: { id: '7' } } });
    expect(data).toEqual({ id: '7' });
    expect(backup.requests).toHaveLength(1);
    expect(client.attempts).toEqual(['primary', 'backup']);
    await client.close();
  });

  it("gets a 404's body as `error`", async () => {
    const { backup } = await origins(loopback, 404, { error: 'no such item' });
    const client = failoverClient(backup.url, backup);
    const api = createOpenApiClient<Paths>({ baseUrl: backup.url, fetch: client.fetch });
    const { data, error, response } = await api.GET('/v1/items/{id}', { params: { path: { id: '9' } } });
    expect({ data, error, status: response.status }).toEqual({
      data: undefined,
      error: { error: 'no such item' },
      status: 404,
    });
    await client.close();
  });

  it('is cancelled by its own abort', async () => {
    const server = await hanging(loopback);
    const client = failoverClient(server.url, server);
    const api = createOpenApiClient<Paths>({ baseUrl: server.url, fetch: client.fetch });
    const controller = new AbortController();
    const pending = api.GET('/v1/items/{id}', { params: { path: { id: '1' } }, signal: controller.signal });
    await server.nextRequest();
    controller.abort();
    const error: unknown = await pending.catch((e: unknown) => e);
    expect((error as Error).name).toBe('AbortError');
    expect(server.requests).toHaveLength(1);
    await client.close();
  });
});

const ITEMS = gql`
  query Items {
    items {
      id
    }
  }
`;
const ADD = gql`
  mutation Add($name: String!) {
    add(name: $name) {
      id
    }
  }
`;

describe('client.fetch under urql 6 (`fetch` option)', () => {
  const loopback = useLoopback();
  const urql = (url: string, fetch: typeof globalThis.fetch) =>
    // POST for queries too (urql 6 sends them as GET by default): GraphQL reads failwise can only tell by the body.
    new Client({
      url,
      fetch,
      exchanges: [cacheExchange, fetchExchange],
      requestPolicy: 'network-only',
      preferGetMethod: false,
    });

  it('fails over a GraphQL query (a POST) to the backup, within policy.attempts.max attempts', async () => {
    const { backup, primary } = await origins(loopback, 200, {
      data: { items: [{ id: '1', __typename: 'Item' }] },
    });
    const client = failoverClient(primary, backup);
    const result = await urql(`${primary}/graphql`, client.fetch).query(ITEMS, {}).toPromise();
    expect(result.error).toBeUndefined();
    expect(result.data).toEqual({ items: [{ id: '1', __typename: 'Item' }] });
    expect(backup.requests.map((r) => r.method)).toEqual(['POST']);
    expect(client.attempts).toEqual(['primary', 'primary', 'backup']);
    await client.close();
  });

  it('is cancelled when the query is torn down (urql aborts its fetch)', async () => {
    const server = await hanging(loopback);
    const client = failoverClient(server.url, server);
    const subscription = urql(`${server.url}/graphql`, client.fetch)
      .query(ITEMS, {})
      .subscribe(() => undefined);
    await server.nextRequest();
    subscription.unsubscribe();
    expect(await client.failed()).toEqual(['cancelled']);
    expect(client.attempts).toHaveLength(1);
    await client.close();
  });

  it("gets a 404's body", async () => {
    const { backup } = await origins(loopback, 404, { errors: [{ message: 'no such schema' }] });
    const client = failoverClient(backup.url, backup);
    const result = await urql(`${backup.url}/graphql`, client.fetch).query(ITEMS, {}).toPromise();
    expect(result.error?.graphQLErrors.map((e) => e.message)).toEqual(['no such schema']);
    await client.close();
  });
});

describe('client.fetch under Apollo Client 4 (`HttpLink`’s `fetch`)', () => {
  const loopback = useLoopback();
  const apollo = (uri: string, fetch: typeof globalThis.fetch) =>
    new ApolloClient({ link: new HttpLink({ uri, fetch }), cache: new InMemoryCache() });

  it('fails over a query to the backup, within policy.attempts.max attempts', async () => {
    const { backup, primary } = await origins(loopback, 200, {
      data: { items: [{ id: '1', __typename: 'Item' }] },
    });
    const client = failoverClient(primary, backup);
    const result = await apollo(`${primary}/graphql`, client.fetch).query({ query: ITEMS });
    expect(result.data).toEqual({ items: [{ id: '1', __typename: 'Item' }] });
    expect(backup.requests).toHaveLength(1);
    expect(client.attempts).toEqual(['primary', 'primary', 'backup']);
    await client.close();
  });

  it('is cancelled by its own abort (`context.fetchOptions.signal`)', async () => {
    const server = await hanging(loopback);
    const client = failoverClient(server.url, server);
    const controller = new AbortController();
    const pending = apollo(`${server.url}/graphql`, client.fetch).query({
      query: ITEMS,
      context: { fetchOptions: { signal: controller.signal } },
    });
    await server.nextRequest();
    controller.abort();
    const error: unknown = await pending.catch((e: unknown) => e);
    expect((error as Error).name).toBe('AbortError');
    expect(await client.failed()).toEqual(['cancelled']);
    expect(client.attempts).toHaveLength(1);
    await client.close();
  });

  it('never sends a mutation twice when its connection drops after the server applied it', async () => {
    let applied = 0;
    const server = await loopback.serve(({ req, markApplied }) => {
      applied++;
      markApplied();
      req.socket.destroy(); // the write reached the server; the answer never comes back
    });
    const client = failoverClient(server.url, server);
    const error: unknown = await apollo(`${server.url}/graphql`, client.fetch)
      .mutate({ mutation: ADD, variables: { name: 'x' } })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(Error);
    expect(applied).toBe(1);
    expect(server.requests).toHaveLength(1);
    expect(client.attempts).toHaveLength(1); // a keyless mutation that may have been applied: unsafe to replay
    await client.close();
  });
});
