/**
 * `npm run bench` (`npm run build && node --expose-gc --import tsx bench/run.ts --write`): issue 10's
 * benchmark, through failwise's public client only, each figure next to its peers in one run. It measures the
 * built package (dist/), as an app runs it: tsx would compile src/ with esbuild's keepNames, which wraps every
 * function and gives every closure a property store of its own, costing time and memory the package does not.
 *
 *   1. success path and 2. retry path: failwise next to a hand-written loop, cockatiel (with and without
 *      a timeout) and p-retry, over the same in-process transport (bench/peers.ts); the success path again with
 *      each answer after a real wait, timed by CPU;
 *   3. heap per request in flight (bench/memory.ts);
 *   4. loopback HTTP throughput against raw fetch and 5. 3,000 requests at once, half of them 503 first,
 *      against a raw retry loop (bench/http.ts, bench/loopback-server.ts);
 *   6. browser bundle sizes (bench/bundle.ts).
 *
 * Prints a table per section and, last, one JSON line of the figures (bench/report.ts). `--write`
 * rewrites docs/benchmarks.md with them; `--quick` runs every section briefly (a smoke test; its
 * figures are not worth writing down). Progress goes to stderr.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';

import { format, resolveConfig } from 'prettier';

import { measureBundles } from './bundle.js';
import { keepFleetSection } from './fleet/fleet-doc.js';
import {
  BACK_ONLINE_END,
  BACK_ONLINE_START,
  keepSection,
  LIMITED_END,
  LIMITED_START,
} from './fleet/rate-limited-doc.js';
import { keepHermesSection } from './hermes/hermes-report.js';
import { WAIT_MS, interleavedCpuRounds, interleavedRounds, type Peer } from './harness.js';
import { measureLoad, measureThroughput } from './http.js';
import { startLoopbackServer } from './loopback-server.js';
import { measureMemory } from './memory.js';
import { peersFor, type Script } from './peers.js';
import {
  betweenWaitsRatios,
  median,
  renderMarkdown,
  sections,
  summarize,
  summaryLine,
  type BenchResults,
} from './report.js';

const args = new Set(process.argv.slice(2));
const quick = args.has('--quick');
const DOC = fileURLToPath(new URL('../docs/benchmarks.md', import.meta.url));

const settings = quick
  ? {
      timing: { rounds: 2, roundMs: 30, warmupMs: 60 },
      waits: { rounds: 2, callsPerRound: 10, warmupCalls: 10 },
      inflight: 1_000,
      loopback: { requestsPerRound: 500, concurrency: 50, rounds: 1 },
      load: { requests: 3_000, rounds: 1 },
    }
  : {
      timing: { rounds: 10, roundMs: 100, warmupMs: 300 },
      waits: { rounds: 10, callsPerRound: 200, warmupCalls: 100 },
      inflight: 10_000,
      loopback: { requestsPerRound: 5_000, concurrency: 50, rounds: 7 },
      load: { requests: 3_000, rounds: 3 },
    };

const progress = (message: string) => process.stderr.write(`bench: ${message}\n`);

/** Measures one script's peers (bench/peers.ts) with `measure`, then closes their clients. */
async function withPeers<T>(script: Script, measure: (peers: Peer[]) => Promise<T>): Promise<T> {
  const set = peersFor(script);
  try {
    return await measure(set.peers);
  } finally {
    await set.close();
  }
}

const timing = (script: 'ok' | 'flaky') =>
  withPeers(script, (peers) => interleavedRounds(peers, settings.timing));

/** The success path with each answer after a real wait, timed by CPU (section 1's second table). */
const betweenWaits = async () => ({
  ...(await withPeers('waited', (peers) => interleavedCpuRounds(peers, settings.waits))),
  waitMs: WAIT_MS,
});

