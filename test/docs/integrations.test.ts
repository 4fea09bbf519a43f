// The recipes of docs/integrations.md must work as pasted. Each ```ts block is extracted verbatim
// and run with the real library (@tanstack/query-core 5, ky 1, openapi-fetch, @urql/core 6, Apollo Client 4)
// against origins on 127.0.0.1, and the test checks what the recipe's comments claim. Swapped in, each checked to
// occur exactly once: the origin URLs (loopback, `http:` with allowInsecure), the `./api` import (the test's copy
// of the page's api.ts), `@tanstack/react-query` for `@tanstack/query-core` (whose QueryClient and onlineManager it
// re-exports), and React Native's modules for stand-ins. Node has no browser window: the browser's
// `navigator.onLine` and online/offline events are played by an EventTarget stubbed onto globalThis, the
// documented API that browserConnectivity() reads.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { ApolloClient } from '@apollo/client';
import { gql } from '@apollo/client';
import { MutationObserver, QueryObserver, onlineManager, type QueryClient } from '@tanstack/query-core';
import type { Client as UrqlClient } from '@urql/core';
import { HTTPError, type KyInstance } from 'ky';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { RequestFailedError } from '../../src/errors/request-failed-error.js';
import type { FailoverClient } from '../../src/runtime/create-failover-client.js';
import { useLoopback, type HandlerContext } from '../helpers/loopback-server.js';
import { standIns, type NetInfoStandIn } from '../helpers/react-native-stand-ins.js';
import { recipeModules, swap } from '../helpers/doc-recipes.js';

const root = fileURLToPath(new URL('../../', import.meta.url));
const doc = readFileSync(join(root, 'docs/integrations.md'), 'utf8');

