/**
 * Crash trials of many senders on one PostgreSQL queue, shared by test/stores/postgres-crash.test.ts
 * and scripts/crash-soak-pg.ts. No vitest here: the soak script runs it with plain tsx.
 *
 * A chain is one schema and one loopback origin that applies each write at most once per Idempotency-Key and
 * injects faults (test/helpers/crash-trials.ts). Each round starts three workers (test/fixtures/pg-worker.ts,
 * bundled once with esbuild, run with plain `node`) on that schema: each submits its payloads as durable
 * writes with an orderKey, then sends until the queue is empty, sharing it with the others through per-entry
 * claims. The parent SIGKILLs some of them at random points (a time after start, a `submitting` line, an
 * `accepted` line); the others drain the queue, the dead ones' entries included, and exit by themselves. The
 * next round gives each slot the payloads it never began to submit, plus new ones. A last round kills nobody.
 *
 * Checked at the end of a chain: every payload a worker printed `accepted` for was applied exactly once, no
 * payload under two keys (the origin counts that), the queue is empty, and per orderKey the payloads were
 * applied in the order they were submitted (a payload is `<key>.<n>`; each key belongs to one slot, so its
 * submission order is n's).
 */
import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { seededRandom } from '../../src/drill/seeded-random.js';
import { postgresStore } from '../../src/stores/postgres-store.js';
import {
  DEFAULT_FAULT_RATES,
  drawFor,
  hash,
  startDedupingOrigin,
  type Fault,
  type FaultRates,
} from './crash-trials.js';

export const PG_WORKER_FIXTURE = fileURLToPath(new URL('../fixtures/pg-worker.ts', import.meta.url));

/** Bundles the worker into one .mjs (pg included: it is plain JavaScript), so each start is a plain `node`. */
async function bundleWorker(dir: string): Promise<string> {
  const outfile = join(dir, 'pg-worker.mjs');
  await build({
    entryPoints: [PG_WORKER_FIXTURE],
    outfile,
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    logLevel: 'silent',
    // pg's optional native binding and Cloudflare socket are never used here.
    external: ['pg-native', 'cloudflare:sockets', 'pg-cloudflare'],
    // pg is CommonJS: its require() calls of Node's modules need a require in an ES module bundle.
    banner: {
      js: "import { createRequire } from 'node:module'; const require = createRequire(import.meta.url);",
    },
  });
  return outfile;
}

type KillPlan =
  | { mode: 'timer'; afterMs: number }
  | { mode: 'submitting'; nth: number; delayMs: number }
  | { mode: 'accepted'; nth: number }
  | { mode: 'none' };

function planKill(random: () => number, payloads: number): KillPlan {
  const pick = random();
  if (pick < 0.3) return { mode: 'none' };
  if (pick < 0.7 || payloads === 0) return { mode: 'timer', afterMs: Math.floor(50 + random() * 900) };
  if (pick < 0.85)
    return {
      mode: 'submitting',
      nth: 1 + Math.floor(random() * payloads),
      delayMs: Math.floor(random() * 4),
    };
  return { mode: 'accepted', nth: 1 + Math.floor(random() * payloads) };
}

interface WorkerRun {
  killed: boolean;
  overran: boolean;
  code: number | null;
  lines: string[];
  stderr: string;
}

/** Runs one worker to its end: it exits by itself, is killed by `plan`, or is killed for overrunning. */
function runWorker(bundle: string, args: string[], plan: KillPlan, limitMs: number): Promise<WorkerRun> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [bundle, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    const lines: string[] = [];
    let partial = '';
    let stderr = '';
    let killed = false;
    let overran = false;
    let exited = false;
    const timers: NodeJS.Timeout[] = [];
    const kill = () => {
      if (!exited && !killed) killed = child.kill('SIGKILL');
    };
    const later = (ms: number, fn: () => void) => timers.push(setTimeout(fn, ms));
    if (plan.mode === 'timer') later(plan.afterMs, kill);
    later(limitMs, () => {
      if (exited) return;
      overran = true;
      kill();
    });
    let submitting = 0;
    let accepted = 0;
    child.stdout.on('data', (chunk: Buffer) => {
      partial += chunk.toString('utf8');
      const parts = partial.split('\n');
      partial = parts.pop()!;
      for (const line of parts) {
        lines.push(line);
        if (plan.mode === 'submitting' && line.startsWith('submitting ') && ++submitting === plan.nth) {
          if (plan.delayMs === 0) kill();
          else later(plan.delayMs, kill);
        }
        if (plan.mode === 'accepted' && line.startsWith('accepted ') && ++accepted === plan.nth) kill();
      }
    });
    child.stderr.on('data', (chunk: Buffer) => (stderr = (stderr + chunk.toString('utf8')).slice(-4000)));
    child.on('exit', () => (exited = true));
    child.on('close', (code, signal) => {
      exited = true;
      for (const timer of timers) clearTimeout(timer);
      if (partial !== '') lines.push(partial);
      resolve({ killed: killed && signal === 'SIGKILL', overran, code, lines, stderr });
    });
  });
}

