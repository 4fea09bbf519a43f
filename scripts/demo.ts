/**
 * `npm start`: a short demo of failwise against a real HTTP origin on 127.0.0.1 with injected faults.
 * (The full failure drill replaces it; see the open issue.) Each scenario prints what the policy decided
 * and what the origin saw, then a verdict; the exit code is 1 if any verdict fails.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  createFailoverClient,
  type DecisionEvent,
  type FailoverRequest,
  type Outcome,
} from '../src/index.node.js';
import { nodeHttpTransport } from '../src/node.js';

type Fault =
  'none' | 'unavailable-once' | 'apply-then-drop-once' | 'unauthorized-until-refresh' | 'hang-once';

interface Seen {
  requests: number;
  writesApplied: number;
}

const state: { fault: Fault; faultUsed: boolean; token: string; seen: Seen } = {
  fault: 'none',
  faultUsed: false,
  token: 'expired',
  seen: { requests: 0, writesApplied: 0 },
};
const appliedKeys = new Set<string>();

function handle(req: IncomingMessage, res: ServerResponse, body: string) {
  state.seen.requests += 1;
  const firstTime = !state.faultUsed;
  const isWrite = req.method === 'POST';
  const key = req.headers['idempotency-key'];
  const apply = () => {
    // The origin deduplicates by Idempotency-Key, as the IETF draft describes.
    if (typeof key === 'string' && appliedKeys.has(key)) return;
    if (typeof key === 'string') appliedKeys.add(key);
    if (isWrite) state.seen.writesApplied += 1;
  };
  switch (state.fault) {
    case 'unavailable-once':
      if (firstTime) {
        state.faultUsed = true;
        res.writeHead(503, { 'retry-after': '1' }).end('busy');
        return;
      }
      break;
    case 'apply-then-drop-once':
      if (firstTime) {
        state.faultUsed = true;
        apply();
        req.socket.destroy();
        return;
      }
      break;
    case 'unauthorized-until-refresh':
      if (req.headers['authorization'] !== 'Bearer fresh') {
        res.writeHead(401).end();
        return;
      }
      break;
    case 'hang-once':
      if (firstTime) {
        state.faultUsed = true;
        return; // never answers; the attempt timeout ends it
      }
      break;
    case 'none':
      break;
  }
  apply();
  res
    .writeHead(isWrite ? 201 : 200, { 'content-type': 'application/json' })
    .end(JSON.stringify({ ok: true, echo: body.length }));
}

interface Scenario {
  name: string;
  fault: Fault;
  request: FailoverRequest;
  expect: (outcome: Outcome, seen: Seen) => boolean;
  expected: string;
}

const scenarios: Scenario[] = [
  {
    name: 'GET, 503 with Retry-After: 1',
    fault: 'unavailable-once',
    request: { path: '/v1/items' },
    expect: (o) => o.status === 'succeeded' && o.attempts === 2,
    expected: 'waits 1 s, succeeds on attempt 2',
  },
  {
    name: 'GET, origin never answers once',
    fault: 'hang-once',
    request: { path: '/v1/items' },
    expect: (o) => o.status === 'succeeded' && o.attempts === 2,
    expected: 'attempt timeout, succeeds on attempt 2',
  },
  {
    name: 'POST without key, applied then connection dropped',
    fault: 'apply-then-drop-once',
    request: { method: 'POST', path: '/v1/orders', body: '{"qty":1}' },
    expect: (o, seen) => o.status === 'failed' && o.reason === 'unsafe-to-replay' && seen.writesApplied === 1,
    expected: 'not replayed: failed unsafe-to-replay, 1 write applied',
  },
  {
    name: 'POST with idempotencyKey: auto, same fault',
    fault: 'apply-then-drop-once',
    request: { method: 'POST', path: '/v1/orders', body: '{"qty":1}', idempotencyKey: 'auto' },
    expect: (o, seen) => o.status === 'succeeded' && o.attempts === 2 && seen.writesApplied === 1,
    expected: 'replayed with the same key: succeeded, 1 write applied',
  },
  {
    name: 'GET with an expired token (401)',
    fault: 'unauthorized-until-refresh',
    request: { path: '/v1/me' },
    expect: (o) => o.status === 'succeeded' && o.attempts === 2,
    expected: 'one refresh, succeeds on attempt 2',
  },
];

async function main() {
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => handle(req, res, Buffer.concat(chunks).toString()));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const transport = nodeHttpTransport();
  const log: DecisionEvent[] = [];
  const client = createFailoverClient({
    origins: [{ id: 'local', url: `http://127.0.0.1:${port}`, allowInsecure: true }],
    transport,
    policy: {
      budgetMs: 5_000,
      timeouts: { attemptMs: 500, connectMs: 250 },
      backoff: { initialMs: 50, maxMs: 500 },
    },
    auth: {
      headers: () => ({ authorization: `Bearer ${state.token}` }),
      refresh: async () => {
        state.token = 'fresh';
      },
    },
    onEvent: (event) => log.push(event),
  });

  console.log(`failwise demo: one origin on http://127.0.0.1:${port} with injected faults\n`);
  const rows: Record<string, string | number>[] = [];
  let failures = 0;
  for (const scenario of scenarios) {
    Object.assign(state, {
      fault: scenario.fault,
      faultUsed: false,
      token: 'expired',
      seen: { requests: 0, writesApplied: 0 },
    });
    log.length = 0;
    process.stdout.write(`  running: ${scenario.name} ...\n`);
    const outcome = await client.request(scenario.request);
    const ok = scenario.expect(outcome, state.seen);
    if (!ok) failures += 1;
    const waits = log
      .filter((e) => e.type === 'retry-scheduled')
      .map((e) => `${e.failureClass} -> ${e.delayMs} ms`);
    rows.push({
      scenario: scenario.name,
      outcome: outcome.status === 'failed' ? `failed (${outcome.reason})` : outcome.status,
      attempts: outcome.status === 'deferred' ? 0 : outcome.attempts,
      waits: waits.join(', ') || '-',
      'origin saw': `${state.seen.requests} req, ${state.seen.writesApplied} writes`,
      expected: scenario.expected,
      verdict: ok ? 'PASS' : 'FAIL',
    });
  }
  await client.close();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  console.log('');
  console.table(rows);
  console.log(
    failures === 0 ? `\nall ${scenarios.length} scenarios passed` : `\n${failures} scenario(s) FAILED`,
  );
  process.exitCode = failures === 0 ? 0 : 1;
}

await main();