/** Every ```ts block of the page, with the heading (## or ###) it is under. */
const blocks = [...doc.matchAll(/^#{2,3} (.+)$|```ts\n([\s\S]*?)```/gm)].reduce<{
  heading: string;
  found: Array<[string, string]>;
}>(
  (at, match) =>
    match[1] !== undefined
      ? { ...at, heading: match[1] }
      : { ...at, found: [...at.found, [at.heading, match[2]!] as [string, string]] },
  { heading: '', found: [] },
).found;
const recipe = (heading: string): string => {
  const found = blocks.filter(([under]) => under === heading);
  expect(found, heading).toHaveLength(1);
  return found[0]![1];
};

const { write: writeModule } = recipeModules('integrations');

/** The browser's window as browserConnectivity() reads it: navigator.onLine and the online / offline events. */
function browserWindow() {
  const window = new EventTarget();
  const navigator = { onLine: true };
  vi.stubGlobal('navigator', navigator);
  vi.stubGlobal('addEventListener', window.addEventListener.bind(window));
  vi.stubGlobal('removeEventListener', window.removeEventListener.bind(window));
  return {
    go(online: boolean) {
      navigator.onLine = online;
      window.dispatchEvent(new Event(online ? 'online' : 'offline'));
    },
  };
}

const started: FailoverClient[] = [];
afterEach(async () => {
  for (const api of started.splice(0)) await api.close();
  vi.unstubAllGlobals();
  // TanStack's onlineManager is one per process: back to its own default for the next test.
  onlineManager.setEventListener(() => undefined);
  onlineManager.setOnline(true);
});

/** The page's api.ts over these origins: its path (for `./api` imports) and its exports. */
async function loadApi(primary: string, backup: string) {
  let code = swap(
    recipe('The client they share'),
    `url: 'https://api.example.com' }`,
    `url: '${primary}', allowInsecure: true }`,
  );
  code = swap(code, `url: 'https://backup.example.com' }`, `url: '${backup}', allowInsecure: true }`);
  const path = writeModule(code);
  const module = (await import(path)) as { api: FailoverClient };
  started.push(module.api);
  return { path, api: module.api };
}

/** A recipe that imports `./api`, with its origin URL made `primary`. */
async function loadRecipe<T>(heading: string, apiPath: string, url: string, primary: string): Promise<T> {
  const code = swap(swap(recipe(heading), `from './api';`, `from ${JSON.stringify(apiPath)};`), url, primary);
  return (await import(writeModule(code))) as T;
}

const JSON_TYPE = { 'content-type': 'application/json' };
const reply = ({ res }: HandlerContext, status: number, body: unknown) =>
  void res.writeHead(status, JSON_TYPE).end(JSON.stringify(body));

describe('docs/integrations.md', () => {
  it('has one block for the shared client and one per library, each run below', () => {
    expect(blocks.map(([heading]) => heading)).toEqual([
      'The client they share',
      'TanStack Query (`failwise/tanstack-query`)',
      'ky',
      'openapi-fetch',
      'urql',
      'Apollo Client',
      'React Native (`failwise/react-native`)',
    ]);
  });
});

describe('the TanStack Query recipe, with @tanstack/query-core 5', () => {
  const loopback = useLoopback();

  async function setUp(handler: (context: HandlerContext) => void) {
    const window = browserWindow();
    const primary = await loopback.serve(handler);
    const backup = await loopback.serve((context) => reply(context, 503, { error: 'down too' }));
    const { path } = await loadApi(primary.url, backup.url);
    const queries = (await import(
      writeModule(
        swap(
          swap(
            recipe('TanStack Query (`failwise/tanstack-query`)'),
            `from './api';`,
            `from ${JSON.stringify(path)};`,
          ),
          `from '@tanstack/react-query';`,
          `from '@tanstack/query-core';`,
        ),
      )
    )) as {
      queryClient: QueryClient;
      notesQuery: ConstructorParameters<typeof QueryObserver>[1];
      saveNoteMutation: ConstructorParameters<
        typeof MutationObserver<'saved' | 'queued', Error, { id: string; text: string }>
      >[1];
    };
    return { ...queries, window, primary, backup };
  }

  /** Runs the recipe's query through an observer, as useQuery does, to its end. */
  async function runQuery(queryClient: QueryClient, options: ConstructorParameters<typeof QueryObserver>[1]) {
    const observer = new QueryObserver(queryClient, options);
    return new Promise<ReturnType<typeof observer.getCurrentResult>>((resolve) => {
      const unsubscribe = observer.subscribe((result) => {
        if (result.status === 'pending' || result.fetchStatus === 'fetching') return;
        unsubscribe();
        resolve(result);
      });
    });
  }

  it('a query gets the notes; one that keeps failing reaches the origins policy.attempts.max times, not 4 x 3, and throws RequestFailedError', async () => {
    let notes = true;
    const { queryClient, notesQuery, primary, backup } = await setUp((context) =>
      notes ? reply(context, 200, [{ id: 'n1', text: 'hi' }]) : reply(context, 503, { error: 'busy' }),
    );
    expect((await runQuery(queryClient, notesQuery)).data).toEqual([{ id: 'n1', text: 'hi' }]);
    notes = false;
    queryClient.clear();
    const failed = await runQuery(queryClient, notesQuery);
    expect(failed.status).toBe('error');
    expect(failed.failureCount).toBe(1); // TanStack made one try of the query function
    expect(failed.error).toBeInstanceOf(RequestFailedError);
    expect((failed.error as RequestFailedError).outcome).toMatchObject({
      status: 'failed',
      reason: 'attempts-exhausted',
    });
    expect(primary.requests.length - 1 + backup.requests.length).toBe(3);
    queryClient.clear();
  });

  it('onlineManager follows the device, and never the API: a failing origin leaves it online', async () => {
    const { queryClient, notesQuery, window } = await setUp((context) =>
      reply(context, 503, { error: 'busy' }),
    );
    expect(onlineManager.isOnline()).toBe(true);
    await runQuery(queryClient, notesQuery);
    expect(onlineManager.isOnline()).toBe(true);
    window.go(false);
    expect(onlineManager.isOnline()).toBe(false);
    window.go(true);
    expect(onlineManager.isOnline()).toBe(true);
    queryClient.clear();
  });

  it('a save is saved online, runs offline too (networkMode always) and is queued, then sent once back online; a 422 throws', async () => {
    const { queryClient, saveNoteMutation, window, primary } = await setUp((context) =>
      context.req.url === '/v1/notes/bad'
        ? reply(context, 422, { error: 'text too long' })
        : reply(context, 200, {}),
    );
    const save = (note: { id: string; text: string }) =>
      new MutationObserver(queryClient, saveNoteMutation).mutate(note);
    expect(await save({ id: 'n1', text: 'one' })).toBe('saved');

    window.go(false);
    expect(onlineManager.isOnline()).toBe(false);
    expect(await save({ id: 'n2', text: 'two' })).toBe('queued');
    expect(primary.requests.map((request) => request.url)).toEqual(['/v1/notes/n1']);
    const sent = primary.nextRequest();
    window.go(true); // going online wakes the outbox
    const queued = await sent;
    expect([queued.method, queued.url, queued.body]).toEqual([
      'PUT',
      '/v1/notes/n2',
      '{"id":"n2","text":"two"}',
    ]);
    expect(queued.headers['idempotency-key']).toMatch(/^[0-9a-f-]{36}$/);

    const refused: unknown = await save({ id: 'bad', text: 'x'.repeat(10) }).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(RequestFailedError);
    expect((refused as RequestFailedError).outcome).toMatchObject({
      status: 'failed',
      failure: { status: 422 },
    });
    queryClient.clear();
  });
});

/** A primary that answers 404 for /v1/items/missing and 503 otherwise, and a backup that answers item 1. */
async function itemOrigins(loopback: ReturnType<typeof useLoopback>) {
  browserWindow();
  const primary = await loopback.serve((context) =>
    context.req.url === '/v1/items/missing'
      ? reply(context, 404, { error: 'no such item' })
      : reply(context, 503, { error: 'busy' }),
  );
  const backup = await loopback.serve((context) => reply(context, 200, { id: '1' }));
  const { path } = await loadApi(primary.url, backup.url);
  return { primary, backup, path };
}

describe('the ky recipe, with ky 1', () => {
  const loopback = useLoopback();

  it("gets a 404's body in HTTPError; a read the primary answers 503 is retried once, on the backup (ky's retry off)", async () => {
    const { primary, backup, path } = await itemOrigins(loopback);
    const { getItem } = await loadRecipe<{ getItem(id: string): Promise<{ id: string }>; http: KyInstance }>(
      'ky',
      path,
      `'https://api.example.com'`,
      JSON.stringify(primary.url),
    );
    const missing: unknown = await getItem('missing').catch((error: unknown) => error);
    expect(missing).toBeInstanceOf(HTTPError);
    expect(await (missing as HTTPError).response.json()).toEqual({ error: 'no such item' });
    expect(primary.requests).toHaveLength(1);

    // failwise retries the 503 on the healthy backup, not on the primary that failed it: ky gets the backup's
    // answer, one call of its own (its retry is off), two attempts in all.
    expect(await getItem('1')).toEqual({ id: '1' });
    expect([primary.requests.length, backup.requests.length]).toEqual([2, 1]);
  });
});

describe('the openapi-fetch recipe', () => {
  const loopback = useLoopback();

  it('gives a 404 as { error, response } with its body parsed, and a 503 is retried on the backup within the call', async () => {
    const { primary, backup, path } = await itemOrigins(loopback);
    type Result = { data?: unknown; error?: unknown; response: Response };
    const { client } = await loadRecipe<{
      client: { GET(path: string, init: { params: { path: { id: string } } }): Promise<Result> };
    }>('openapi-fetch', path, `'https://api.example.com'`, JSON.stringify(primary.url));
    const get = (id: string) => client.GET('/v1/items/{id}', { params: { path: { id } } });

    const missing = await get('missing');
    expect([missing.error, missing.response.status, missing.data]).toEqual([
      { error: 'no such item' },
      404,
      undefined,
    ]);
    // The primary's 503 is retried on the healthy backup, within the same call.
    const busy = await get('1');
    expect([busy.error, busy.response.status, busy.data]).toEqual([undefined, 200, { id: '1' }]);
    expect([primary.requests.length, backup.requests.length]).toEqual([2, 1]);
  });
});

/** A primary that answers 503, and a backup that answers queries and drops the connection of a mutation it applied. */
async function graphqlOrigins(loopback: ReturnType<typeof useLoopback>) {
  browserWindow();
  const primary = await loopback.serve((context) => reply(context, 503, { errors: [{ message: 'busy' }] }));
  let applied = 0;
  const backup = await loopback.serve((context) => {
    if (!context.body.includes('mutation'))
      return reply(context, 200, { data: { items: [{ id: '1', __typename: 'Item' }] } });
    applied++;
    context.req.socket.destroy(); // the write reached the server; the answer never comes back
  });
  const { path } = await loadApi(primary.url, backup.url);
  return { primary, backup, path, applied: () => applied };
}

const ITEMS = gql`
  query Items {
    items {
      id
    }
  }
`;
const ADD = gql`
  mutation Add($name: String!) {
    addItem(name: $name) {
      id
    }
  }
`;

describe('the urql recipe, with @urql/core 6', () => {
  const loopback = useLoopback();

  it('retries a query sent as a POST (3 attempts), fails it over, and never sends a mutation twice', async () => {
    const { primary, backup, path, applied } = await graphqlOrigins(loopback);
    const { urql } = await loadRecipe<{ urql: UrqlClient }>(
      'urql',
      path,
      `'https://api.example.com/graphql'`,
      JSON.stringify(`${primary.url}/graphql`),
    );
    const query = () => urql.query(ITEMS, {}, { requestPolicy: 'network-only' }).toPromise();
    expect((await query()).error).toBeDefined();
    expect(primary.requests.map((request) => request.method)).toEqual(['POST', 'POST', 'POST']);
    expect((await query()).data).toEqual({ items: [{ id: '1', __typename: 'Item' }] });
    expect([primary.requests.length, backup.requests.length]).toEqual([5, 1]);

    const mutation = await urql.mutation(ADD, { name: 'x' }).toPromise();
    expect(mutation.error).toBeDefined();
    expect(applied()).toBe(1);
    expect(backup.requests).toHaveLength(2);
  });
});

describe('the Apollo Client recipe, with Apollo Client 4', () => {
  const loopback = useLoopback();

  it('retries a query (3 attempts), fails it over, and never sends a mutation twice', async () => {
    const { primary, backup, path, applied } = await graphqlOrigins(loopback);
    const { apollo } = await loadRecipe<{ apollo: ApolloClient }>(
      'Apollo Client',
      path,
      `'https://api.example.com/graphql'`,
      JSON.stringify(`${primary.url}/graphql`),
    );
    const query = () => apollo.query({ query: ITEMS, fetchPolicy: 'network-only' });
    await expect(query()).rejects.toThrow();
    expect(primary.requests).toHaveLength(3);
    expect((await query()).data).toEqual({ items: [{ id: '1', __typename: 'Item' }] });
    expect([primary.requests.length, backup.requests.length]).toEqual([5, 1]);

    await expect(apollo.mutate({ mutation: ADD, variables: { name: 'x' } })).rejects.toThrow();
    expect(applied()).toBe(1);
    expect(backup.requests).toHaveLength(2);
  });
});

describe('the React Native recipe, on stand-ins of NetInfo and AsyncStorage (React Native cannot run in Node)', () => {
  const loopback = useLoopback();

  it('sends nothing while NetInfo says offline, keeps durable work on AsyncStorage, and sends it once back online', async () => {
    const server = await loopback.serve((context) => reply(context, 200, {}));
    const asyncStorage = writeModule(standIns.asyncStorage);
    const netInfoPath = writeModule(standIns.netInfo);
    let code = swap(
      recipe('React Native (`failwise/react-native`)'),
      `url: 'https://api.example.com' }`,
      `url: '${server.url}', allowInsecure: true }`,
    );
    code = swap(code, `'@react-native-async-storage/async-storage'`, JSON.stringify(asyncStorage));
    code = swap(code, `'@react-native-community/netinfo'`, JSON.stringify(netInfoPath));
    const { api } = (await import(writeModule(code))) as { api: FailoverClient };
    started.push(api);
    const netInfo = (await import(netInfoPath)) as NetInfoStandIn;
    const disk = ((await import(asyncStorage)) as { values: Map<string, string> }).values;

    netInfo.report({ type: 'none', isConnected: false, isInternetReachable: false });
    expect(await api.request({ path: '/v1/ping' })).toMatchObject({ status: 'failed', reason: 'offline' });
    const durable = await api.request({
      method: 'POST',
      path: '/v1/sync',
      body: '{"n":1}',
      lifetime: 'durable',
    });
    expect(durable).toMatchObject({ status: 'deferred', reason: 'offline' });
    expect(server.requests).toHaveLength(0);
    expect(JSON.parse(disk.get('failwise-outbox:index')!)).toMatchObject({
      entries: [[0, expect.any(String)]],
    });

    const sent = server.nextRequest();
    netInfo.report({ type: 'wifi', isConnected: true, isInternetReachable: true });
    expect(await sent).toMatchObject({ method: 'POST', url: '/v1/sync', body: '{"n":1}' });
    await vi.waitFor(async () => expect(await api.outbox.size()).toBe(0), { timeout: 2_000, interval: 10 });
    expect(server.requests).toHaveLength(1);
    expect([...disk.keys()]).toEqual(['failwise-outbox:index']);
  });
});
