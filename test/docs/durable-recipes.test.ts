// The recipes of docs/durable.md must work as pasted. Each is extracted verbatim from its section. All three are
// type-checked with the project's compiler options (failwise's entries mapped to src/, and minimal declarations
// for the two React Native packages), and every name a recipe imports from failwise must be exported by that
// entry. The Node recipe then runs for real, against an HTTP server on 127.0.0.1 and a SQLite file in a temp
// folder: only its origin (made `http:` with `allowInsecure: true`) and its file path are swapped in, each
// checked to occur exactly once so that an edit of the recipe cannot slip past the test.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import * as universalEntry from '../../src/index.js';
import * as browserEntry from '../../src/browser.js';
import * as nodeEntry from '../../src/node.js';
import type { FailoverClient } from '../../src/runtime/create-failover-client.js';
import type { OutboxEntry } from '../../src/stores/outbox-store.js';
import { closedPort, useLoopback } from '../helpers/loopback-server.js';

const root = fileURLToPath(new URL('../../', import.meta.url));
const doc = readFileSync(join(root, 'docs/durable.md'), 'utf8');

/** The first ```ts block of the `### heading` section (before the next heading). */
function recipe(heading: string): string {
  const start = doc.indexOf(`\n### ${heading}\n`);
  if (start < 0) throw new Error(`docs/durable.md has no "### ${heading}" section`);
  const rest = doc.slice(start + heading.length + 6);
  const section = rest.slice(0, rest.search(/\n#{1,3} /) >>> 0);
  const code = /```ts\n([\s\S]*?)```/.exec(section)?.[1];
  if (code === undefined) throw new Error(`docs/durable.md: "### ${heading}" has no ts code block`);
  return code;
}

const recipes = {
  browser: recipe('A browser app'),
  'react-native': recipe('A React Native app'),
  node: recipe('A Node service'),
};

/** Just enough of the React Native packages' types for the recipe: the members it uses, as they are typed. */
const reactNativeDeclarations = `
declare module '@react-native-community/netinfo' {
  export interface NetInfoState {
    type: string;
    isConnected: boolean | null;
    isInternetReachable: boolean | null;
  }
  const NetInfo: { addEventListener(listener: (state: NetInfoState) => void): () => void };
  export default NetInfo;
}
declare module 'react-native-random-uuid';
`;

/** Type-checks `files` (virtual, as if in test/docs/) with tsconfig.json's options; the errors, one line each. */
function typeCheck(files: Record<string, string>) {
  const config = ts.readConfigFile(join(root, 'tsconfig.json'), (path) => ts.sys.readFile(path));
  const { options } = ts.parseJsonConfigFileContent(config.config, ts.sys, root);
  const compilerOptions: ts.CompilerOptions = {
    ...options,
    noEmit: true,
    // As users import them; the sources rather than dist/, which may be stale.
    paths: { failwise: [join(root, 'src/index.ts')], 'failwise/*': [join(root, 'src/*.ts')] },
  };
  const virtual = new Map(Object.entries(files).map(([name, text]) => [join(root, 'test/docs', name), text]));
  const host = ts.createCompilerHost(compilerOptions);
  const { fileExists, readFile, getSourceFile } = host;
  host.fileExists = (path) => virtual.has(path) || fileExists.call(host, path);
  host.readFile = (path) => virtual.get(path) ?? readFile.call(host, path);
  host.getSourceFile = (path, languageVersion, ...rest) => {
    const text = virtual.get(path);
    return text === undefined
      ? getSourceFile.call(host, path, languageVersion, ...rest)
      : ts.createSourceFile(path, text, languageVersion);
  };
  const program = ts.createProgram([...virtual.keys()], compilerOptions, host);
  const errors = [...virtual.keys()].flatMap((path) => {
    const file = program.getSourceFile(path)!;
    return [...program.getSyntacticDiagnostics(file), ...program.getSemanticDiagnostics(file)].map((d) => {
      const { line } = file.getLineAndCharacterOfPosition(d.start ?? 0);
      return `${basename(path)}:${line + 1}: ${ts.flattenDiagnosticMessageText(d.messageText, '\n')}`;
    });
  });
  const loaded = program.getSourceFiles().map((file) => file.fileName);
  return { errors, loaded };
}

const entries: Record<string, Record<string, unknown>> = {
  failwise: universalEntry,
  'failwise/browser': browserEntry,
  'failwise/node': nodeEntry,
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

describe('the recipes of docs/durable.md', () => {
  it('type-check as written, against the sources of failwise', () => {
    const { errors, loaded } = typeCheck({
      '__recipe-browser.ts': recipes.browser,
      '__recipe-react-native.ts': recipes['react-native'],
      '__recipe-node.ts': recipes.node,
      '__react-native.d.ts': reactNativeDeclarations,
    });
    expect(errors).toEqual([]);
    // failwise resolved to src/, not to a build of it.
    for (const entry of ['src/index.ts', 'src/browser.ts', 'src/node.ts'])
      expect(loaded).toContain(join(root, entry));
    expect(loaded.filter((path) => path.startsWith(join(root, 'dist/')))).toEqual([]);
  }, 60_000);

  it('import only names their failwise entry exports', () => {
    const expected = {
      browser: [
        'failwise createFailoverClient',
        'failwise/browser browserConnectivity',
        'failwise/browser indexedDbStore',
      ],
      'react-native': [
        'failwise createFailoverClient',
        'failwise manualConnectivity',
        'failwise memoryStore',
      ],
      node: ['failwise createFailoverClient', 'failwise/node sqliteStore'],
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

interface NodeRecipe {
  billing: FailoverClient;
  recordUsage(usage: { eventId: string; accountId: string; units: number }): Promise<string>;
}

describe('the Node recipe of docs/durable.md', () => {
  const loopback = useLoopback();
  // Under test/docs so that `failwise` resolves as in every test; `.readme-*` folders are git-ignored. Made
  // when the tests start, so that a filtered run leaves none behind.
  let dir = '';
  let file = '';
  let copies = 0;
  const clients: FailoverClient[] = [];
  const signalListeners = process.listeners('SIGTERM');
  const token = process.env.BILLING_TOKEN;

  beforeAll(() => {
    dir = mkdtempSync(join(fileURLToPath(new URL('.', import.meta.url)), '.readme-durable-'));
  });
  beforeEach(() => {
    // A file of its own for each test: one test's leftovers cannot pass for another's.
    file = join(dir, `billing-outbox-${copies}.db`);
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
  afterAll(() => {
    if (dir !== '') rmSync(dir, { recursive: true, force: true });
  });

  /** Swaps `from` for `to`, which must occur exactly once. */
  const swap = (code: string, from: string, to: string) => {
    expect(code.split(from), `the Node recipe should contain ${from} once`).toHaveLength(2);
    return code.replace(from, to);
  };

  /** Runs a fresh copy of the recipe (a new process, as far as failwise can tell) against `url`. */
  async function start(url: string): Promise<NodeRecipe> {
    let code = swap(recipes.node, `url: 'https://billing.example.com'`, `url: '${url}', allowInsecure: true`);
    code = swap(code, `'./var/billing-outbox.db'`, JSON.stringify(file));
    const path = join(dir, `recipe-${++copies}.ts`);
    writeFileSync(path, code);
    const recipe = (await import(path)) as NodeRecipe;
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

  it('stores the usage first, applies it once over real HTTP, and leaves the SQLite file empty', async () => {
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
    // In the file before it was sent (CONTRACT rule 10), without the token that `auth` added.
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
    expect(await stored()).toMatchObject([{ idempotencyKey: 'usage-evt-1', status: 'pending', attempts: 3 }]);

    // The next start, with the API back: the outbox resumes what the file holds.
    const { server, applied } = await billingApi();
    const { billing } = await start(server.url);
    await billing.outbox.flush(); // now, rather than after the entry's 40 s backoff
    await billing.close();

    expect([...applied]).toEqual([['usage-evt-1', JSON.stringify(usage)]]);
    expect(server.requests[0]?.headers).toMatchObject({ authorization: 'Bearer test-token' });
    expect(await stored()).toEqual([]);
  });
});
