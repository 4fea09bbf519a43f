/**
 * Crash trials of durable work (rule 10), shared by test/runtime/durable-crash.test.ts and
 * scripts/crash-soak.ts. No vitest here: the soak script runs it with plain tsx.
 *
 * A chain is one SQLite file and one loopback origin. The child (test/fixtures/durable-writer.ts, bundled
 * once with esbuild and run with plain `node`) submits durable POST /apply writes and flushes its outbox; the
 * parent SIGKILLs it at a random point, then starts it again on the same file with the payloads it never began
 * to submit plus new ones, over and over; a last run is left to drain the file and exit by itself. The origin
 * applies each write at most once per Idempotency-Key (a key it saw gets the answer it stored) and injects
 * faults (503s, connections dropped before or after applying, answers slower than the attempt timeout), so
 * resends and "applied, outcome unknown" happen. It never dedupes by payload: a payload applied under a
 * second key is a double apply. At the end of a chain every payload the child printed `accepted` for must
 * have been applied exactly once, and the file must be empty.
 *
 * A seed fixes each chain's plan (how many payloads each run adds, where each kill falls) and each request's
 * fault (drawn from the seed, the payload and how many requests of that payload came before); timing still
 * varies between runs, so a seed replays the same plan, not the same interleaving.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import * as http from 'node:http';
import { createRequire } from 'node:module';
import type { Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { build } from 'esbuild';
import type { OutboxEntry } from '../../src/stores/outbox-store.js';
import { sqliteStore } from '../../src/stores/sqlite-store.js';
import { seededRandom } from '../../src/drill/seeded-random.js';

export const DEFAULT_FIXTURE = fileURLToPath(new URL('../fixtures/durable-writer.ts', import.meta.url));

// ---------------------------------------------------------------------------------------------------------
// Seeded randomness

/** FNV-1a of a string: derives independent seeds from the run's seed and a name. */
export function hash(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193);
  return h >>> 0;
}

/** One draw from a PRNG seeded by `parts`: the same parts always give the same number. */
export const drawFor = (...parts: Array<string | number>) => seededRandom(hash(parts.join(':')))();

const intBetween = (random: () => number, min: number, max: number) =>
  min + Math.floor(random() * (max - min + 1));

// ---------------------------------------------------------------------------------------------------------
// The origin: applies each write at most once per Idempotency-Key, and counts double applies

export type Fault = 'none' | 'unavailable' | 'drop-before-apply' | 'drop-after-apply' | 'slow';

/** How often each fault happens; the rest of the requests are answered at once. */
export interface FaultRates {
  unavailable: number;
  dropBeforeApply: number;
  dropAfterApply: number;
  slow: number;
}

export const DEFAULT_FAULT_RATES: FaultRates = {
  unavailable: 0.1,
  dropBeforeApply: 0.05,
  dropAfterApply: 0.08,
  slow: 0.05,
};

/** Longer than the fixture's `timeouts.attemptMs` (300): the attempt times out after the write was applied. */
const SLOW_ANSWER_MS = 450;

export interface OriginRequest {
  key: string | undefined;
  payload: string | undefined;
  fault: Fault;
  /** `applied`: a new key and payload; `replayed`: a key seen before, answered from what was stored. */
  result: 'applied' | 'replayed' | 'refused' | 'dropped';
}

export interface DedupingOrigin {
  url: string;
  /** Payload -> the keys it was applied under, in order (more than one is a double apply). */
  readonly applied: ReadonlyMap<string, readonly string[]>;
  readonly requests: number;
  readonly replays: number;
  readonly faults: Readonly<Record<Fault, number>>;
  /** Every double apply and malformed request, as a message. */
  readonly violations: readonly string[];
  /** Called after each POST /apply is handled (applied or not), before its answer is written. */
  onRequest: ((request: OriginRequest) => void) | undefined;
  close(): Promise<void>;
}

