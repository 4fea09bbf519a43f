/**
 * Sections 4 and 5, over real HTTP to the loopback server (bench/loopback-server.ts): throughput of
 * raw `fetch` against failwise's default fetch transport, and 3,000 requests at once with half of
 * them answered 503 first, against a raw retry loop over fetch.
 */
import { monitorEventLoopDelay, performance } from 'node:perf_hooks';

import {
  createFailoverClient,
  type DecisionEvent,
  type FailoverClient,
  type Outcome,
} from '../dist/src/index.node.js';
import { nodeHttpTransport } from '../dist/src/node.js';
import { callers } from './callers.js';
import { JSON_BYTES, isJsonAnswer, type LoopbackServer } from './loopback-server.js';
import { handLoop } from './peers.js';
import type { LoadResult, LoadRound, ThroughputResult } from './report.js';

const nameOf = (outcome: Outcome): string =>
  outcome.status === 'failed' ? `failed:${outcome.reason}` : outcome.status;

function add(counts: Record<string, number>, name: string, by = 1): void {
  counts[name] = (counts[name] ?? 0) + by;
}

/**
 * failwise's client over the Node entry's default transport (global fetch, undici), or over `nodeHttpTransport()`
 * when `nodeHttp` is set.
 */
function failwiseClient(
  port: number,
  onEvent?: (event: DecisionEvent) => void,
  nodeHttp = false,
): FailoverClient {
  return createFailoverClient({
    origins: [{ id: 'primary', url: `http://127.0.0.1:${port}`, allowInsecure: true }],
    policy: { backoff: { initialMs: 0, maxMs: 0 } },
    ...(onEvent ? { onEvent } : {}),
    ...(nodeHttp ? { transport: nodeHttpTransport() } : {}),
  });
}

/** A fetch that reads the body, as failwise's transport does; the one send of the raw peers. */
async function fetchAndRead(url: string): Promise<Response> {
  const response = await fetch(url);
  await response.arrayBuffer();
  return response;
}

/**
 * The same with what any client needs to cut an attempt short: an AbortController and a timer (5 s, failwise's
 * attempt timeout) per request, cleared when the body is read. A reference for what the timeout alone costs.
 */
async function fetchAndReadWithTimeout(url: string): Promise<Response> {
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(), 5_000);
  try {
    const response = await fetch(url, { signal: controller.signal });
    await response.arrayBuffer();
    return response;
  } finally {
    clearTimeout(timer);
  }
}

export interface ThroughputOptions {
  requestsPerRound: number;
  concurrency: number;
  rounds: number;
}

const WARMUP_REQUESTS = 1_000;

export async function measureThroughput(
  server: LoopbackServer,
  options: ThroughputOptions,
): Promise<ThroughputResult> {
  const { requestsPerRound, concurrency } = options;
  const url = `http://127.0.0.1:${server.port}/t`;
  const client = failwiseClient(server.port);
  const nodeHttpClient = failwiseClient(server.port, undefined, true);
  let fetchErrors = 0;
  const failwiseNotSucceeded: Record<string, number> = {};
  const viaFetch = (total = requestsPerRound, send = fetchAndRead) =>
    callers(total, concurrency, async () => {
      try {
        if ((await send(url)).status !== 204) fetchErrors++;
      } catch {
        fetchErrors++;
      }
    });
  const viaFailwise = (total = requestsPerRound, over = client) =>
    callers(total, concurrency, async () => {
      const outcome = await over.request({ path: '/t' });
      if (outcome.status !== 'succeeded') add(failwiseNotSucceeded, nameOf(outcome));
      else if (outcome.response.status !== 204)
        add(failwiseNotSucceeded, `status ${outcome.response.status}`);
    });
  // The same with a body to read: what an app does with an API's answer (`json()`), on each side.
  const jsonUrl = `http://127.0.0.1:${server.port}/json`;
  let jsonWrong = 0;
  const jsonViaFetch = (total = requestsPerRound) =>
    callers(total, concurrency, async () => {
      try {
        if (!isJsonAnswer(await (await fetch(jsonUrl)).json())) jsonWrong++;
      } catch {
        jsonWrong++;
      }
    });
  const jsonViaFailwise = (total = requestsPerRound) =>
    callers(total, concurrency, async () => {
      const outcome = await client.request({ path: '/json' });
      if (outcome.status !== 'succeeded') jsonWrong++;
      else if (!isJsonAnswer(await outcome.response.json())) jsonWrong++;
    });
  const fetchPerSecond: number[] = [];
  const fetchWithTimeoutPerSecond: number[] = [];
  const failwisePerSecond: number[] = [];
  const failwiseNodeHttpPerSecond: number[] = [];
  const jsonFetchPerSecond: number[] = [];
  const jsonFailwisePerSecond: number[] = [];
  try {
    // A warm-up round each (JIT, the connection pool), not counted.
    await viaFetch(WARMUP_REQUESTS);
    await viaFetch(WARMUP_REQUESTS, fetchAndReadWithTimeout);
    await viaFailwise(WARMUP_REQUESTS);
    await viaFailwise(WARMUP_REQUESTS, nodeHttpClient);
    await jsonViaFetch(WARMUP_REQUESTS);
    await jsonViaFailwise(WARMUP_REQUESTS);
    fetchErrors = 0;
    jsonWrong = 0;
    for (const key of Object.keys(failwiseNotSucceeded)) delete failwiseNotSucceeded[key];
    for (let round = 0; round < options.rounds; round++) {
      fetchPerSecond.push((requestsPerRound * 1_000) / (await viaFetch()));
      fetchWithTimeoutPerSecond.push(
        (requestsPerRound * 1_000) / (await viaFetch(requestsPerRound, fetchAndReadWithTimeout)),
      );
      failwisePerSecond.push((requestsPerRound * 1_000) / (await viaFailwise()));
      failwiseNodeHttpPerSecond.push(
        (requestsPerRound * 1_000) / (await viaFailwise(requestsPerRound, nodeHttpClient)),
      );
      jsonFetchPerSecond.push((requestsPerRound * 1_000) / (await jsonViaFetch()));
      jsonFailwisePerSecond.push((requestsPerRound * 1_000) / (await jsonViaFailwise()));
    }
  } finally {
    await client.close();
    await nodeHttpClient.close();
  }
  return {
    requestsPerRound,
    concurrency,
    fetchPerSecond,
    fetchWithTimeoutPerSecond,
    failwisePerSecond,
    failwiseNodeHttpPerSecond,
    jsonFetchPerSecond,
    jsonFailwisePerSecond,
    jsonBytes: JSON_BYTES,
    jsonWrong,
    fetchErrors,
    failwiseNotSucceeded,
  };
}