async function main(): Promise<void> {
  if (typeof (globalThis as { gc?: unknown }).gc !== 'function') {
    throw new Error('bench: run node with --expose-gc (npm run bench does): the memory section needs gc()');
  }
  const startedAt = performance.now();
  progress('success path');
  const success = await timing('ok');
  progress('retry path');
  const retry = await timing('flaky');
  progress(`memory, ${settings.inflight} requests in flight`);
  const memory = await measureMemory(settings.inflight);
  progress('bundle sizes');
  const bundle = await measureBundles();
  const server = await startLoopbackServer();
  let loopback: BenchResults['loopback'];
  let load: BenchResults['load'];
  try {
    progress(
      `loopback throughput, ${settings.loopback.rounds} rounds of ${settings.loopback.requestsPerRound}`,
    );
    loopback = await measureThroughput(server, settings.loopback);
    progress(`load, ${settings.load.rounds} rounds of ${settings.load.requests} at once`);
    load = await measureLoad(server, settings.load);
  } finally {
    await server.close();
  }
  // Last, so that it cannot change what issue 10's own figures read (run second, at 2026-12-03 08:54 to 09:28
  // UTC, and run last, at 09:43, loopback and load read alike: 0.67 to 0.74 and 0.69; 1.18 to 1.43 and 1.25).
  progress(`success path between ${WAIT_MS} ms waits`);
  const successBetweenWaits = await betweenWaits();

  const results: BenchResults = {
    meta: {
      date: execFileSync('date', ['-u', '+%Y-%m-%d %H:%M UTC'], { encoding: 'utf8' }).trim(),
      node: process.version,
      platform: `${os.platform()} ${os.arch()}`,
      cpuModel: os.cpus()[0]?.model.trim() ?? 'unknown CPU',
      cores: os.availableParallelism(),
      command: 'npm run bench',
      durationS: (performance.now() - startedAt) / 1_000,
    },
    success,
    successBetweenWaits,
    retry,
    memory,
    loopback,
    load,
    bundle,
  };

  for (const { title, table } of sections(results)) console.log(`\n${title}\n\n${table}`);
  if (args.has('--write')) {
    // The fleet section (`npm run bench:fleet -- --write`) is that benchmark's: kept as it is.
    const old = readFileSync(DOC, 'utf8');
    // The sections other scripts write (the fleets, Hermes) are kept as they are, in this order after the rest.
    const kept = keepHermesSection(keepFleetSection(renderMarkdown(results), old), old);
    const markdown = keepSection(
      keepSection(kept, old, LIMITED_START, LIMITED_END),
      old,
      BACK_ONLINE_START,
      BACK_ONLINE_END,
    );
    // The tables are already laid out as Prettier lays them out; formatting keeps `prettier --check` passing
    // whatever the figures' widths.
    const options = (await resolveConfig(DOC)) ?? {};
    writeFileSync(DOC, await format(markdown, { ...options, filepath: DOC }));
    console.log(`\nwrote docs/benchmarks.md`);
  }
  console.log(
    summaryLine(summarize(results), {
      // References, no targets: the floor under bytesPerInflight on this host (bench/memory.ts), and failwise's
      // loopback throughput against raw fetch with a per-request timeout (bench/http.ts).
      bytesPerInflightHandLoop: Math.round(results.memory.handLoopBytesPerInflight),
      loopbackThroughputVsFetchWithTimeout:
        Math.round(
          (median(results.loopback.failwisePerSecond) / median(results.loopback.fetchWithTimeoutPerSecond)) *
            1000,
        ) / 1000,
      // The success path with each answer after a real wait, by CPU per call (section 1's second table).
      ...betweenWaitsRatios(results.successBetweenWaits),
      // The same rounds with a ~1 KB JSON body read with json() on each side (bench/http.ts).
      loopbackJsonThroughputVsFetch:
        Math.round(
          (median(results.loopback.jsonFailwisePerSecond) / median(results.loopback.jsonFetchPerSecond)) *
            1000,
        ) / 1000,
      loopbackThroughputNodeHttpVsFetch:
        Math.round(
          (median(results.loopback.failwiseNodeHttpPerSecond) / median(results.loopback.fetchPerSecond)) *
            1000,
        ) / 1000,
      // The bundles built with rolldown (Vite's bundler) rather than esbuild (scripts/rolldown-bundle.ts).
      bundleEverythingRolldownKB: Math.round(results.bundle.everything.rolldown.totalGzipBytes / 10.24) / 100,
      bundleMinimalRolldownKB: Math.round(results.bundle.minimal.rolldown.upFrontGzipBytes / 10.24) / 100,
      failwiseClock: 'systemClock',
      quick,
      node: process.version,
      date: results.meta.date,
    }),
  );
}

main().catch((error: unknown) => {
  console.error(error instanceof Error ? (error.stack ?? error.message) : error);
  process.exitCode = 1;
});
