/**
 * `npm run bench:drain`: what the outbox costs per entry as its queue grows. A client on a `memoryStore` that
 * already holds `n` pending entries drains them through a transport that answers 201 at once; the time per
 * entry sent is printed for each queue length. Work that does not depend on the queue's length keeps that
 * figure flat; work that scans the queue on every step makes it grow with `n` (the drain as a whole with n²).
 * Each length runs in fresh clients, `rounds` times, interleaved with the other lengths; medians.
 *
 *   npx tsx bench/outbox-drain.ts [--sizes 100,1000,5000] [--rounds 3] [--concurrency 4]
 */
import { parseArgs } from 'node:util';
import { createFailoverClient, memoryStore } from '../src/index.js';
import type { OutboxEntry } from '../src/index.js';
import type { Transport } from '../src/transports/transport.js';

const { values } = parseArgs({
  options: {
    sizes: { type: 'string', default: '100,1000,5000' },
    rounds: { type: 'string', default: '3' },
    concurrency: { type: 'string', default: '4' },
  },
});
const SIZES = values.sizes.split(',').map(Number);
const ROUNDS = Number(values.rounds);
const CONCURRENCY = Number(values.concurrency);
for (const n of [...SIZES, ROUNDS, CONCURRENCY])
  if (!Number.isInteger(n) || n < 1) throw new Error(`bench:drain: expected positive integers, got ${n}`);

/** Answers every request 201 on the next turn of the event loop, as a fast origin would. */
const answerAtOnce: Transport = {
  name: 'answer-at-once',
  send: () => Promise.resolve({ kind: 'response', response: new Response(null, { status: 201 }) }),
};

/**
 * Drains `n` stored entries; resolves with the ms from the client's creation to the last entry sent, and the
 * process's CPU time over it.
 */
async function drain(n: number): Promise<{ ms: number; cpuMs: number }> {
  const store = memoryStore();
  const now = Date.now();
  for (let i = 0; i < n; i++) {
    const entry: OutboxEntry = {
      id: `e${i}`,
      createdAt: now,
      request: { method: 'POST', path: '/apply', headers: {}, body: `{"n":${i}}` },
      idempotencyKey: `k${i}`,
      attempts: 0,
      nextAttemptAt: now,
      failures: [],
      status: 'pending',
    };
    await store.add(entry);
  }
  let sent = 0;
  let done: () => void = () => {};
  const allSent = new Promise<void>((resolve) => (done = resolve));
  const t0 = performance.now();
  const cpu0 = process.cpuUsage();
  const client = createFailoverClient({
    origins: [{ id: 'origin', url: 'https://api.example' }],
    store,
    transport: answerAtOnce,
    policy: { durable: { order: 'per-key', concurrency: CONCURRENCY } },
    onEvent: (event) => {
      if (event.type === 'outbox-changed' && event.change === 'entry-sent' && ++sent === n) done();
    },
  });
  void client.outbox.flush();
  await allSent;
  const ms = performance.now() - t0;
  const cpu = process.cpuUsage(cpu0);
  await client.close();
  return { ms, cpuMs: (cpu.user + cpu.system) / 1000 };
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const times = new Map<number, number[]>(SIZES.map((n) => [n, []]));
const cpus = new Map<number, number[]>(SIZES.map((n) => [n, []]));
await drain(200); // warm-up: the JIT, durable work's lazy import
for (let r = 0; r < ROUNDS; r++)
  for (const n of SIZES) {
    const { ms, cpuMs } = await drain(n);
    times.get(n)!.push(ms);
    cpus.get(n)!.push(cpuMs);
  }

const smallest = SIZES[0]!;
const perEntry = (n: number) => (median(times.get(n)!) * 1000) / n;
console.log(`| queue length | drain time | per entry | per entry, vs ${smallest} | CPU per entry |`);
console.log('| ---: | ---: | ---: | ---: | ---: |');
for (const n of SIZES)
  console.log(
    `| ${n} | ${median(times.get(n)!).toFixed(0)} ms | ${perEntry(n).toFixed(1)} µs | ${(perEntry(n) / perEntry(smallest)).toFixed(2)} x | ${((median(cpus.get(n)!) * 1000) / n).toFixed(1)} µs |`,
  );
