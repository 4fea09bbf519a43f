/**
 * Section 3: the heap one request in flight holds. Many requests start against a transport that
 * answers only when the attempt's signal aborts; heap used (after a full gc) before and once the
 * transport has seen every request, over their number. Then `client.close()` must end them all.
 */
import { setMaxListeners } from 'node:events';
import { performance } from 'node:perf_hooks';
import { setImmediate as nextTurn } from 'node:timers/promises';

import { createFailoverClient, systemClock, type Outcome, type Transport } from '../dist/src/index.node.js';
import { collectGarbage } from './harness.js';
import type { MemoryResult } from './report.js';

/** A transport that never answers, until the attempt is aborted (by close, or the request's signal). */
function silentTransport() {
  let sends = 0;
  const transport: Transport = {
    name: 'silent',
    send: ({ signal }) =>
      new Promise((resolve) => {
        sends++;
        const aborted = () =>
          resolve({ kind: 'error', phase: 'connection-lost', requestSent: 'unknown', message: 'aborted' });
        if (signal.aborted) aborted();
        else signal.addEventListener('abort', aborted, { once: true });
      }),
  };
  return { transport, sends: () => sends };
}

/** Resolves once `done()` holds, checking on each turn of the event loop; rejects after `limitMs`. */
async function until(done: () => boolean, limitMs: number, what: string): Promise<void> {
  const start = performance.now();
  while (!done()) {
    if (performance.now() - start > limitMs) throw new Error(`bench: ${what} took over ${limitMs} ms`);
    await nextTurn();
  }
}

const outcomeName = (outcome: Outcome): string =>
  outcome.status === 'failed' ? `failed:${outcome.reason}` : outcome.status;

function tally(names: string[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const name of names) counts[name] = (counts[name] ?? 0) + 1;
  return counts;
}

/**
 * The same requests made by a hand-written loop that can cut an attempt, as any client must: per request one
 * AbortController and one attempt timer (600 s, never firing), around the same silent transport. Its heap per
 * request in flight is the floor under failwise's figure on this host; what failwise holds above it is its own.
 */
async function handLoopBytesPerInflight(requests: number): Promise<number> {
  const { transport, sends } = silentTransport();
  const controllers: AbortController[] = [];
  const call = async (path: string) => {
    const controller = new AbortController();
    controllers.push(controller);
    const timer = setTimeout(() => controller.abort(), 600_000);
    try {
      return await transport.send({
        url: `https://api.example.test${path}`,
        method: 'GET',
        headers: {},
        signal: controller.signal,
        connectTimeoutMs: 10_000,
        attemptsLeft: 1,
      });
    } finally {
      clearTimeout(timer);
    }
  };
  const warmups = Array.from({ length: 200 }, () => call('/x'));
  await until(() => sends() >= warmups.length, 30_000, 'the hand loop warm-up');
  for (const controller of controllers.splice(0)) controller.abort();
  await Promise.all(warmups);

  collectGarbage();
  const before = process.memoryUsage().heapUsed;
  const sentBefore = sends();
  const pending: Promise<unknown>[] = [];
  for (let i = 0; i < requests; i++) pending.push(call(`/items/${i}`));
  await until(() => sends() - sentBefore >= requests, 120_000, `starting ${requests} hand-loop requests`);
  collectGarbage();
  const bytes = (process.memoryUsage().heapUsed - before) / requests;
  for (const controller of controllers.splice(0)) controller.abort();
  await Promise.all(pending);
  return bytes;
}

export async function measureMemory(requests: number): Promise<MemoryResult> {
  const { transport, sends } = silentTransport();
  const client = createFailoverClient({
    origins: [{ id: 'primary', url: 'https://api.example.test' }],
    clock: systemClock,
    transport,
    // Long enough that no attempt timeout or budget timer fires while the requests are counted.
    policy: { budgetMs: 600_000, timeouts: { attemptMs: 600_000 } },
  });
  // Warm-up: the same code paths, ended by their own signal.
  const warm = new AbortController();
  setMaxListeners(Infinity, warm.signal); // one signal for 200 requests is meant; Node would warn at 11
  const warmups = Array.from({ length: 200 }, () => client.request({ path: '/x', signal: warm.signal }));
  await until(() => sends() >= warmups.length, 30_000, 'the warm-up');
  warm.abort();
  await Promise.all(warmups);

  collectGarbage();
  const before = process.memoryUsage().heapUsed;
  const startedAt = performance.now();
  const sentBefore = sends();
  const pending: Promise<Outcome>[] = [];
  for (let i = 0; i < requests; i++) pending.push(client.request({ path: `/items/${i}` }));
  await until(() => sends() - sentBefore >= requests, 120_000, `starting ${requests} requests`);
  const startMs = performance.now() - startedAt;
  collectGarbage();
  const heapDeltaBytes = process.memoryUsage().heapUsed - before;

  const closing = await closeAndWait(client, pending);
  pending.length = 0;
  collectGarbage();
  const retainedAfterCloseBytes = process.memoryUsage().heapUsed - before;
  return {
    requests,
    heapDeltaBytes,
    bytesPerInflight: heapDeltaBytes / requests,
    handLoopBytesPerInflight: await handLoopBytesPerInflight(requests),
    retainedAfterCloseBytes,
    startMs,
    ...closing,
  };
}

/** Closes the client and waits (at most 30 s) for every request to end; what they ended with. */
async function closeAndWait(
  client: ReturnType<typeof createFailoverClient>,
  pending: Promise<Outcome>[],
): Promise<Pick<MemoryResult, 'closeMs' | 'allEnded' | 'outcomes'>> {
  const closedAt = performance.now();
  let settled = 0;
  const ended = Promise.allSettled(pending.map((p) => p.finally(() => void settled++)));
  await client.close();
  let timer: ReturnType<typeof setTimeout> | undefined;
  const limit = new Promise<'timeout'>((resolve) => (timer = setTimeout(() => resolve('timeout'), 30_000)));
  const results = await Promise.race([ended, limit]);
  clearTimeout(timer);
  const closeMs = performance.now() - closedAt;
  if (results === 'timeout') {
    return { closeMs, allEnded: false, outcomes: { 'still running after 30 s': pending.length - settled } };
  }
  const names = results.map((result) =>
    result.status === 'fulfilled' ? outcomeName(result.value) : 'rejected',
  );
  return { closeMs, allEnded: settled === pending.length, outcomes: tally(names) };
}
