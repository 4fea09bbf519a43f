// The recipes of docs/recipes.md must work as pasted. Each ```ts block is extracted verbatim from its section.
// All are type-checked against failwise's sources with the TypeScript compiler: the browser and React Native ones
// with bundler module resolution (as Vite and Metro resolve imports) and minimal declarations of the third-party
// APIs they call (TanStack Query, NetInfo, AppState, AsyncStorage, written from their published types), the Node
// one with the project's NodeNext options. Every name a recipe imports from failwise must be exported by that
// entry. Then what can run here runs for real: the React Native recipe with in-memory stand-ins of AsyncStorage,
// NetInfo, AppState and react-native-random-uuid (React Native itself cannot run in Node), offline and then
// across a restart against an HTTP server on 127.0.0.1; the Node recipe against an HTTP server on 127.0.0.1 and
// a SQLite file, across a restart, and in a child process that must exit by itself on SIGTERM. Only an origin
// URL, a file path, the third-party imports of the React Native recipe and (in the child) failwise's import
// paths are swapped in, each checked to occur exactly once so that an edit of a recipe cannot slip past the
// test.
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import * as universalEntry from '../../src/index.js';
import * as browserEntry from '../../src/browser.js';
import * as nodeEntry from '../../src/node.js';
import * as reactNativeEntry from '../../src/react-native.js';
import type { FailoverClient } from '../../src/runtime/create-failover-client.js';
import type { OutboxEntry } from '../../src/stores/outbox-store.js';
import type { ClassifyHook } from '../../src/runtime/client-options.js';
import { harness } from '../helpers/client-harness.js';
import { closedPort, useLoopback } from '../helpers/loopback-server.js';
import { respond } from '../helpers/scripted-transport.js';
import { standIns, type AppStateStandIn, type NetInfoStandIn } from '../helpers/react-native-stand-ins.js';
import { blocks, declarations, recipeModules, root, swap, typeCheck } from '../helpers/doc-recipes.js';

const browserBlocks = blocks('A browser app');
const reactNativeBlocks = blocks('A React Native app');
const nodeBlocks = blocks('A Node service');
const recipes = {
  browser: browserBlocks[0] ?? '',
  'react-native': reactNativeBlocks[0] ?? '',
  node: nodeBlocks[0] ?? '',
  'node fleet': nodeBlocks[1] ?? '',
};

const entries: Record<string, Record<string, unknown>> = {
  failwise: universalEntry,
  'failwise/browser': browserEntry,
  'failwise/node': nodeEntry,
  'failwise/react-native': reactNativeEntry,
};

/** `[entry, name]` for every value a recipe imports from failwise by name. */
function failwiseImports(code: string): Array<[string, string]> {
  return [...code.matchAll(/^import\s+(type\s+)?\{([^}]*)\}\s+from\s+'(failwise[^']*)';/gm)].flatMap(
    ([, typeOnly, names = '', entry = '']) =>
      typeOnly
        ? []
        : names
            .split(',')
            .map((name) => name.trim())
            .filter((name) => name !== '' && !name.startsWith('type '))
            .map((name): [string, string] => [entry, name.split(/\s+as\s+/)[0]!]),
  );
}

