/**
 * `npm run bench`: what failwise costs per request next to simpler ways of retrying, measured side by
 * side in one run and reported as ratios to the plain loop (absolute numbers vary by machine; ratios
 * from one run do not depend on it as much). Every transport is a no-op that answers at once, so this
 * measures the engine, not the network.
 */
import { Bench } from 'tinybench';
import { ConsecutiveBreaker, circuitBreaker, handleAll, retry, wrap } from 'cockatiel';
import { createFailoverClient, type Clock, type Transport } from '../src/index.node.js';

// A clock whose 0 ms timers run as microtasks; longer timers never fire (they are always cleared first).
const microClock: Clock = {
  now: () => 0,
  setTimeout(fn, ms) {
    const handle = { live: true };
    if (ms === 0) queueMicrotask(() => handle.live && fn());
    return handle;
  },
  clearTimeout(handle) {
    if (handle) (handle as { live: boolean }).live = false;
  },
};

const ok = (): Response => new Response(null, { status: 204 });
let flip = 0;
const okTransport: Transport = {
  name: 'noop',
  send: () => Promise.resolve({ kind: 'response', response: ok() }),
};
const flakyTransport: Transport = {
  name: 'flaky',
  send: () =>
    Promise.resolve(
      flip++ % 2 === 0
        ? { kind: 'response', response: new Response(null, { status: 503 }) }
        : { kind: 'response', response: ok() },
    ),
};

const policy = { backoff: { initialMs: 0, maxMs: 0 } };
const origins = [{ id: 'primary', url: 'https://api.example.test' }];
const client = createFailoverClient({ origins, clock: microClock, transport: okTransport, policy });
const flakyClient = createFailoverClient({ origins, clock: microClock, transport: flakyTransport, policy });

async function handLoop(send: () => Promise<Response>) {
  for (let attempt = 1; ; attempt++) {
    const response = await send();
    if (response.ok || attempt >= 3 || response.status !== 503) return response;
    await new Promise<void>((resolve) => queueMicrotask(resolve));
  }
}
const cockatiel = wrap(
  retry(handleAll, { maxAttempts: 2 }),
  circuitBreaker(handleAll, { halfOpenAfter: 10_000, breaker: new ConsecutiveBreaker(5) }),
);

const bench = new Bench({ time: 1_000, warmupTime: 300 });
bench
  .add('hand-written retry loop, 1 attempt', () => handLoop(() => Promise.resolve(ok())))
  .add('cockatiel retry + breaker, 1 attempt', () => cockatiel.execute(() => Promise.resolve(ok())))
  .add('failwise client.request, 1 attempt', () => client.request({ path: '/x' }))
  .add('failwise client.request, 503 then 204', () => flakyClient.request({ path: '/x' }));

await bench.run();
/** A task's latency statistics; a task that errored or was aborted has none, which fails the run. */
function latency(task: (typeof bench.tasks)[number]) {
  const result = task.result;
  if (result === undefined || !('latency' in result))
    throw new Error(`bench: ${task.name} produced no result`);
  return result.latency;
}
const base = latency(bench.tasks[0]!).mean;
console.table(
  bench.tasks.map((task) => ({
    case: task.name,
    'mean µs': +(latency(task).mean * 1_000).toFixed(2),
    'x hand loop': +(latency(task).mean / base).toFixed(1),
    samples: latency(task).samplesCount,
  })),
);
await client.close();
await flakyClient.close();