export interface PgCrashOptions {
  /** Fixes every kill plan and every request's fault. */
  seed: number;
  /** SIGKILLs to deliver in all, over every chain. */
  trials: number;
  /** A PostgreSQL connection string; each chain takes a schema of its own. */
  connection: string;
  /** Chains (schemas and origins) to spread the trials over. @default ceil(trials / 20) */
  chains?: number;
  /** Workers per round, on one schema. @default 3 */
  workers?: number;
  /** New payloads per worker per round. @default 4 */
  batch?: number;
  /** A worker running longer than this is killed, and that is a violation. @default 30000 */
  childLimitMs?: number;
  faultRates?: FaultRates;
  log?: (line: string) => void;
}

export interface PgCrashReport {
  seed: number;
  chains: number;
  rounds: number;
  /** Workers started. */
  runs: number;
  /** SIGKILLs that hit a live worker. */
  kills: number;
  submitted: number;
  accepted: number;
  /** What the `client.request` calls of accepted payloads resolved with, by status. */
  acceptedAs: Record<string, number>;
  /** Payloads the origin applied (each once when all is well). */
  applied: number;
  requests: number;
  /** POSTs answered from a stored answer: resends made safe by their key. */
  replays: number;
  faults: Record<Fault, number>;
  violations: string[];
  durationMs: number;
}

/** One schema and origin: rounds until `kills` SIGKILLs, then a round that kills nobody; then the checks. */
async function runChain(
  index: number,
  kills: number,
  options: Required<Omit<PgCrashOptions, 'log' | 'chains' | 'trials'>> & {
    bundle: string;
    log: (line: string) => void;
  },
  report: PgCrashReport,
): Promise<void> {
  const { seed, workers, batch, childLimitMs, faultRates, connection, bundle } = options;
  const random = seededRandom(hash(`${seed}:pg-chain:${index}`));
  const schema = `crash_${seed % 100_000}_${index}_${Date.now() % 100_000}`;
  const name = `chain ${index}`;
  const fail = (message: string) => report.violations.push(`${name}: ${message}`);
  const origin = await startDedupingOrigin((payload, n) => {
    let draw = drawFor(seed, payload, n);
    for (const [fault, rate] of [
      ['unavailable', faultRates.unavailable],
      ['drop-before-apply', faultRates.dropBeforeApply],
      ['drop-after-apply', faultRates.dropAfterApply],
      ['slow', faultRates.slow],
    ] as const) {
      if (draw < rate) return fault;
      draw -= rate;
    }
    return 'none';
  });
  /** Payloads in the order the origin first applied them. */
  const appliedOrder: string[] = [];
  origin.onRequest = (request) => {
    if (request.result === 'applied' && request.payload !== undefined) appliedOrder.push(request.payload);
  };
  const accepted = new Set<string>();
  const refused = new Set<string>();
  const submitted = new Set<string>();
  /** Per slot: payloads not yet begun, and the next number of each of its keys. */
  const waiting: string[][] = Array.from({ length: workers }, () => []);
  const nextOf = new Map<string, number>();
  const newPayload = (slot: number) => {
    const key = `s${slot}k${Math.floor(random() * 2)}`;
    const n = nextOf.get(key) ?? 0;
    nextOf.set(key, n + 1);
    return `${key}.${n}`;
  };
  let killed = 0;
  try {
    for (let round = 0; ; round++) {
      const last = killed >= kills;
      const runs = Array.from({ length: workers }, (_, slot) => {
        const payloads = [
          ...waiting[slot]!,
          ...Array.from({ length: last ? 0 : batch }, () => newPayload(slot)),
        ];
        const plan = last ? ({ mode: 'none' } as const) : planKill(random, payloads.length);
        report.runs++;
        return runWorker(bundle, [origin.url, connection, schema, ...payloads], plan, childLimitMs).then(
          (run) => ({ run, payloads, plan }),
        );
      });
      report.rounds++;
      for (const [slot, { run, payloads, plan }] of (await Promise.all(runs)).entries()) {
        const begun = new Set<string>();
        for (const line of run.lines) {
          const [word, payload] = line.split(' ');
          if (word === 'submitting' && payload) {
            begun.add(payload);
            submitted.add(payload);
          }
          if (word === 'accepted' && payload) {
            const status = line.split(' ')[2] ?? '?';
            // `failed`: the store did not take the entry within the request's budget: nothing was stored, so it
            // must never be applied (an entry written late is removed unsent).
            if (status === 'failed') refused.add(payload);
            else accepted.add(payload);
            report.acceptedAs[status] = (report.acceptedAs[status] ?? 0) + 1;
          }
          if (word === 'dead') fail(`round ${round} worker ${slot} dead-lettered: ${line}`);
        }
        waiting[slot] = payloads.filter((payload) => !begun.has(payload));
        if (run.killed && !run.overran) killed++;
        if (run.overran) fail(`round ${round} worker ${slot} ran past ${childLimitMs} ms: ${run.stderr}`);
        else if (!run.killed && (run.code !== 0 || !run.lines.includes('drained')))
          fail(
            `round ${round} worker ${slot} (plan ${plan.mode}) exited ${run.code} without draining: ${run.stderr}`,
          );
      }
      if (last) break;
    }
    report.kills += killed;

    // The checks.
    const store = postgresStore(connection, { schema });
    try {
      const left = await store.list();
      if (left.length > 0)
        fail(`${left.length} entries left in the queue: ${left.map((e) => e.id).join(', ')}`);
    } finally {
      await store.close();
    }
    for (const payload of accepted) {
      const keys = origin.applied.get(payload) ?? [];
      if (keys.length !== 1) fail(`accepted payload ${payload} applied ${keys.length} times`);
    }
    for (const payload of origin.applied.keys()) {
      if (!submitted.has(payload)) fail(`payload ${payload} applied but never submitted`);
      if (refused.has(payload))
        fail(`payload ${payload} applied after its request ended failed (not stored)`);
    }
    const lastOfKey = new Map<string, number>();
    for (const payload of appliedOrder) {
      const [key, n] = payload.split('.') as [string, string];
      const before = lastOfKey.get(key) ?? -1;
      if (Number(n) <= before) fail(`order of ${key}: ${payload} applied after ${key}.${before}`);
      lastOfKey.set(key, Number(n));
    }
    for (const violation of origin.violations) fail(violation);
    report.submitted += submitted.size;
    report.accepted += accepted.size;
    report.applied += origin.applied.size;
    report.requests += origin.requests;
    report.replays += origin.replays;
    for (const [fault, count] of Object.entries(origin.faults)) report.faults[fault as Fault] += count;
    options.log(
      `${name} done: ${report.rounds} rounds so far, ${killed} kills, ${accepted.size} accepted, ${origin.applied.size} applied, ${origin.replays} replays`,
    );
  } finally {
    await origin.close();
  }
}