describe('the recipes of docs/recipes.md', () => {
  it('are one block for the browser, one for React Native and two for Node (SQLite, PostgreSQL)', () => {
    expect([browserBlocks.length, reactNativeBlocks.length, nodeBlocks.length]).toEqual([1, 1, 2]);
  });

  it('type-check as written, the browser and React Native ones as bundlers resolve them', () => {
    const bundled = typeCheck(
      {
        '__recipe-browser.ts': recipes.browser,
        '__recipe-react-native.ts': recipes['react-native'],
        '__third-party.d.ts': declarations,
      },
      'src/index.ts',
      true,
    );
    expect(bundled.errors).toEqual([]);
    const node = typeCheck(
      { '__recipe-node.ts': recipes.node, '__recipe-node-fleet.ts': recipes['node fleet'] },
      'src/index.node.ts',
    );
    expect(node.errors).toEqual([]);
    // failwise resolved to src/, not to a build of it.
    for (const entry of ['src/index.ts', 'src/browser.ts', 'src/react-native.ts'])
      expect(bundled.loaded).toContain(join(root, entry));
    for (const entry of ['src/index.node.ts', 'src/node.ts'])
      expect(node.loaded).toContain(join(root, entry));
    const loaded = [...bundled.loaded, ...node.loaded];
    expect(loaded.filter((path) => path.startsWith(join(root, 'dist/')))).toEqual([]);
  }, 60_000);

  it('the payments and feed recipe is one block that type-checks as written and imports what failwise exports', () => {
    const [routes, ...more] = blocks('Payments and a feed on one client');
    expect(more).toEqual([]);
    expect(typeCheck({ '__recipe-routes.ts': routes! }, 'src/index.ts', true).errors).toEqual([]);
    expect(failwiseImports(routes!).filter(([entry, name]) => !(name in entries[entry]!))).toEqual([]);
  }, 60_000);

  it('import only names their failwise entry exports', () => {
    const expected = {
      browser: [
        'failwise RequestFailedError',
        'failwise createFailoverClient',
        'failwise/browser browserConnectivity',
        'failwise/browser indexedDbStore',
      ],
      'react-native': [
        'failwise createFailoverClient',
        'failwise/react-native keyValueStore',
        'failwise/react-native netInfoConnectivity',
      ],
      node: ['failwise createFailoverClient', 'failwise/node nodeHttpTransport', 'failwise/node sqliteStore'],
      'node fleet': [
        'failwise createFailoverClient',
        'failwise/node nodeHttpTransport',
        'failwise/node postgresStore',
      ],
    };
    for (const [name, code] of Object.entries(recipes)) {
      const imports = failwiseImports(code);
      expect(imports.map((pair) => pair.join(' ')).sort(), name).toEqual(
        expected[name as keyof typeof recipes],
      );
      for (const [entry, exported] of imports)
        expect(entries[entry], `${name}: ${entry}`).toHaveProperty(exported);
    }
  });
});

const { write: writeModule, file: fileInFolder } = recipeModules('recipes');
let databases = 0;