export interface LoadOptions {
  requests: number;
  rounds: number;
}

/** The path of request `i` of a load round: every other one carries `fail=<id>` (503 first, then 204). */
const loadPath = (round: string, i: number) => (i % 2 === 1 ? `/load?fail=${round}-${i}` : '/load');

/** Starts watching the event loop's delay; the returned function stops and gives the longest, in ms. */
function watchEventLoop(): () => number {
  const histogram = monitorEventLoopDelay({ resolution: 10 });
  histogram.enable();
  return () => {
    histogram.disable();
    return histogram.max / 1e6;
  };
}

/** undici's code for a failed fetch (`UND_ERR_SOCKET`, `ECONNRESET` ...), else the error's name. */
const codeOf = (error: unknown): string =>
  (error as { cause?: { code?: string } }).cause?.code ?? (error as Error).name;

async function rawLoopRound(server: LoopbackServer, requests: number, round: string) {
  const outcomes: Record<string, number> = {};
  const attemptFailures: Record<string, number> = {};
  let attempts = 0;
  const base = `http://127.0.0.1:${server.port}`;
  const loopDelay = watchEventLoop();
  const start = performance.now();
  await Promise.all(
    Array.from({ length: requests }, async (_, i) => {
      const send = async () => {
        attempts++;
        try {
          const response = await fetchAndRead(base + loadPath(round, i));
          if (response.status !== 204) add(attemptFailures, `status ${response.status}`);
          return response;
        } catch (error) {
          add(attemptFailures, `error ${codeOf(error)}`);
          throw error;
        }
      };
      try {
        const response = await handLoop(send);
        add(outcomes, response.status === 204 ? 'succeeded' : `status ${response.status}`);
      } catch (error) {
        add(outcomes, `error ${codeOf(error)}`);
      }
    }),
  );
  const ms = performance.now() - start;
  const maxLoopDelayMs = loopDelay();
  return { ms, maxLoopDelayMs, outcomes, attempts, attemptFailures, server: await server.counts() };
}

async function failwiseRound(server: LoopbackServer, requests: number, round: string) {
  const outcomes: Record<string, number> = {};
  const attemptFailures: Record<string, number> = {};
  const healthChanges: Record<string, number> = {};
  let attempts = 0;
  // A new client each round, so no round inherits the origin health or retry budget of the one before.
  // Its decision events say why attempts failed; an app would watch them the same way.
  const client = failwiseClient(server.port, (event) => {
    if (event.type === 'attempt-failed')
      add(
        attemptFailures,
        [event.failureClass ?? 'unknown', event.status, event.reason].filter(Boolean).join(' '),
      );
    else if (event.type === 'health-changed') add(healthChanges, `${event.from ?? ''}>${event.to ?? ''}`);
  });
  try {
    const loopDelay = watchEventLoop();
    const start = performance.now();
    await Promise.all(
      Array.from({ length: requests }, async (_, i) => {
        const outcome = await client.request({ path: loadPath(round, i) });
        add(outcomes, nameOf(outcome));
        if (outcome.status !== 'deferred') attempts += outcome.attempts;
      }),
    );
    const ms = performance.now() - start;
    const maxLoopDelayMs = loopDelay();
    return {
      ms,
      maxLoopDelayMs,
      outcomes,
      attempts,
      attemptFailures,
      healthChanges,
      server: await server.counts(),
    };
  } finally {
    await client.close();
  }
}

export async function measureLoad(server: LoopbackServer, options: LoadOptions): Promise<LoadResult> {
  await server.counts(); // zero the counts
  const rounds: LoadRound[] = [];
  for (let r = 0; r < options.rounds; r++) {
    // Each round opens its connections afresh, for both clients alike.
    await server.closeIdle();
    const raw = await rawLoopRound(server, options.requests, `raw${r}`);
    await server.closeIdle();
    const failwise = await failwiseRound(server, options.requests, `failwise${r}`);
    rounds.push({
      rawLoopMs: raw.ms,
      failwiseMs: failwise.ms,
      rawLoopMaxLoopDelayMs: raw.maxLoopDelayMs,
      failwiseMaxLoopDelayMs: failwise.maxLoopDelayMs,
      rawLoopOutcomes: raw.outcomes,
      failwiseOutcomes: failwise.outcomes,
      rawLoopAttempts: raw.attempts,
      rawLoopAttemptFailures: raw.attemptFailures,
      failwiseAttempts: failwise.attempts,
      failwiseAttemptFailures: failwise.attemptFailures,
      failwiseHealthChanges: failwise.healthChanges,
      rawLoopServerRequests: raw.server.requests,
      failwiseServerRequests: failwise.server.requests,
    });
  }
  return { requests: options.requests, rounds };
}
