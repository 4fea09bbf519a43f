/**
 * Before and after, side by side in one process: the success path of this checkout against another checkout
 * of failwise (an earlier commit), for a change meant to make the engine cheaper.
 *
 *   git worktree add /tmp/failwise-base <commit> && ln -s "$PWD/node_modules" /tmp/failwise-base/
 *   npm run bench:compare -- /tmp/failwise-base [rounds]
 *
 * Each checkout's `src/index.ts` is bundled with esbuild (so both run as compiled JavaScript, not through tsx)
 * into a client like `npm run bench`'s success section: one origin, `systemClock`, an in-process transport that
 * answers a 204 at once. Then, in interleaved rounds (the order alternating, so that drift falls on both alike):
 * - time: 10,000 requests awaited one after another per round; the median round, in µs per request;
 * - allocation: bytes allocated per request, from V8's sampling heap profiler with the objects later collected
 *   counted (every 256 bytes sampled), over 20,000 requests;
 * - heap in flight: bytes per request with 10,000 waiting on a transport that answers only when aborted;
 * - between waits: CPU µs per request (`process.cpuUsage`) of requests one after another, each answered after a
 *   real 2 ms timer (section 1's second table of `npm run bench`), 200 per round, the order alternating; the median
 *   round;
 * - loopback JSON: each checkout's Node entry (`src/index.node.ts`, its default fetch transport) against raw fetch, over real HTTP to the loopback
 *   server of `npm run bench` (bench/loopback-server.ts, `/json`: a 1 KB JSON body, read with `json()` and
 *   checked), 2,000 requests per round, 50 at a time, the three in each of their six orders in turn, a gc before
 *   each; each checkout's median req/s over raw fetch's, and this process's CPU per request.
 * Absolute figures move with the machine from one minute to the next; the ratio, measured side by side, less so.
 * Run this checkout against itself first (`npm run bench:compare -- . 18`): on 2026-12-03 that gave loopback JSON
 * ratios of 0.97 to 1.15 and CPU ratios of 0.91 to 0.94, the second checkout ahead more often than not, whatever
 * the order of the rounds; a change of the loopback figures smaller than that is not seen.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath, pathToFileURL } from 'node:url';

import { build } from 'esbuild';

import { WAIT_MS, collectGarbage } from './harness.js';
import { callers } from './callers.js';
import { isJsonAnswer, startLoopbackServer } from './loopback-server.js';
import { median } from './report.js';

interface BenchClient {
  request(request: { path: string }): Promise<unknown>;
  close(): Promise<void>;
}

/**
 * What a bundled checkout gives: a client whose transport is `send`, or one that answers a 204 at once; and a
 * client over its default transport (fetch) to an origin on 127.0.0.1.
 */
interface Checkout {
  name: string;
  makeClient(send?: (request: { signal: AbortSignal }) => Promise<unknown>): BenchClient;
  makeHttpClient(port: number): BenchClient;
}

const HERE = fileURLToPath(new URL('..', import.meta.url));

/** The module each checkout is bundled from: `root` is the checkout's directory. */
function clientModule(root: string): string {
  const index = JSON.stringify(path.join(root, 'src/index.ts'));
  const nodeIndex = JSON.stringify(path.join(root, 'src/index.node.ts'));
  return `import { createFailoverClient, systemClock } from ${index};
import { createFailoverClient as createNodeClient } from ${nodeIndex};
export function makeClient(send) {
  return createFailoverClient({
    origins: [{ id: 'primary', url: 'https://api.example.test' }],
    clock: systemClock,
    transport: {
      name: 'bench',
      send: send ?? (async () => ({ kind: 'response', response: new Response(null, { status: 204 }) })),
    },
    policy: { backoff: { initialMs: 0, maxMs: 0 } },
  });
}
export function makeHttpClient(port) {
  return createNodeClient({ origins: [{ id: 'primary', url: 'http://127.0.0.1:' + port, allowInsecure: true }] });
}`;
}

async function load(name: string, root: string, dir: string): Promise<Checkout> {
  const outfile = path.join(dir, `${name}.mjs`);
  const result = await build({
    stdin: { contents: clientModule(root), resolveDir: root, loader: 'js' },
    bundle: true,
    platform: 'node',
    format: 'esm',
    write: false,
    logLevel: 'error',
  });
  writeFileSync(outfile, result.outputFiles[0]!.contents);
  const module = (await import(pathToFileURL(outfile).href)) as Omit<Checkout, 'name'>;
  return { name, makeClient: module.makeClient, makeHttpClient: module.makeHttpClient };
}

/** One request, which must succeed: a checkout that fails its requests would be timing its failure path. */
async function succeed(client: BenchClient): Promise<void> {
  const outcome = (await client.request({ path: '/x' })) as { status: string; reason?: string };
  if (outcome.status !== 'succeeded')
    throw new Error(`bench:compare: a request ended ${outcome.status} ${outcome.reason ?? ''}`.trim());
}

/** µs per request of `count` requests awaited one after another. */
async function timeRequests(client: ReturnType<Checkout['makeClient']>, count: number): Promise<number> {
  const start = performance.now();
  for (let i = 0; i < count; i++) await succeed(client);
  return ((performance.now() - start) * 1_000) / count;
}