interface ReactNativeRecipe {
  api: FailoverClient;
  queueSync(changes: readonly object[]): Promise<'synced' | 'queued' | 'refused'>;
  shutdown(): Promise<void>;
}
describe('the React Native recipe of docs/recipes.md, on stand-ins of its native modules', () => {
  const loopback = useLoopback();
  let disk: Map<string, string>;
  let asyncStorage = '';
  const started: ReactNativeRecipe[] = [];

  beforeEach(async () => {
    // One phone: its AsyncStorage is shared by every start of the app in this test.
    asyncStorage = writeModule(standIns.asyncStorage);
    disk = ((await import(asyncStorage)) as { values: Map<string, string> }).values;
  });
  afterEach(async () => {
    for (const recipe of started.splice(0)) await recipe.api.close();
  });

  /**
   * Starts the app (a fresh copy of the recipe, with fresh NetInfo and AppState) against the origin `url`, NetInfo
   * already saying `offline` when asked: an app that starts online may send its stored work at once.
   */
  async function start(url: string, { offline = false } = {}) {
    const netInfo = writeModule(standIns.netInfo);
    if (offline)
      ((await import(netInfo)) as NetInfoStandIn).report({
        type: 'none',
        isConnected: false,
        isInternetReachable: false,
      });
    const appState = writeModule(standIns.appState);
    let code = swap(
      recipes['react-native'],
      `url: 'https://api.example.com'`,
      `url: '${url}', allowInsecure: true`,
    );
    for (const [from, to] of [
      [`'@react-native-async-storage/async-storage'`, asyncStorage],
      [`'@react-native-community/netinfo'`, netInfo],
      [`'react-native'`, appState],
      [`'react-native-random-uuid'`, writeModule(standIns.uuid)],
    ] as const)
      code = swap(code, from, JSON.stringify(to));
    const recipe = (await import(writeModule(code))) as ReactNativeRecipe;
    started.push(recipe);
    return {
      recipe,
      netInfo: (await import(netInfo)) as NetInfoStandIn,
      appState: (await import(appState)) as AppStateStandIn,
    };
  }

  it('queues a sync made offline on AsyncStorage, and the next start sends it once, with its key, when online', async () => {
    const first = await start(`http://127.0.0.1:${await closedPort()}`);
    first.netInfo.report({ type: 'none', isConnected: false, isInternetReachable: false });
    expect(await first.recipe.queueSync([{ note: 1, text: 'héllo' }])).toBe('queued');
    const index = JSON.parse(disk.get('failwise-outbox:index')!) as { entries: [number, string][] };
    expect(index.entries).toHaveLength(1);
    const stored = JSON.parse(disk.get('failwise-outbox:entry:0')!) as OutboxEntry;
    expect(stored).toMatchObject({
      status: 'pending',
      attempts: 0,
      request: { method: 'POST', path: '/v1/sync' },
    });
    // shutdown() lets go of AppState and NetInfo, and closes the client.
    await first.recipe.shutdown();
    expect([first.appState.listening(), first.netInfo.listening()]).toEqual([0, 0]);
    started.splice(0);

    // The app starts again on the same phone, offline at first, then NetInfo finds the network.
    const server = await loopback.serve(({ res }) => void res.writeHead(200).end());
    const second = await start(server.url, { offline: true });
    expect(await second.recipe.api.outbox.size()).toBe(1);
    expect(server.requests).toHaveLength(0);
    second.netInfo.report({ type: 'wifi', isConnected: true, isInternetReachable: true });
    await second.recipe.api.outbox.flush();
    expect(server.requests.map((request) => [request.method, request.url, request.body])).toEqual([
      ['POST', '/v1/sync', JSON.stringify({ changes: [{ note: 1, text: 'héllo' }] })],
    ]);
    expect(server.requests[0]!.headers['idempotency-key']).toBe(stored.idempotencyKey);
    expect([...disk.keys()]).toEqual(['failwise-outbox:index']);
  });

  it('syncs at once when online, says refused when the server refuses, and asks NetInfo again back in the foreground', async () => {
    let status = 200;
    const server = await loopback.serve(({ res }) => void res.writeHead(status).end());
    const { recipe, netInfo, appState } = await start(server.url);
    netInfo.report({ type: 'wifi', isConnected: true, isInternetReachable: null });
    expect(await recipe.queueSync([{ note: 2 }])).toBe('synced');
    status = 422;
    expect(await recipe.queueSync([{ note: 3 }])).toBe('refused');
    // Sent once (a 422 is not retried), and kept as dead-lettered for the app to show, retry or remove.
    expect(server.requests).toHaveLength(2);
    // (The outcome can reach the caller a moment before the dead-letter is written: wait for the store.)
    await vi.waitFor(
      async () =>
        expect(
          (await recipe.api.outbox.list()).map(({ status, deadReason }) => [status, deadReason]),
        ).toEqual([['dead', 'not-retryable']]),
      { timeout: 2_000, interval: 10 },
    );

    appState.set('background');
    expect(netInfo.calls.refresh).toBe(0);
    appState.set('active');
    expect(netInfo.calls.refresh).toBe(1);
  });
});

interface NodeRecipe {
  billing: FailoverClient;
  recordUsage(usage: { eventId: string; accountId: string; units: number }): Promise<string>;
  balance(accountId: string): Promise<number | undefined>;
}

