/**
 * `npm run bench:pg`: how much more durable work N workers deliver than one, sharing one PostgreSQL outbox
 * through per-entry claims (issue 16, item 5: 3 workers >= 2.5 x one). It starts its own PostgreSQL server
 * (test/helpers/postgres-server.ts) and a loopback origin in this process that answers every POST after
 * 20 ms. Each round fills a fresh schema with `entries` pending entries (no orderKey), starts the workers
 * (bench/pg-worker.ts, one process each, each a failwise client with `durable.concurrency` sends at a time),
 * waits until all have opened their store, says `go` (each starts its outbox, which then sends by itself), and
 * times until the origin has seen every entry.
 * Rounds alternate 1 worker and N workers; the ratio is of the median rounds. Every round checks that each
 * entry reached the origin exactly once. Each `--concurrency` value (sends at a time per worker) is measured in
 * turn: 1 is the policy's default, where one worker waits on the origin and the store; at 4 a worker keeps its
 * CPU busier, and on a machine with few cores the workers, PostgreSQL and the origin then share them.
 *
 *   npx tsx bench/pg-throughput.ts [--entries 400] [--workers 3] [--concurrency 1,4] [--rounds 3]
 *
 * `PG_BENCH_PROF=<dir>` writes a CPU profile of each worker there (`node --cpu-prof`).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { postgresStore } from '../src/stores/postgres-store.js';
import { startPostgres } from '../test/helpers/postgres-server.js';

const { values } = parseArgs({
  options: {
    entries: { type: 'string', default: '400' },
    workers: { type: 'string', default: '3' },
    concurrency: { type: 'string', default: '1,4' },
    rounds: { type: 'string', default: '3' },
  },
});
const ENTRIES = Number(values.entries);
const WORKERS = Number(values.workers);
const CONCURRENCIES = values.concurrency.split(',').map(Number);
const ROUNDS = Number(values.rounds);
for (const n of [ENTRIES, WORKERS, ROUNDS, ...CONCURRENCIES])
  if (!Number.isInteger(n) || n < 1) throw new Error(`bench:pg: expected positive integers, got ${n}`);
const ANSWER_MS = 20;
const WORKER = fileURLToPath(new URL('./pg-worker.ts', import.meta.url));

/** The origin: 201 after 20 ms; counts each idempotency key. */
async function startOrigin() {
  const seen = new Map<string, number>();
  let waiter: (() => void) | undefined;
  let expected = Infinity;
  const server: Server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      const key = String(req.headers['idempotency-key']);
      seen.set(key, (seen.get(key) ?? 0) + 1);
      setTimeout(() => res.writeHead(201).end(), ANSWER_MS);
      if (seen.size >= expected) waiter?.();
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    /** Resolves once `count` distinct keys have arrived (counting from now). */
    expect(count: number) {
      seen.clear();
      expected = count;
      return new Promise<void>((resolve) => (waiter = resolve));
    },
    seen,
    close: () => {
      server.closeAllConnections();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

function startWorker(args: string[]) {
  const child: ChildProcess = spawn(
    process.execPath,
    [
      ...(process.env['PG_BENCH_PROF'] ? ['--cpu-prof', '--cpu-prof-dir', process.env['PG_BENCH_PROF']] : []),
      '--import',
      'tsx',
      WORKER,
      ...args,
    ],
    {
      stdio: ['pipe', 'pipe', 'inherit'],
    },
  );
  let out = '';
  const lines: string[] = [];
  let notify = () => {};
  child.stdout!.on('data', (chunk: Buffer) => {
    out += chunk.toString();
    const parts = out.split('\n');
    out = parts.pop()!;
    lines.push(...parts);
    notify();
  });
  const line = (prefix: string) =>
    new Promise<string>((resolve, reject) => {
      const check = () => {
        const found = lines.find((l) => l.startsWith(prefix));
        if (found) return resolve(found);
        if (child.exitCode !== null) reject(new Error(`worker exited ${child.exitCode} before "${prefix}"`));
      };
      notify = check;
      child.once('exit', check);
      check();
    });
  return { child, line, go: () => child.stdin!.write('go\n') };
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

const server = await startPostgres();
const origin = await startOrigin();
let schemaCount = 0;
try {
  async function round(
    workers: number,
    concurrency: number,
  ): Promise<{ ms: number; perWorker: number[]; calls: Record<string, number> }> {
    const schema = `bench_${++schemaCount}`;
    const store = postgresStore(server.url(), { schema });
    const now = Date.now();
    for (let i = 0; i < ENTRIES; i++) {
      await store.add({
        id: `e${i}`,
        createdAt: now,
        request: { method: 'POST', path: '/apply', headers: {}, body: `{"n":${i}}` },
        idempotencyKey: `${schema}-${i}`,
        attempts: 0,
        nextAttemptAt: now,
        failures: [],
        status: 'pending',
      });
    }
    await store.close();
    const started = Array.from({ length: workers }, () =>
      startWorker([origin.url, server.url(), schema, String(concurrency)]),
    );
    await Promise.all(started.map((w) => w.line('ready')));
    const all = origin.expect(ENTRIES);
    const t0 = performance.now();
    for (const w of started) w.go();
    await all;
    const ms = performance.now() - t0;
    for (const w of started) w.child.stdin!.write('stop\n');
    const done = await Promise.all(started.map((w) => w.line('done ')));
    await Promise.all(
      started.map((w) => (w.child.exitCode === null ? once(w.child, 'exit') : Promise.resolve())),
    );
    const twice = [...origin.seen.values()].filter((n) => n !== 1).length;
    if (origin.seen.size !== ENTRIES || twice > 0)
      throw new Error(`round of ${workers}: ${origin.seen.size} keys seen, ${twice} more than once`);
    const calls: Record<string, number> = {};
    for (const l of done) {
      for (const [what, n] of Object.entries(JSON.parse(l.split(' ')[2]!) as Record<string, number>))
        calls[what] = (calls[what] ?? 0) + n;
    }
    return { ms, perWorker: done.map((l) => Number(l.split(' ')[1])), calls };
  }

  const claimsOf = (calls: Record<string, number>) =>
    ['claimed', 'taken', 'stale', 'missing'].reduce((sum, what) => sum + (calls[what] ?? 0), 0);
  const rate = (ms: number) => (ENTRIES / ms) * 1000;
  const fmt = (n: number) => n.toLocaleString('en-US', { maximumFractionDigits: 0 });
  const rows: string[] = [];
  const details: string[] = [];
  for (const concurrency of CONCURRENCIES) {
    const one: number[] = [];
    const many: number[] = [];
    /** Claims asked of the store per entry, per round: 1 for one worker; above 1, the cost of sharing the queue. */
    const claimsOne: number[] = [];
    const claimsMany: number[] = [];
    const callsMany: Array<Record<string, number>> = [];
    /** Worker CPU time (user + system, all workers together) per entry delivered, per round. */
    const cpuOne: number[] = [];
    const cpuMany: number[] = [];
    const shares: number[][] = [];
    await round(1, concurrency); // warm-up: the server's caches, the origin's sockets
    for (let r = 0; r < ROUNDS; r++) {
      const alone = await round(1, concurrency);
      cpuOne.push((alone.calls['cpuMs'] ?? 0) / ENTRIES);
      one.push(alone.ms);
      claimsOne.push(claimsOf(alone.calls) / ENTRIES);
      const result = await round(WORKERS, concurrency);
      many.push(result.ms);
      claimsMany.push(claimsOf(result.calls) / ENTRIES);
      callsMany.push(result.calls);
      cpuMany.push((result.calls['cpuMs'] ?? 0) / ENTRIES);
      shares.push(result.perWorker);
      console.error(
        `concurrency ${concurrency}, round ${r + 1}: 1 worker ${one.at(-1)!.toFixed(0)} ms, ${WORKERS} workers ${many.at(-1)!.toFixed(0)} ms (sent ${result.perWorker.join(' / ')})`,
      );
    }
    const ratio = median(one) / median(many);
    rows.push(
      `| ${concurrency} | 1 | ${fmt(median(one))} ms | ${fmt(rate(median(one)))} | 1.00 x | ${median(claimsOne).toFixed(2)} | ${median(cpuOne).toFixed(2)} ms |`,
      `| ${concurrency} | ${WORKERS} | ${fmt(median(many))} ms | ${fmt(rate(median(many)))} | ${ratio.toFixed(2)} x | ${median(claimsMany).toFixed(2)} | ${median(cpuMany).toFixed(2)} ms |`,
    );
    details.push(
      `Concurrency ${concurrency}: entries each of the ${WORKERS} workers sent, per round: ${shares.map((s) => s.join(' / ')).join('; ')}. Store calls of the ${WORKERS} workers together, per round (claims by answer, then the reads that skip what others hold or finished): ${callsMany
        .map((c) =>
          ['claimed', 'taken', 'stale', 'missing', 'heldElsewhere', 'gone']
            .map((w) => `${w} ${c[w] ?? 0}`)
            .join(', '),
        )
        .join('; ')}.`,
    );
  }
  console.log(
    [
      `Measured with \`npm run bench:pg\` on ${new Date().toISOString().slice(0, 16).replace('T', ' ')} UTC: Node ${process.version}, ${os.platform()} ${os.arch()}, ${os.cpus().length} cores, load average ${os.loadavg()[0]!.toFixed(1)} at the end, PostgreSQL 15 (initdb defaults, fsync off) on loopback.`,
      `${ENTRIES} entries per round, origin answers after ${ANSWER_MS} ms, ${ROUNDS} rounds of each after a warm-up, alternating; medians.`,
      '',
      '| `durable.concurrency` per worker | workers | median time | entries / s | ratio to one worker | claims asked per entry | worker CPU per entry |',
      '| ---: | ------: | ----------: | ----------: | ------------------: | ---------------------: | -------------------: |',
      ...rows,
      '',
      ...details,
    ].join('\n'),
  );
} finally {
  await origin.close();
  await server.stop();
}