/** A send answered with a 204 after a real `WAIT_MS` timer, as a server across a network answers. */
const answerAfterWait = (): Promise<unknown> =>
  new Promise((resolve) =>
    setTimeout(() => resolve({ kind: 'response', response: new Response(null, { status: 204 }) }), WAIT_MS),
  );

/** This process's CPU µs per request of `count` requests awaited one after another (the waits fill the wall time). */
async function cpuPerRequest(client: BenchClient, count: number): Promise<number> {
  const cpu = process.cpuUsage();
  for (let i = 0; i < count; i++) await succeed(client);
  const { user, system } = process.cpuUsage(cpu);
  return (user + system) / count;
}

const REQUESTS_BETWEEN_WAITS = 200;

/** Bytes allocated per request, collected objects included (V8's sampling heap profiler). */
async function allocatedPerRequest(checkout: Checkout, count: number): Promise<number> {
  const client = checkout.makeClient();
  await timeRequests(client, 2_000);
  const session = new Session();
  session.connect();
  await session.post('HeapProfiler.enable');
  await session.post('HeapProfiler.startSampling', {
    samplingInterval: 256,
    includeObjectsCollectedByMajorGC: true,
    includeObjectsCollectedByMinorGC: true,
  });
  await timeRequests(client, count);
  const { profile } = await session.post('HeapProfiler.stopSampling');
  session.disconnect();
  await client.close();
  let total = 0;
  const walk = (node: typeof profile.head): void => {
    total += node.selfSize;
    for (const child of node.children) walk(child);
  };
  walk(profile.head);
  return total / count;
}

/** Heap per request with `count` in flight (needs --expose-gc). */
async function heapPerRequestInFlight(checkout: Checkout, count: number): Promise<number> {
  const client = checkout.makeClient(
    ({ signal }) =>
      new Promise((resolve) =>
        signal.addEventListener('abort', () =>
          resolve({ kind: 'error', phase: 'connection-lost', requestSent: 'unknown', message: 'aborted' }),
        ),
      ),
  );
  collectGarbage();
  const before = process.memoryUsage().heapUsed;
  const pending: Promise<unknown>[] = [];
  for (let i = 0; i < count; i++) pending.push(client.request({ path: '/x' }));
  await new Promise((resolve) => setTimeout(resolve, 50));
  collectGarbage();
  const after = process.memoryUsage().heapUsed;
  await client.close();
  await Promise.all(pending);
  return (after - before) / count;
}

const JSON_REQUESTS_PER_ROUND = 2_000;

/**
 * Requests per second for `/json`, `JSON_REQUESTS_PER_ROUND` of them 50 at a time, and this process's CPU time per
 * request (the server is another process); throws on a wrong answer.
 */
async function jsonRound(read: () => Promise<unknown>): Promise<{ perSecond: number; cpuMicros: number }> {
  const cpu = process.cpuUsage();
  const ms = await callers(JSON_REQUESTS_PER_ROUND, 50, async () => {
    const answer = await read();
    if (!isJsonAnswer(answer)) throw new Error(`bench:compare: /json answered ${JSON.stringify(answer)}`);
  });
  const { user, system } = process.cpuUsage(cpu);
  return {
    perSecond: (JSON_REQUESTS_PER_ROUND * 1_000) / ms,
    cpuMicros: (user + system) / JSON_REQUESTS_PER_ROUND,
  };
}

/** The six orders of raw fetch (0) and the two checkouts (1, 2), one a round: each comes after each as often. */
const ORDERS = [
  [0, 1, 2],
  [1, 2, 0],
  [2, 0, 1],
  [0, 2, 1],
  [2, 1, 0],
  [1, 0, 2],
] as const;

type JsonFigures = Pick<CompareRow, 'jsonLoopbackVsFetch' | 'jsonCpuMicrosPerRequest'>;

/**
 * Each checkout's loopback JSON throughput over raw fetch's, and its CPU per request, in rounds of the three in
 * each of their six orders (`ORDERS`).
 */
async function jsonLoopback(
  checkouts: readonly [Checkout, Checkout],
  rounds: number,
): Promise<[JsonFigures, JsonFigures]> {
  const server = await startLoopbackServer();
  const clients = checkouts.map((checkout) => checkout.makeHttpClient(server.port));
  const url = `http://127.0.0.1:${server.port}/json`;
  const readers: (() => Promise<unknown>)[] = [
    async () => (await (await fetch(url)).json()) as unknown,
    ...clients.map((client) => async () => {
      const outcome = (await client.request({ path: '/json' })) as { status: string; response?: Response };
      return outcome.response === undefined ? outcome.status : ((await outcome.response.json()) as unknown);
    }),
  ];
  try {
    for (const read of readers) await jsonRound(read); // warm-up: JIT, the connection pool
    const perSecond: number[][] = [[], [], []];
    const cpuMicros: number[][] = [[], [], []];
    for (let r = 0; r < rounds; r++) {
      for (const i of ORDERS[r % ORDERS.length]!) {
        // No garbage of the one before is left for this one to collect.
        collectGarbage();
        const round = await jsonRound(readers[i]!);
        perSecond[i]!.push(round.perSecond);
        cpuMicros[i]!.push(round.cpuMicros);
      }
    }
    const fetchMedian = median(perSecond[0]!);
    const figures = (i: 1 | 2) => ({
      jsonLoopbackVsFetch: median(perSecond[i]!) / fetchMedian,
      jsonCpuMicrosPerRequest: median(cpuMicros[i]!),
    });
    return [figures(1), figures(2)];
  } finally {
    for (const client of clients) await client.close();
    await server.close();
  }
}