describe('the Node recipe of docs/recipes.md, against a real server and a real SQLite file', () => {
  const loopback = useLoopback();
  let file = '';
  const clients: FailoverClient[] = [];
  const signalListeners = process.listeners('SIGTERM');
  const token = process.env.BILLING_TOKEN;

  beforeEach(() => {
    // A file of its own for each test: one test's leftovers cannot pass for another's.
    file = fileInFolder(`billing-outbox-${++databases}.db`);
    process.env.BILLING_TOKEN = 'test-token';
  });
  afterEach(async () => {
    for (const client of clients.splice(0)) await client.close();
    // The recipe's `process.once('SIGTERM', ...)`: leave the worker's listeners as they were.
    for (const listener of process.listeners('SIGTERM'))
      if (!signalListeners.includes(listener)) process.off('SIGTERM', listener);
    if (token === undefined) delete process.env.BILLING_TOKEN;
    else process.env.BILLING_TOKEN = token;
  });

  /** The recipe with its origin made `url` (`http:`, with `allowInsecure`) and its file made this test's. */
  function recipeFor(url: string): string {
    const code = swap(
      recipes.node,
      `url: 'https://billing.example.com'`,
      `url: '${url}', allowInsecure: true`,
    );
    return swap(code, `'./var/billing-outbox.db'`, JSON.stringify(file));
  }

  /** Runs a fresh copy of the recipe (a new process, as far as failwise can tell) against `url`. */
  async function start(url: string): Promise<NodeRecipe> {
    const recipe = (await import(writeModule(recipeFor(url)))) as NodeRecipe;
    clients.push(recipe.billing);
    return recipe;
  }

  /** What the SQLite file holds now, read through a handle of its own. */
  async function stored(): Promise<OutboxEntry[]> {
    const store = nodeEntry.sqliteStore(file);
    try {
      return await store.list();
    } finally {
      await store.close();
    }
  }

  /** A billing API that applies each idempotency key once, and notes what the outbox held when a request came. */
  async function billingApi() {
    const applied = new Map<string, string>();
    const heldAtArrival: OutboxEntry[][] = [];
    const server = await loopback.serve(({ req, res, body }) => {
      if (req.method === 'GET') {
        const known = req.url === '/v1/accounts/acct-7/balance';
        return void res.writeHead(known ? 200 : 404).end(known ? '{"units":42}' : '{"error":"no account"}');
      }
      const key = String(req.headers['idempotency-key']);
      if (!applied.has(key)) applied.set(key, body);
      void stored().then((entries) => {
        heldAtArrival.push(entries);
        res.writeHead(201, { 'content-type': 'application/json' }).end('{"ok":true}');
      });
    });
    return { server, applied, heldAtArrival };
  }

  const usage = { eventId: 'evt-1', accountId: 'acct-7', units: 3 };

  it('stores the usage first, applies it once over node:http, and leaves the SQLite file empty', async () => {
    const { server, applied, heldAtArrival } = await billingApi();
    const { billing, recordUsage } = await start(server.url);

    expect(await recordUsage(usage)).toBe('succeeded');
    await billing.close();

    expect([...applied]).toEqual([['usage-evt-1', JSON.stringify(usage)]]);
    expect(server.requests).toHaveLength(1);
    expect(server.requests[0]).toMatchObject({
      method: 'POST',
      url: '/v1/usage',
      headers: { authorization: 'Bearer test-token', 'idempotency-key': 'usage-evt-1' },
    });
    // In the file before it was sent (rule 10), without the token that `auth` added.
    expect(heldAtArrival).toHaveLength(1);
    expect(heldAtArrival[0]).toMatchObject([
      { idempotencyKey: 'usage-evt-1', status: 'pending', attempts: 1, request: { path: '/v1/usage' } },
    ]);
    expect(heldAtArrival[0]![0]!.request.headers).not.toHaveProperty('authorization');
    expect(await stored()).toEqual([]);
  });

  it('keeps the usage in the file while the API is down, and sends it once after a restart', async () => {
    const down = await start(`http://127.0.0.1:${await closedPort()}`);
    expect(await down.recordUsage(usage)).toBe('deferred');
    await down.billing.close();
    // Three attempts, each refused before anything was sent (`connect`, as node:http tells).
    const [entry] = await stored();
    expect(entry).toMatchObject({ idempotencyKey: 'usage-evt-1', status: 'pending', attempts: 3 });
    expect(entry!.failures.map((failure) => [failure.class, failure.requestSent])).toEqual([
      ['connect', 'no'],
      ['connect', 'no'],
      ['connect', 'no'],
    ]);

    // The next start, with the API back: the outbox resumes what the file holds.
    const { server, applied } = await billingApi();
    const { billing } = await start(server.url);
    await billing.outbox.flush(); // now, rather than after the entry's 40 s backoff
    await billing.close();

    expect([...applied]).toEqual([['usage-evt-1', JSON.stringify(usage)]]);
    expect(server.requests[0]?.headers).toMatchObject({ authorization: 'Bearer test-token' });
    expect(await stored()).toEqual([]);
  });

  it('reads interactively: the balance when the API has it, undefined when it refuses', async () => {
    const { server } = await billingApi();
    const { balance } = await start(server.url);
    expect(await balance('acct-7')).toBe(42);
    expect(await balance('acct-8')).toBeUndefined();
    expect(server.requests.map((request) => [request.method, request.url])).toEqual([
      ['GET', '/v1/accounts/acct-7/balance'],
      ['GET', '/v1/accounts/acct-8/balance'], // a 404 is not retried
    ]);
  });

  it('closes on SIGTERM, so that a process holding queued work exits by itself, the work kept in the file', async () => {
    // The recipe in a Node process of its own, failwise imported from the sources, with the API down: its
    // usage is deferred, and the outbox's 40 s backoff timer would keep the process alive but for close().
    let code = swap(
      recipeFor(`http://127.0.0.1:${await closedPort()}`),
      `from 'failwise';`,
      `from ${JSON.stringify(join(root, 'src/index.node.ts'))};`,
    );
    code = swap(code, `from 'failwise/node';`, `from ${JSON.stringify(join(root, 'src/node.ts'))};`);
    const recipe = writeModule(code);
    const driver = writeModule(
      `const { recordUsage } = await import(${JSON.stringify(recipe)});\n` +
        `console.log(JSON.stringify(await recordUsage(${JSON.stringify(usage)})));\n`,
    );
    const child = spawn(process.execPath, ['--import', 'tsx', driver], {
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, BILLING_TOKEN: 'test-token' },
    });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
      child.on('exit', (code, signal) => resolve({ code, signal })),
    );
    const printed = await new Promise<string>((resolve, reject) => {
      let out = '';
      child.stdout.on('data', (chunk: Buffer) => {
        out += chunk.toString();
        if (out.includes('\n')) resolve(out.trim());
      });
      void exited.then(() => reject(new Error(`the recipe process ended early: ${stderr}`)));
    });
    expect(printed).toBe('"deferred"');
    expect(child.exitCode).toBeNull(); // still running: the outbox holds a timer for the queued usage

    child.kill('SIGTERM');
    const guard = setTimeout(() => child.kill('SIGKILL'), 10_000);
    const end = await exited;
    clearTimeout(guard);
    // Exited by itself with code 0: not killed by the signal (the recipe handles it) nor by the guard.
    expect(end).toEqual({ code: 0, signal: null });
    expect(await stored()).toMatchObject([{ idempotencyKey: 'usage-evt-1', status: 'pending', attempts: 3 }]);
  }, 30_000);
});

