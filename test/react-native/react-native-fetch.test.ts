/**
 * failwise on React Native's networking: whatwg-fetch over XMLHttpRequest, React Native's own URL and
 * AbortController, and none of DOMException, web streams, structuredClone or crypto (test/helpers/react-native-env).
 * The scenarios run in a child process of their own for each environment: React Native 0.87 and later (its own
 * AbortController), React Native 0.70 to 0.86 (the abort-controller package's), and Node's fetch as the control,
 * against real servers on 127.0.0.1 that this file starts; each `it` checks one scenario's facts.
 */
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { closedPort, startServer, type Handler, type LoopbackServer } from '../helpers/loopback-server.js';
import {
  SCENARIO_ENVIRONMENTS,
  type ScenarioEnvironment,
  type ScenarioFacts,
} from '../helpers/react-native-env/scenario-facts.js';
import { runNode } from '../helpers/run-node.js';

// Not ASCII: a body read as bytes one byte a character would garble it.
const GZIP_JSON = { items: [1, 2, 3], name: 'café ☕' };
const BIG_BYTES = 1_572_864; // 1.5 MiB: over the 1 MiB read within the attempt by length
const TRICKLE = ['ab', 'cd', 'ef', 'gh']; // 150 ms apart: 450 ms from headers to the end

const primaryRoutes: Handler = ({ req, res, body }) => {
  const url = new URL(req.url ?? '/', 'http://127.0.0.1');
  if (url.pathname === '/gzip-json') {
    // Chunked, gzip'd: what most JSON APIs send, and what reaches the app without a length.
    res.writeHead(200, { 'content-type': 'application/json', 'content-encoding': 'gzip' });
    res.end(gzipSync(JSON.stringify(GZIP_JSON)));
  } else if (url.pathname === '/big') {
    res.writeHead(200, { 'content-type': 'text/plain', 'content-length': String(BIG_BYTES) });
    res.end('x'.repeat(BIG_BYTES));
  } else if (url.pathname === '/trickle') {
    res.writeHead(200, { 'content-type': 'text/plain' });
    let sent = 0;
    const timer = setInterval(() => {
      res.write(TRICKLE[sent++]);
      if (sent === TRICKLE.length) {
        clearInterval(timer);
        res.end();
      }
    }, 150);
    res.write(TRICKLE[sent++]);
    res.on('close', () => clearInterval(timer));
  } else if (url.pathname === '/hang') {
    // Never answers: the client's abort ends it (the server destroys what is left when it closes).
  } else if (url.pathname === '/echo') {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ method: req.method, body, contentType: req.headers['content-type'] ?? null }));
  } else if (url.pathname === '/cached') {
    // The first read of each run succeeds; the server fails from then on.
    const first = !cachedSeen.has(url.search);
    cachedSeen.add(url.search);
    res.writeHead(first ? 200 : 503, { 'content-type': 'text/plain' });
    res.end(first ? 'fresh' : 'down');
  } else {
    res.writeHead(404).end();
  }
};
const cachedSeen = new Set<string>();

let primary: LoopbackServer;
let backup: LoopbackServer;
const facts: Partial<Record<ScenarioEnvironment, ScenarioFacts>> = {};

beforeAll(async () => {
  primary = await startServer(primaryRoutes);
  backup = await startServer(({ res }) => res.writeHead(200, { 'content-type': 'text/plain' }).end('backup'));
  const servers = JSON.stringify({ primary: primary.url, backup: backup.url, deadPort: await closedPort() });
  for (const env of SCENARIO_ENVIRONMENTS) {
    const run = await runNode(['test/helpers/react-native-env/run-scenarios.ts', env, servers], 60_000);
    if (run.code !== 0 || run.killed)
      throw new Error(
        `run-scenarios ${env}: exit ${run.code}${run.killed ? ' (killed)' : ''}\n${run.stdout}\n${run.stderr}`,
      );
    facts[env] = JSON.parse(run.stdout.trim().split('\n').at(-1)!) as ScenarioFacts;
  }
}, 180_000);

afterAll(async () => {
  await Promise.all([primary?.close(), backup?.close()]);
});

const reactNative = () => facts['react-native']!;
const reactNativeBefore087 = () => facts['react-native-before-0.87']!;
const node = () => facts.node!;