/** Runs the trials chain after chain (each chain already runs three workers at once). */
export async function runPgCrashTrials(options: PgCrashOptions): Promise<PgCrashReport> {
  const started = performance.now();
  const chains = options.chains ?? Math.max(1, Math.ceil(options.trials / 20));
  const report: PgCrashReport = {
    seed: options.seed,
    chains,
    rounds: 0,
    runs: 0,
    kills: 0,
    submitted: 0,
    accepted: 0,
    acceptedAs: {},
    applied: 0,
    requests: 0,
    replays: 0,
    faults: { none: 0, unavailable: 0, 'drop-before-apply': 0, 'drop-after-apply': 0, slow: 0 },
    violations: [],
    durationMs: 0,
  };
  const dir = await mkdtemp(join(tmpdir(), 'failwise-pg-crash-'));
  try {
    const bundle = await bundleWorker(dir);
    for (let index = 0; index < chains; index++) {
      const kills = Math.ceil((options.trials - report.kills) / (chains - index));
      await runChain(
        index,
        kills,
        {
          seed: options.seed,
          connection: options.connection,
          workers: options.workers ?? 3,
          batch: options.batch ?? 4,
          childLimitMs: options.childLimitMs ?? 30_000,
          faultRates: options.faultRates ?? DEFAULT_FAULT_RATES,
          bundle,
          log: options.log ?? (() => undefined),
        },
        report,
      );
    }
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
  report.durationMs = performance.now() - started;
  return report;
}

export function formatPgReport(report: PgCrashReport): string {
  return [
    `seed ${report.seed}: ${report.kills} SIGKILLs in ${report.rounds} rounds of 3 workers (${report.runs} runs, ${report.chains} schemas), ${(report.durationMs / 1000).toFixed(1)} s`,
    `payloads: ${report.submitted} submitted, ${report.accepted} accepted (${Object.entries(report.acceptedAs)
      .map(([status, count]) => `${count} ${status}`)
      .join(
        ', ',
      )}), ${report.applied} applied; ${report.requests} POSTs, ${report.replays} answered from a stored answer`,
    `faults injected: ${Object.entries(report.faults)
      .map(([fault, count]) => `${fault} ${count}`)
      .join(', ')}`,
    report.violations.length === 0
      ? '0 entries lost, 0 writes applied twice, order per key kept'
      : `${report.violations.length} violations:\n  ${report.violations.join('\n  ')}`,
  ].join('\n');
}