describe('the classifier recipes of docs/recipes.md, each classify run in a client on a simulated clock', () => {
  const [graphql = '', problem = '', transient401 = '', ...more] = blocks("The app's own classifier");

  it('are three blocks that type-check as written and import what failwise exports', () => {
    expect(more).toEqual([]);
    for (const [i, code] of [graphql, problem, transient401].entries()) {
      expect(typeCheck({ [`__recipe-classify-${i}.ts`]: code }, 'src/index.ts', true).errors).toEqual([]);
      expect(failwiseImports(code).filter(([entry, name]) => !(name in entries[entry]!))).toEqual([]);
    }
  }, 60_000);

  /** The recipe as pasted: its client is made (and closed here), its `classify` is what the tests run. */
  async function classifyOf(code: string): Promise<ClassifyHook> {
    const recipe = (await import(writeModule(code))) as { classify: ClassifyHook; api: FailoverClient };
    await recipe.api.close();
    return recipe.classify;
  }
  const policy = { attempts: { max: 3 }, backoff: { initialMs: 10, maxMs: 10 } };

  it('GraphQL: a 200 whose errors say unavailable is retried; other errors reach the app whole', async () => {
    const classify = await classifyOf(graphql);
    const unavailable = JSON.stringify({ errors: [{ extensions: { code: 'SERVICE_UNAVAILABLE' } }] });
    const data = JSON.stringify({ data: { items: [] } });
    const query = { method: 'POST', path: '/graphql', body: JSON.stringify({ query: '{ items { id } }' }) };
    const options = { policy, classify, isIdempotent: universalEntry.isGraphQLQuery };
    const retried = harness(
      [{ reply: respond(200, {}, unavailable) }, { reply: respond(200, {}, data) }],
      options,
    );
    const outcome = await retried.run(query);
    expect(retried.transport.calls).toHaveLength(2);
    expect(outcome.status === 'succeeded' && (await outcome.response.text())).toBe(data);

    const badInput = JSON.stringify({ errors: [{ extensions: { code: 'BAD_USER_INPUT' } }] });
    const kept = harness([{ reply: respond(200, {}, badInput) }], options);
    const answered = await kept.run(query);
    expect(kept.transport.calls).toHaveLength(1);
    expect(answered.status === 'succeeded' && (await answered.response.text())).toBe(badInput);

    const mutation = { ...query, body: JSON.stringify({ query: 'mutation { addItem { id } }' }) };
    const write = harness([{ reply: respond(200, {}, unavailable) }], options);
    expect(await write.run(mutation)).toMatchObject({ status: 'failed', reason: 'unsafe-to-replay' });
    expect(write.transport.calls).toHaveLength(1);
  });

  it('RFC 9457: a 500 of problem type temporary-reduced-capacity is retried as unavailable; another is not', async () => {
    const classify = await classifyOf(problem);
    const problemOf = (type: string) =>
      respond(500, { 'content-type': 'application/problem+json' }, JSON.stringify({ type, title: 'x' }));
    const reduced = harness(
      [{ reply: problemOf('https://example.com/probs/temporary-reduced-capacity') }, { reply: respond(200) }],
      { policy, classify },
    );
    expect((await reduced.run({ path: '/items' })).status).toBe('succeeded');
    expect(reduced.transport.calls).toHaveLength(2);

    const other = harness([{ reply: problemOf('https://example.com/probs/out-of-credit') }], {
      policy,
      classify,
    });
    expect(await other.run({ path: '/items' })).toMatchObject({
      status: 'failed',
      reason: 'not-retryable',
      failure: { class: 'server-error', status: 500 },
    });
    expect(other.transport.calls).toHaveLength(1);
  });

  it('a 401 with Retry-After waits and is sent again without a refresh; any other 401 refreshes', async () => {
    const classify = await classifyOf(transient401);
    let refreshes = 0;
    const auth = { headers: () => ({ authorization: 'Bearer t' }), refresh: async () => void refreshes++ };
    const transient = harness([{ reply: respond(401, { 'retry-after': '2' }) }, { reply: respond(200) }], {
      policy,
      classify,
      auth,
    });
    const started = transient.clock.now();
    expect((await transient.run({ path: '/items' })).status).toBe('succeeded');
    expect(transient.clock.now() - started).toBeGreaterThanOrEqual(2_000);
    expect(transient.transport.calls).toHaveLength(2);
    expect(refreshes).toBe(0);

    const expired = harness([{ reply: respond(401) }, { reply: respond(200) }], { policy, classify, auth });
    expect((await expired.run({ path: '/items' })).status).toBe('succeeded');
    expect(refreshes).toBe(1);
  });
});