describe.each([
  ['React Native', reactNative],
  ['React Native before 0.87', reactNativeBefore087],
  ['Node (control)', node],
])('failwise on %s fetch', (_, of) => {
  it('reads a gzip JSON without Content-Length, with a signal, three times over a healthy primary', () => {
    expect(of().gzipJson).toEqual([{ value: GZIP_JSON }, { value: GZIP_JSON }, { value: GZIP_JSON }]);
    expect(of().healthAfterGzip).toBe('healthy');
  });

  it('reads a body over 1 MiB with a signal', () => {
    expect(of().bigBody).toEqual({ value: BIG_BYTES });
  });

  it('reads a body that trickles for 450 ms', () => {
    expect(of().trickle).toEqual({ value: TRICKLE.join('') });
  });

  it('answers stream: true with the whole body', () => {
    expect(of().streamTrue).toMatchObject({ value: { text: TRICKLE.join('') } });
  });

  it('sends a Request input, a GET and a POST with its body', () => {
    expect(of().requestGet).toEqual({ value: { method: 'GET', body: '', contentType: null } });
    expect(of().requestPost).toEqual({
      value: { method: 'POST', body: '{"a":1}', contentType: 'application/json' },
    });
  });

  it('matches origin URLs whatever the case of their scheme and host', () => {
    expect(of().upperCaseOrigin).toEqual({ value: { method: 'GET', body: '', contentType: null } });
    expect(of().upperCaseUrls).toEqual([`http://api.example.test:${new URL(primary.url).port}/echo`]);
  });

  it('fails over to the backup when the primary refuses connections', () => {
    expect(of().failover).toEqual({ value: { text: 'backup', active: 'backup' } });
  });

  it('answers a cached read from the cache once the server fails', () => {
    expect(of().cached).toEqual({
      value: [
        { status: 'succeeded', stale: false, text: 'fresh' },
        { status: 'succeeded', stale: true, text: 'fresh' },
      ],
    });
  });

  it('queues durable work on keyValueStore while NetInfo says offline, and sends it once online', () => {
    expect(of().durable).toEqual({
      value: { queued: 'deferred', flushed: { sent: 1, failed: 0, pending: 0 }, left: 0 },
    });
  });

  it('serves a TanStack Query query that passes its signal', () => {
    expect(of().tanstack).toEqual({ value: GZIP_JSON });
  });

  it('rejects a TimeoutError abort with the signal reason itself', () => {
    expect(of().timeoutAbort).toEqual({
      error: { name: 'TimeoutError', message: expect.any(String) as string, isError: true, isReason: true },
    });
  });
});

describe('failwise on React Native, cancelled', () => {
  it("rejects a plain abort with the signal's reason on 0.87 and later (its own DOMException, not a global)", () => {
    expect(reactNative().abort).toEqual({
      error: {
        name: 'AbortError',
        message: 'signal is aborted without reason',
        isError: true,
        isReason: true,
      },
    });
  });

  it('rejects a plain abort with an Error named AbortError before 0.87 (the signal has no reason)', () => {
    expect(reactNativeBefore087().abort).toEqual({
      error: { name: 'AbortError', message: 'This operation was aborted', isError: true, isReason: false },
    });
  });
});

describe.each([
  ['React Native', reactNative],
  ['React Native before 0.87', reactNativeBefore087],
])('failwise on %s fetch, where it differs from Node', (_, of) => {
  it('gives stream: true no body stream: the body was read within the attempt', () => {
    expect(of().streamTrue).toEqual({ value: { bodyType: 'undefined', text: TRICKLE.join('') } });
  });

  it('ends stream: true with response-timeout when the body outlasts the attempt timeout', () => {
    expect(of().streamShortAttempt).toEqual({
      value: { status: 'failed', failureClass: 'response-timeout', text: undefined },
    });
  });

  it('refuses a FormData body with a RequestError naming the field', () => {
    expect(of().formData).toEqual({
      error: {
        name: 'RequestError',
        field: 'body',
        isError: true,
        message:
          "request.body: this runtime's fetch cannot read the body as bytes (a FormData needs a native Request); send a string, bytes, a Blob or URLSearchParams",
      },
    });
  });

  it("refuses an 'auto' idempotency key without crypto.randomUUID, naming generateIdempotencyKey", () => {
    expect(of().autoKey).toEqual({
      error: {
        name: 'RequestError',
        field: 'idempotencyKey',
        isError: true,
        message:
          'request.idempotencyKey: no crypto.randomUUID here (React Native: Hermes) to make a key: pass generateIdempotencyKey to createFailoverClient',
      },
    });
  });
});

describe('failwise on Node fetch, where it differs from React Native', () => {
  it("makes an 'auto' idempotency key with crypto.randomUUID", () => {
    expect(node().autoKey).toEqual({ value: 200 });
  });

  it('rejects a plain abort with the signal reason, a DOMException named AbortError', () => {
    expect(node().abort).toEqual({
      error: { name: 'AbortError', message: 'This operation was aborted', isError: true, isReason: true },
    });
  });

  it('hands stream: true over at its headers, so the attempt timeout does not cover the body', () => {
    expect(node().streamTrue).toEqual({ value: { bodyType: 'object', text: TRICKLE.join('') } });
    expect(node().streamShortAttempt).toEqual({
      value: { status: 'succeeded', failureClass: undefined, text: TRICKLE.join('') },
    });
  });

  it('sends a FormData body as multipart', () => {
    expect(node().formData).toEqual({ value: 200 });
  });
});