/** One checkout's figures. */
export interface CompareRow {
  checkout: 'base' | 'this';
  /** µs per request, the median round. */
  microsPerRequest: number;
  /** CPU µs per request, each answered after a real wait: the median round. */
  cpuMicrosBetweenWaits: number;
  bytesAllocatedPerRequest: number;
  heapPerRequestInFlight: number;
  /** Loopback JSON requests per second over raw fetch's (median rounds). */
  jsonLoopbackVsFetch: number;
  /** This process's CPU time per loopback JSON request, µs (median round): steadier than throughput. */
  jsonCpuMicrosPerRequest: number;
}

/** Measures the checkout at `base` and this one side by side (node must run with --expose-gc). */
export async function compare(base: string, rounds: number): Promise<[CompareRow, CompareRow]> {
  if (!Number.isInteger(rounds) || rounds < 2)
    throw new Error(`rounds: expected an integer >= 2, got ${rounds}`);
  if ((globalThis as { gc?: unknown }).gc === undefined) throw new Error('run node with --expose-gc');
  const dir = mkdtempSync(path.join(tmpdir(), 'failwise-compare-'));
  try {
    const checkouts = [await load('base', path.resolve(base), dir), await load('this', HERE, dir)] as const;
    const clients = checkouts.map((checkout) => checkout.makeClient());
    for (const client of clients) await timeRequests(client, 3_000);
    const times: number[][] = [[], []];
    for (let r = 0; r < rounds; r++) {
      for (const i of r % 2 === 0 ? [0, 1] : [1, 0]) times[i]!.push(await timeRequests(clients[i]!, 10_000));
    }
    for (const client of clients) await client.close();
    const waited = checkouts.map((checkout) => checkout.makeClient(answerAfterWait));
    for (const client of waited) await cpuPerRequest(client, REQUESTS_BETWEEN_WAITS / 2);
    const betweenWaits: number[][] = [[], []];
    for (let r = 0; r < rounds; r++) {
      for (const i of r % 2 === 0 ? [1, 0] : [0, 1])
        betweenWaits[i]!.push(await cpuPerRequest(waited[i]!, REQUESTS_BETWEEN_WAITS));
    }
    for (const client of waited) await client.close();
    const row = async (
      i: 0 | 1,
    ): Promise<Omit<CompareRow, 'jsonLoopbackVsFetch' | 'jsonCpuMicrosPerRequest'>> => ({
      checkout: i === 0 ? 'base' : 'this',
      microsPerRequest: median(times[i]!),
      cpuMicrosBetweenWaits: median(betweenWaits[i]!),
      bytesAllocatedPerRequest: await allocatedPerRequest(checkouts[i], 20_000),
      heapPerRequestInFlight: await heapPerRequestInFlight(checkouts[i], 10_000),
    });
    const rows = [await row(0), await row(1)] as const;
    // Last: its sockets and the server's child process would be in the heap measurements.
    const [baseJson, thisJson] = await jsonLoopback(checkouts, rounds);
    return [
      { ...rows[0], ...baseJson },
      { ...rows[1], ...thisJson },
    ];
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const [base, rounds] = process.argv.slice(2);
  if (base === undefined)
    throw new Error('usage: npm run bench:compare -- <base checkout directory> [rounds]');
  const [before, after] = await compare(base, Number(rounds ?? 16));
  console.table(
    [before, after].map((row) => ({
      checkout: row.checkout,
      'µs per request (median round)': Number(row.microsPerRequest.toFixed(2)),
      'CPU µs per request between waits': Number(row.cpuMicrosBetweenWaits.toFixed(1)),
      'bytes allocated per request': Math.round(row.bytesAllocatedPerRequest),
      'heap per request in flight': Math.round(row.heapPerRequestInFlight),
      'loopback JSON ÷ raw fetch': Number(row.jsonLoopbackVsFetch.toFixed(3)),
      'loopback JSON CPU µs per request': Math.round(row.jsonCpuMicrosPerRequest),
    })),
  );
  const ratio = (key: Exclude<keyof CompareRow, 'checkout'>) => (after[key] / before[key]).toFixed(3);
  console.log(
    `this ÷ base: time ${ratio('microsPerRequest')}, between waits ${ratio('cpuMicrosBetweenWaits')}, allocation ${ratio('bytesAllocatedPerRequest')}, ` +
      `heap in flight ${ratio('heapPerRequestInFlight')}, loopback JSON ${ratio('jsonLoopbackVsFetch')}, its CPU ${ratio('jsonCpuMicrosPerRequest')}`,
  );
}