/**
 * A loopback origin for POST /apply with body `{"payload": string}`. A key seen before gets the answer
 * stored for it (201) and applies nothing; a new key applies its payload, and a payload already applied
 * under another key is counted as a double apply (never deduplicated away). `faultOf(payload, n)` chooses
 * the fault of the n-th request (from 0) that carries `payload`.
 */
export async function startDedupingOrigin(
  faultOf: (payload: string, n: number) => Fault = () => 'none',
): Promise<DedupingOrigin> {
  const applied = new Map<string, string[]>();
  /** Idempotency key -> the answer stored for it. */
  const answers = new Map<string, string>();
  const seenPerPayload = new Map<string, number>();
  const faults: Record<Fault, number> = {
    none: 0,
    unavailable: 0,
    'drop-before-apply': 0,
    'drop-after-apply': 0,
    slow: 0,
  };
  const violations: string[] = [];
  const sockets = new Set<Socket>();
  const timers = new Set<NodeJS.Timeout>();
  let requests = 0;
  let replays = 0;

  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('error', () => undefined);
    res.on('error', () => undefined);
    req.on('end', () => {
      if (req.method !== 'POST' || req.url !== '/apply') {
        violations.push(`unexpected request ${req.method} ${req.url}`);
        res.writeHead(404).end();
        return;
      }
      requests++;
      const header = req.headers['idempotency-key'];
      const key = typeof header === 'string' && header !== '' ? header : undefined;
      let payload: string | undefined;
      try {
        const parsed = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { payload?: unknown };
        if (typeof parsed.payload === 'string') payload = parsed.payload;
      } catch {
        // reported below
      }
      if (key === undefined || payload === undefined) {
        violations.push(
          `a POST /apply without an Idempotency-Key or a payload (key ${key}, payload ${payload})`,
        );
        res.writeHead(400).end();
        return;
      }
      const n = seenPerPayload.get(payload) ?? 0;
      seenPerPayload.set(payload, n + 1);
      const fault = faultOf(payload, n);
      faults[fault]++;
      const request: OriginRequest = { key, payload, fault, result: 'dropped' };
      if (fault === 'drop-before-apply') {
        request.result = 'dropped';
        onRequest(request);
        req.socket.destroy();
        return;
      }
      if (fault === 'unavailable') {
        request.result = 'refused';
        onRequest(request);
        res.writeHead(503, { 'content-type': 'text/plain' }).end('unavailable');
        return;
      }
      let answer = answers.get(key);
      if (answer === undefined) {
        const keys = applied.get(payload) ?? [];
        if (keys.length > 0) {
          violations.push(
            `double apply: payload ${payload} applied under key ${key} after key(s) ${keys.join(', ')}`,
          );
        }
        applied.set(payload, [...keys, key]);
        answer = JSON.stringify({ applied: payload });
        answers.set(key, answer);
        request.result = 'applied';
      } else {
        replays++;
        request.result = 'replayed';
      }
      onRequest(request);
      if (fault === 'drop-after-apply') {
        req.socket.destroy();
        return;
      }
      const body = answer;
      const send = () => {
        if (!res.destroyed) res.writeHead(201, { 'content-type': 'application/json' }).end(body);
      };
      if (fault === 'slow') {
        const timer = setTimeout(() => {
          timers.delete(timer);
          send();
        }, SLOW_ANSWER_MS);
        timers.add(timer);
      } else {
        send();
      }
    });
  });
  server.on('connection', (socket: Socket) => {
    sockets.add(socket);
    socket.on('error', () => undefined);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('crash-trials: no TCP address');

  const origin: DedupingOrigin = {
    url: `http://127.0.0.1:${address.port}`,
    applied,
    get requests() {
      return requests;
    },
    get replays() {
      return replays;
    },
    faults,
    violations,
    onRequest: undefined,
    close: () => {
      for (const timer of timers) clearTimeout(timer);
      timers.clear();
      for (const socket of sockets) socket.destroy();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
  function onRequest(request: OriginRequest) {
    origin.onRequest?.(request);
  }
  return origin;
}

// ---------------------------------------------------------------------------------------------------------
// The child

/**
 * Bundles the fixture into one .mjs file in `dir` (a few hundred ms, once), so that each child starts with
 * plain `node` instead of compiling TypeScript with tsx. better-sqlite3 stays external (a native addon),
 * imported by its absolute file URL, so the bundle finds it from a temp directory outside the repository.
 */
export async function bundleFixture(fixture: string, dir: string): Promise<string> {
  const outfile = join(dir, 'durable-writer.mjs');
  const betterSqlite3 = pathToFileURL(createRequire(import.meta.url).resolve('better-sqlite3')).href;
  await build({
    entryPoints: [fixture],
    outfile,
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    logLevel: 'silent',
    plugins: [
      {
        name: 'better-sqlite3-by-path',
        setup(builder) {
          builder.onResolve({ filter: /^better-sqlite3$/ }, () => ({ path: betterSqlite3, external: true }));
        },
      },
    ],
  });
  return outfile;
}

/** Where the parent kills a run. */
export type KillPlan =
  | { mode: 'timer'; afterMs: number }
  /** When the origin handles the n-th POST of the run: before its answer is written, or `delayMs` after. */
  | { mode: 'apply'; nth: number; delayMs: number | 'before-answer' }
  /** When the child prints its n-th `submitting` line (the entry is being written), `delayMs` after. */
  | { mode: 'submitting'; nth: number; delayMs: number }
  /** When the child prints its n-th `accepted` line (the entry's commit may not be written yet). */
  | { mode: 'accepted'; nth: number }
  | { mode: 'none' };

interface RunResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  /** The parent's SIGKILL reached a live child. */
  killed: boolean;
  /** The child outlived `limitMs` and was killed for it. */
  overran: boolean;
  lines: string[];
  stderr: string;
  durationMs: number;
}

/**
 * Runs one child to its end: it exits by itself, is killed by `plan`, or is killed for running longer than
 * `limitMs`. `onLine` sees each stdout line as it comes.
 */
function runChild(
  bundle: string,
  args: string[],
  origin: DedupingOrigin,
  plan: KillPlan,
  limitMs: number,
  onLine: (line: string) => void,
): Promise<RunResult> {
  return new Promise((resolve) => {
    const startedAt = performance.now();
    const child: ChildProcess = spawn(process.execPath, [bundle, ...args], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const lines: string[] = [];
    let partial = '';
    let stderr = '';
    let killed = false;
    let overran = false;
    let exited = false;
    const timers: NodeJS.Timeout[] = [];
    const kill = () => {
      if (exited || killed) return;
      killed = child.kill('SIGKILL');
    };
    const later = (ms: number, fn: () => void) => timers.push(setTimeout(fn, ms));

    let posts = 0;
    let submitting = 0;
    let accepted = 0;
    if (plan.mode === 'timer') later(plan.afterMs, kill);
    if (plan.mode === 'apply') {
      origin.onRequest = () => {
        if (++posts !== plan.nth) return;
        if (plan.delayMs === 'before-answer') kill();
        else later(plan.delayMs, kill);
      };
    }
    later(limitMs, () => {
      if (exited) return;
      overran = true;
      kill();
    });

    child.stdout!.on('data', (chunk: Buffer) => {
      partial += chunk.toString('utf8');
      const parts = partial.split('\n');
      partial = parts.pop()!;
      for (const line of parts) {
        lines.push(line);
        onLine(line);
        if (plan.mode === 'submitting' && line.startsWith('submitting ') && ++submitting === plan.nth) {
          if (plan.delayMs === 0) kill();
          else later(plan.delayMs, kill);
        }
        if (plan.mode === 'accepted' && line.startsWith('accepted ') && ++accepted === plan.nth) kill();
      }
    });
    child.stderr!.on('data', (chunk: Buffer) => {
      stderr = (stderr + chunk.toString('utf8')).slice(-4000);
    });
    child.on('exit', () => (exited = true));
    child.on('close', (code, signal) => {
      exited = true;
      for (const timer of timers) clearTimeout(timer);
      origin.onRequest = undefined;
      if (partial !== '') {
        lines.push(partial);
        onLine(partial);
      }
      resolve({
        code,
        signal,
        killed: killed && signal === 'SIGKILL',
        overran,
        lines,
        stderr,
        durationMs: performance.now() - startedAt,
      });
    });
  });
}

/** The payload of a stored entry (its body is `{"payload":"..."}`). */
function payloadOf(entry: OutboxEntry): string {
  try {
    return String((JSON.parse(String(entry.request.body)) as { payload?: unknown }).payload);
  } catch {
    return `<unreadable body ${String(entry.request.body)}>`;
  }
}

/**
 * After a SIGKILL: the entries the file holds (the next run must resume them), read through the store's own
 * API. Nothing is done about the lease the dead child held: it died with the child (sqliteStore's lock), so the
 * next child takes it at once; were it to wait out the 30 s time to live, it would overrun `childLimitMs`.
 */
async function afterKill(path: string): Promise<OutboxEntry[]> {
  const store = sqliteStore(path);
  try {
    return await store.list();
  } finally {
    await store.close();
  }
}

// ---------------------------------------------------------------------------------------------------------
// Trials

export interface CrashTrialOptions {
  /** Fixes the plan of every chain and the fault of every request. */
  seed: number;
  /** SIGKILLs to deliver in all (a run that ends before its kill point does not count: another one is run). */
  trials: number;
  /** SQLite files (and origins), each with its own chain of runs. @default ceil(trials / 10) */
  chains?: number;
  /** Chains run at the same time. @default 2 */
  parallel?: number;
  /** A child running longer than this is killed, and that is a violation. @default 20000 */
  childLimitMs?: number;
  /** The child to run. @default test/fixtures/durable-writer.ts */
  fixture?: string;
  faultRates?: FaultRates;
  /** Progress lines. */
  log?: (line: string) => void;
}

export interface CrashReport {
  seed: number;
  chains: number;
  /** Children started. */
  runs: number;
  /** SIGKILLs that hit a live child (>= trials when nothing went wrong). */
  kills: number;
  killsByMode: Record<Exclude<KillPlan['mode'], 'none'>, number>;
  /** Runs that drained and exited before their kill point. */
  finishedBeforeKill: number;
  /** Payloads the child began to submit (`submitting`). */
  submitted: number;
  /** Payloads whose `client.request` resolved (`accepted`). */
  accepted: number;
  /** The outcomes those `client.request` calls resolved with, by status. */
  acceptedAs: Record<string, number>;
  /** Entries a killed child left in the file, summed over the kills: work the next run had to resume. */
  leftByKills: number;
  /** Payloads the origin applied (each once, when all is well). */
  applied: number;
  /** POSTs the origin saw. */
  requests: number;
  /** POSTs answered from a stored answer: resends made safe by their key. */
  replays: number;
  /** Payloads applied under more than one key: must be 0. */
  doubleApplies: number;
  faults: Record<Fault, number>;
  /** What went wrong, one message each; empty when every check passed. */
  violations: string[];
  durationMs: number;
}

/** What trials count: a `CrashReport` without its heading. */
type Tally = Omit<CrashReport, 'seed' | 'chains' | 'durationMs'>;

const emptyTally = (): Tally => ({
  runs: 0,
  kills: 0,
  killsByMode: { timer: 0, apply: 0, submitting: 0, accepted: 0 },
  finishedBeforeKill: 0,
  submitted: 0,
  accepted: 0,
  acceptedAs: {},
  leftByKills: 0,
  applied: 0,
  requests: 0,
  replays: 0,
  doubleApplies: 0,
  faults: { none: 0, unavailable: 0, 'drop-before-apply': 0, 'drop-after-apply': 0, slow: 0 },
  violations: [],
});

/** Adds `from`'s counts to `into`'s. */
function addTally(into: Tally, from: Tally): void {
  const sum = <K extends string>(a: Record<K, number>, b: Record<K, number>) => {
    for (const key of Object.keys(b) as K[]) a[key] = (a[key] ?? 0) + b[key];
  };
  for (const key of [
    'runs',
    'kills',
    'finishedBeforeKill',
    'submitted',
    'accepted',
    'leftByKills',
    'applied',
    'requests',
    'replays',
    'doubleApplies',
  ] as const)
    into[key] += from[key];
  sum(into.killsByMode, from.killsByMode);
  sum(into.acceptedAs, from.acceptedAs);
  sum(into.faults, from.faults);
  into.violations.push(...from.violations);
}

/** Chooses where a run is killed: a time after start, or an event of the run. */
function planKill(random: () => number, payloads: number, estimateMs: number): KillPlan {
  const pick = random();
  if (pick < 0.3) return { mode: 'timer', afterMs: Math.floor(random() * estimateMs) };
  if (pick < 0.65) {
    const delay = random();
    return {
      mode: 'apply',
      nth: intBetween(random, 1, payloads + 2),
      delayMs: delay < 0.4 ? 'before-answer' : Math.floor(delay * 10),
    };
  }
  if (pick < 0.85)
    return { mode: 'submitting', nth: intBetween(random, 1, payloads), delayMs: intBetween(random, 0, 3) };
  return { mode: 'accepted', nth: intBetween(random, 1, payloads) };
}

const describePlan = (plan: KillPlan) =>
  plan.mode === 'timer'
    ? `timer ${plan.afterMs} ms`
    : plan.mode === 'apply'
      ? `at POST #${plan.nth}, ${plan.delayMs === 'before-answer' ? 'before its answer' : `${plan.delayMs} ms after`}`
      : plan.mode === 'submitting'
        ? `at submitting #${plan.nth} + ${plan.delayMs} ms`
        : plan.mode === 'accepted'
          ? `at accepted #${plan.nth}`
          : 'none';

interface ChainOptions {
  seed: number;
  childLimitMs: number;
  faultRates: FaultRates;
  /** The bundled fixture. */
  bundle: string;
  /** Where the chain's SQLite file goes. */
  dir: string;
  log: (line: string) => void;
}

/** One SQLite file and origin: `kills` killed runs, then a run that must drain; then the checks. */
async function runChain(index: number, kills: number, options: ChainOptions): Promise<Tally> {
  const { seed, childLimitMs, faultRates, log } = options;
  const random = seededRandom(hash(`${seed}:chain:${index}`));
  const name = `chain ${index}`;
  const path = join(options.dir, `chain-${index}.db`);
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
  const result = emptyTally();
  const fail = (message: string) => result.violations.push(`${name}: ${message}`);
  /** Payloads not yet begun (never printed `submitting`): the next run submits them. */
  let waiting: string[] = [];
  const submitted = new Set<string>();
  const accepted = new Set<string>();
  const refused = new Set<string>();
  /** Payloads whose entry a killed child left in the file: each must be applied exactly once by the end. */
  const stored = new Set<string>();
  let nextPayload = 0;
  /** How long a run lasts, start to drained: where timer kills fall. Learnt from runs that ended by themselves. */
  let estimateMs = 800;
  try {
    for (let killed = 0, attempt = 0; ; attempt++) {
      const final = killed >= kills;
      // A chain whose runs keep ending before their kill point would never end: give up after many.
      if (attempt > kills * 4 + 10) {
        fail(`only ${killed} of ${kills} kills landed in ${attempt} runs`);
        break;
      }
      const fresh = intBetween(random, 2, 4);
      for (let i = 0; i < fresh; i++) waiting.push(`c${index}p${nextPayload++}`);
      const payloads = waiting;
      const plan: KillPlan = final ? { mode: 'none' } : planKill(random, payloads.length, estimateMs);
      // Half the runs wait for each request's first send (the default budget); the others give it a few ms
      // (`deadlineMs`), so that entries are accepted (deferred) before the origin has seen them.
      const wait = random() < 0.5 ? [] : [`--wait=${intBetween(random, 1, 30)}`];
      const run = await runChild(
        options.bundle,
        [origin.url, path, ...wait, ...payloads],
        origin,
        plan,
        childLimitMs,
        (line) => {
          const [word, payload] = line.split(' ');
          if (word === 'submitting' && payload !== undefined) {
            submitted.add(payload);
            waiting = waiting.filter((p) => p !== payload);
          }
          if (word === 'accepted' && payload !== undefined) {
            const status = line.split(' ')[2] ?? '?';
            // `failed`: the store did not take the entry within the request's budget (the fixture's writes never
            // fail for good): nothing was stored, so it must never be applied.
            if (status === 'failed') refused.add(payload);
            else accepted.add(payload);
            result.acceptedAs[status] = (result.acceptedAs[status] ?? 0) + 1;
          }
        },
      );
      result.runs++;
      const ended = run.killed ? `killed (${describePlan(plan)})` : `exited ${run.code ?? run.signal}`;
      log(
        `${name} run ${attempt + 1}: ${payloads.length} payloads, ${ended} after ${Math.round(run.durationMs)} ms; ${accepted.size} accepted so far`,
      );
      const context = () =>
        `run ${attempt + 1} (${describePlan(plan)}), last lines: ${run.lines.slice(-4).join(' | ')}; stderr: ${run.stderr.trim().slice(-800)}`;
      if (run.overran) {
        fail(`a child ran longer than ${childLimitMs} ms and was killed: ${context()}`);
        break;
      }
      if (run.killed) {
        killed++;
        result.kills++;
        if (plan.mode !== 'none') result.killsByMode[plan.mode]++;
        const left = await afterKill(path);
        result.leftByKills += left.length;
        for (const entry of left) {
          const payload = payloadOf(entry);
          stored.add(payload);
          if (!submitted.has(payload)) fail(`the file holds ${payload}, which was never submitted`);
          if (entry.status === 'dead') fail(`entry of ${payload} dead-lettered (${entry.deadReason})`);
        }
        continue;
      }
      if (run.code !== 0 || !run.lines.includes('drained')) {
        fail(`a child ended with code ${run.code ?? run.signal} without draining: ${context()}`);
        break;
      }
      estimateMs = Math.max(200, Math.round(run.durationMs));
      if (final) break;
      result.finishedBeforeKill++;
    }

    // The checks. Every accepted payload, and every payload a killed child left in the file, applied exactly
    // once; nothing applied twice (the origin counts that as it happens); nothing applied that was never
    // submitted; the file empty.
    for (const payload of accepted) {
      const keys = origin.applied.get(payload)?.length ?? 0;
      if (keys !== 1) fail(`payload ${payload} was accepted but applied ${keys} times`);
    }
    for (const payload of refused) {
      const keys = origin.applied.get(payload)?.length ?? 0;
      if (keys !== 0) fail(`payload ${payload} ended failed (nothing stored) but was applied ${keys} times`);
    }
    for (const payload of stored) {
      const keys = origin.applied.get(payload)?.length ?? 0;
      if (keys !== 1 && !accepted.has(payload))
        fail(`payload ${payload} was in the file after a kill but applied ${keys} times`);
    }
    for (const [payload, keys] of origin.applied) {
      if (!submitted.has(payload)) fail(`payload ${payload} was applied but never submitted`);
      if (keys.length > 1) result.doubleApplies++;
    }
    if (waiting.length > 0 && result.violations.length === 0)
      fail(`payloads never submitted: ${waiting.join(', ')}`);
    const store = sqliteStore(path);
    try {
      const left = await store.list();
      if (left.length > 0) {
        fail(
          `${left.length} entries left in the store: ${left.map((e) => `${payloadOf(e)} (${e.status})`).join(', ')}`,
        );
      }
    } finally {
      await store.close();
    }
  } finally {
    await origin.close();
  }
  result.violations.push(...origin.violations.map((message) => `${name}: ${message}`));
  result.submitted = submitted.size;
  result.accepted = accepted.size;
  result.applied = origin.applied.size;
  result.requests = origin.requests;
  result.replays = origin.replays;
  Object.assign(result.faults, origin.faults);
  return result;
}

/** Bundles the fixture, runs the chains (a few at a time) and adds up what they found. */
export async function runCrashTrials(options: CrashTrialOptions): Promise<CrashReport> {
  const startedAt = performance.now();
  const trials = Math.max(1, Math.floor(options.trials));
  const chains = Math.max(1, Math.min(trials, options.chains ?? Math.ceil(trials / 10)));
  const parallel = Math.max(1, options.parallel ?? 2);
  const log = options.log ?? (() => undefined);
  const dir = await mkdtemp(join(tmpdir(), 'failwise-crash-'));
  const report: CrashReport = { seed: options.seed, chains, ...emptyTally(), durationMs: 0 };
  try {
    const bundle = await bundleFixture(options.fixture ?? DEFAULT_FIXTURE, dir);
    const chainOptions: ChainOptions = {
      seed: options.seed,
      childLimitMs: options.childLimitMs ?? 20_000,
      faultRates: options.faultRates ?? DEFAULT_FAULT_RATES,
      bundle,
      dir,
      log,
    };
    let next = 0;
    const worker = async () => {
      while (next < chains) {
        const index = next++;
        // Kills spread over the chains: the first `trials % chains` get one more.
        const kills = Math.floor(trials / chains) + (index < trials % chains ? 1 : 0);
        const chain = await runChain(index, kills, chainOptions);
        addTally(report, chain);
        log(
          `chain ${index} done: ${chain.kills} kills, ${chain.accepted} accepted, ${chain.applied} applied, ${chain.violations.length} violations`,
        );
      }
    };
    await Promise.all(Array.from({ length: Math.min(parallel, chains) }, worker));
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
  report.durationMs = Math.round(performance.now() - startedAt);
  return report;
}

/** A few lines for a person: the seed first, so that a failure can be run again. */
export function formatReport(report: CrashReport): string {
  const modes = Object.entries(report.killsByMode)
    .map(([mode, count]) => `${mode} ${count}`)
    .join(', ');
  const faults = Object.entries(report.faults)
    .filter(([fault]) => fault !== 'none')
    .map(([fault, count]) => `${fault} ${count}`)
    .join(', ');
  return [
    `seed ${report.seed}: ${report.chains} SQLite files, ${report.runs} child runs, ${report.kills} SIGKILLs (${modes}), ${report.finishedBeforeKill} runs drained before their kill point`,
    `payloads: ${report.submitted} submitted, ${report.accepted} accepted (${Object.entries(report.acceptedAs)
      .map(([status, count]) => `${count} ${status}`)
      .join(
        ', ',
      )}), ${report.applied} applied, ${report.doubleApplies} applied twice; ${report.leftByKills} entries left in the file by kills`,
    `origin: ${report.requests} POSTs, ${report.replays} answered from a stored key, faults: ${faults}`,
    `${report.violations.length} violations in ${(report.durationMs / 1000).toFixed(1)} s`,
    ...report.violations.map((violation) => `  - ${violation}`),
  ].join('\n');
}

// ---------------------------------------------------------------------------------------------------------
// A restart after a kill mid-sync

export interface RestartTrialResult {
  /** The first run was SIGKILLed while it held the lease (the origin was handling one of its POSTs). */
  killed: boolean;
  /** Entries the file held after the kill: what the restarted run had to send. */
  left: number;
  /** The restarted run's `flushed` lines: `[sent, pending, reason]` of each flush, in order. */
  flushes: Array<[number, number, string]>;
  /** How long the restarted run took, start to exit, in ms. */
  restartMs: number;
  /** Every violation: double applies, payloads lost or applied that were never accepted, a run that failed. */
  violations: string[];
}

/**
 * One trial of "a lease whose holder died is free at once" (docs/stores.md): a run submits `payloads` durable writes
 * (deferred after 50 ms, their sends slow), and is SIGKILLed while the origin handles the `killAt`-th POST, its lease
 * held. A restarted run on the same file (another owner) must send everything in its first flush, without
 * waiting for the dead run's lease to expire, and every accepted payload must end applied exactly once.
 */
export async function runRestartTrial(options: {
  payloads: number;
  killAt: number;
  fixture?: string;
  childLimitMs?: number;
}): Promise<RestartTrialResult> {
  const { payloads, killAt, childLimitMs = 20_000 } = options;
  const dir = await mkdtemp(join(tmpdir(), 'failwise-restart-'));
  // Each payload's first POST answers after the attempt timeout: the run's writes are deferred (`--wait=50`)
  // and queue up behind the first, so the kill leaves several in the file.
  const origin = await startDedupingOrigin((_, n) => (n === 0 ? 'slow' : 'none'));
  const violations: string[] = [];
  try {
    const bundle = await bundleFixture(options.fixture ?? DEFAULT_FIXTURE, dir);
    const path = join(dir, 'outbox.db');
    const names = Array.from({ length: payloads }, (_, i) => `p${i}`);
    const first = await runChild(
      bundle,
      [origin.url, path, '--wait=50', ...names],
      origin,
      { mode: 'apply', nth: killAt, delayMs: 'before-answer' },
      childLimitMs,
      () => undefined,
    );
    // `accepted <payload> failed`: the store did not take the entry within the request's deadline (a loaded machine
    // can take longer than `--wait`): nothing was stored, so it must never be applied, as in runCrashTrials.
    const outcomes = first.lines.filter((line) => line.startsWith('accepted ')).map((l) => l.split(' '));
    const accepted = outcomes.filter(([, , status]) => status !== 'failed').map(([, payload]) => payload!);
    const refused = outcomes.filter(([, , status]) => status === 'failed').map(([, payload]) => payload!);
    const left = (await afterKill(path)).length;
    const second = await runChild(
      bundle,
      [origin.url, path],
      origin,
      { mode: 'none' },
      childLimitMs,
      () => undefined,
    );
    if (second.code !== 0 || !second.lines.includes('drained'))
      violations.push(
        `the restarted run ended with ${second.code ?? second.signal}: ${second.stderr.slice(-800)}`,
      );
    for (const payload of accepted) {
      const keys = origin.applied.get(payload)?.length ?? 0;
      if (keys !== 1) violations.push(`payload ${payload} was accepted but applied ${keys} times`);
    }
    for (const payload of refused)
      if (origin.applied.has(payload)) violations.push(`payload ${payload} was refused but applied`);
    for (const payload of origin.applied.keys())
      if (!names.includes(payload)) violations.push(`payload ${payload} was applied but never submitted`);
    violations.push(...origin.violations);
    const flushes = second.lines
      .filter((line) => line.startsWith('flushed '))
      .map((line): [number, number, string] => {
        const [, sent, pending, reason] = line.split(' ');
        return [Number(sent), Number(pending), reason ?? '?'];
      });
    return { killed: first.killed, left, flushes, restartMs: second.durationMs, violations };
  } finally {
    await origin.close();
    await rm(dir, { recursive: true, force: true });
  }
}
