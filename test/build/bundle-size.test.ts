import { describe, expect, it } from 'vitest';

import {
  BUDGETS,
  EVERYTHING_ENTRY,
  MINIMAL_ENTRY,
  dependencyEntry,
  formatReport,
  measureBundle,
  withinBudget,
  type BundleMeasurement,
} from '../../scripts/check-bundle-size.js';
import {
  measureWithRolldown,
  type RolldownChunk,
  type RolldownMeasurement,
} from '../../scripts/rolldown-bundle.js';

/** The inputs of a measurement's chunks: those loaded up front, or those loaded by import(). */
const inputsOf = (measurement: BundleMeasurement, lazy: boolean): string[] =>
  measurement.chunks
    .filter((chunk) => (chunk.loaded === 'lazy') === lazy)
    .flatMap((chunk) => Object.keys(chunk.inputs));

/** Each part is in a chunk loaded by import() and in none loaded up front. */
function expectOnlyLazy(parts: readonly string[], upFront: readonly string[], lazy: readonly string[]): void {
  for (const part of parts) {
    expect(upFront, part).not.toContain(part);
    expect(lazy, part).toContain(part);
  }
}

describe('browser bundles of failwise (esbuild, code splitting; scripts/check-bundle-size.ts)', () => {
  // One build of each for all assertions. They are browser-only and nothing is external, so they reject with
  // esbuild's "Could not resolve" if anything reachable from the root entry imports a Node built-in.
  const everything: Promise<BundleMeasurement> = measureBundle({ entry: EVERYTHING_ENTRY });
  const minimal: Promise<BundleMeasurement> = measureBundle({ entry: MINIMAL_ENTRY });
  // Keep a rejection from surfacing as unhandled before the first test awaits it.
  everything.catch(() => {});
  minimal.catch(() => {});

  it('builds the root entry, whole and as the minimal app uses it, for the browser without Node built-ins', async () => {
    for (const measurement of [await everything, await minimal]) {
      console.log(`\n${formatReport(measurement, { budget: BUDGETS[measurement.entry] })}\n`);
      expect(measurement.bundleImports).toEqual([]);
    }
  });

  it('keeps durable work (the outbox), cached reads and XState out of what the minimal app loads up front', async () => {
    const measurement = await minimal;
    const upFront = inputsOf(measurement, false);
    const lazy = inputsOf(measurement, true);
    expectOnlyLazy(
      [
        'src/runtime/durable-work.ts',
        'src/runtime/outbox-runner.ts',
        'src/runtime/durable-entry.ts',
        'machines/outbox/outbox.table.ts',
        'machines/outbox/outbox.actions.ts',
        'src/runtime/cached-reads.ts',
      ],
      upFront,
      lazy,
    );
    expect(measurement.chunks[0]?.loaded).toBe('entry');
    // esbuild places a module by the entries that reach it through static imports, used or not: the root entry
    // exports memoryStore and memoryCache, and the lazy chunks use them, so they land up front, uncalled. rolldown
    // keeps them lazy (below). When this fails, esbuild has changed: update README.md and docs/design.md.
    for (const part of ['src/stores/memory-store.ts', 'src/cache/memory-cache.ts'])
      expect(upFront, part).toContain(part);
    // XState comes only with failwise/machines (withInspector), not from the root entry.
    for (const { minifiedByPackage } of [measurement, await everything])
      expect(Object.keys(minifiedByPackage)).not.toContain('xstate');
  });

  it('leaves OpenTelemetry out: failwise/otel and @opentelemetry/api are in neither bundle, lazy chunks included', async () => {
    for (const measurement of [await minimal, await everything]) {
      const inputs = measurement.chunks.flatMap((chunk) => Object.keys(chunk.inputs));
      expect(inputs.filter((input) => /otel|opentelemetry/i.test(input))).toEqual([]);
      expect(Object.keys(measurement.minifiedByPackage)).not.toContain('@opentelemetry/api');
    }
  });

  it("measures what failwise's own code adds as the total minus its dependencies alone", async () => {
    for (const measurement of [await everything, await minimal]) {
      const { ownGzipBytes, ownAloneGzipBytes, dependenciesGzipBytes, totalGzipBytes, byPackage } =
        measurement;
      expect(ownGzipBytes).toBeGreaterThan(0);
      expect(dependenciesGzipBytes).toBeGreaterThan(0);
      // Two independent measures agree within 10%: the subtraction (own = total minus a separate bundle of the
      // dependency exports failwise imports) and the share of each chunk's gzip its inputs take. A dependency
      // bundle that missed exports (a broken dependencyEntry) would make `own` far larger than the share.
      expect(Math.abs(ownGzipBytes - byPackage['failwise']!)).toBeLessThanOrEqual(0.1 * ownGzipBytes);
      expect(Math.abs(dependenciesGzipBytes - byPackage['zod']!)).toBeLessThanOrEqual(
        0.1 * dependenciesGzipBytes,
      );
      // Bundled alone, own code compresses worse (no shared dictionary); a sanity bound, not a budget.
      expect(ownAloneGzipBytes).toBeGreaterThanOrEqual(ownGzipBytes);
      // Every chunk is there and compressed.
      for (const chunk of measurement.chunks) {
        expect(chunk.gzipBytes, chunk.file).toBeGreaterThan(0);
        expect(chunk.gzipBytes, chunk.file).toBeLessThan(chunk.minifiedBytes);
      }
      // The lazy chunks (durable work, cached reads) are outside what loads up front.
      expect(measurement.upFrontGzipBytes).toBeLessThan(totalGzipBytes);
    }
  });

  it('measures the dependencies from exactly the exports failwise imports, chunk by chunk', () => {
    const own =
      'import{setup as a,assign as b}from"xstate";import*as z from"zod/mini";z.strictObject(z.number());a.z;';
    expect(dependencyEntry(own).split('\n')).toEqual([
      "export { setup, assign } from 'xstate';",
      "export { strictObject, number } from 'zod/mini';",
    ]);
    // Another chunk's `z` is not zod's, and the bundle's own chunks are not dependencies.
    const chunks = [
      'import*as z from"zod/mini";z.string();',
      'import{a as b}from"./chunk-X.js";const z={total:1};z.total;',
    ];
    expect(dependencyEntry(chunks)).toBe("export { string } from 'zod/mini';");
  });

  it("checks each entry against issue 10's budget: the minimal app 16 KB up front, everything 30 KB in all", () => {
    expect(BUDGETS[MINIMAL_ENTRY]).toEqual({ what: 'upFrontGzipBytes', bytes: 16_384 });
    expect(BUDGETS[EVERYTHING_ENTRY]).toEqual({ what: 'totalGzipBytes', bytes: 30_720 });
    // A made-up measurement: the budget is inclusive, and each budget reads its own figure.
    const measurement = { upFrontGzipBytes: 1_000, totalGzipBytes: 5_000 } as BundleMeasurement;
    expect(withinBudget(measurement, { what: 'upFrontGzipBytes', bytes: 1_000 })).toBe(true);
    expect(withinBudget(measurement, { what: 'upFrontGzipBytes', bytes: 999 })).toBe(false);
    expect(withinBudget(measurement, { what: 'totalGzipBytes', bytes: 4_999 })).toBe(false);
    expect(withinBudget(measurement, { what: 'totalGzipBytes', bytes: 5_000 })).toBe(true);
    expect(withinBudget(measurement, undefined)).toBe(true);
  });

  // Issue 10's targets (16 KB up front, 30 KB in all) are not met yet: `npm run size` checks them and says so
  // (docs/design.md#bundle-budget, docs/benchmarks.md). Until they are, these keep today's sizes from growing.
  // Issue 11's hardening (input checks, error classes, pin and lease handling, flush results, bounded store
  // waits) added about 2 KB up front and 3 KB in all: the guards moved from 28 and 36 KB to 30 and 39 KB.
  // Issue 10, item 5 (#private executor members, zod custom checks, compact tables) took 1.4 KB up front and
  // 1.6 KB in all off (27.92 and 36.63 KB): the guards moved to 28.5 and 37.5 KB. The shared timer queue
  // (src/engine/timer-queue.ts) and the executor's selection masks added 0.9 KB (the minimal app 28.87 KB up
  // front, everything 37.59 KB in all), and TypeScript's `private` in the executor again (not `#private`, for
  // React Native: docs/design.md) 0.35 KB more (29.22 and 37.94 KB). client.fetch as a real fetch (a Request,
  // a URL, fetch's own init members checked) and isGraphQLQuery (issue 12, items 1 and 3) added 1.3 and 1.9 KB
  // (30.53 and 39.83 KB); the telemetry hooks (issue 13; the OTel code itself is in neither bundle) 0.16 and
  // 0.32 KB more (30.69 and 40.15 KB); streaming (issue 12, item 2) 0.25 and 0.23 KB (30.94 and 40.38 KB): the
  // guards moved to 31.3 and 40.8 KB. Server holds (issue 14: the request machine's checkingHold and holding
  // states in its table, the client's hold map, its events and health field) 0.73 and 0.78 KB (31.67 and
  // 41.16 KB): the guards moved to 31.8 and 41.3 KB. Per-entry claims in the outbox runner (issue 16, in the lazy
  // durable-work chunk) and the other merges of that session took everything to 41.72 KB: its guard moved to 42 KB.
  // Then: the outbox entry's lifecycle machine (issue 15, item 2; the lean executor's child machines, most of it
  // in the lazy durable-work chunk), the failback dwell and jittered re-probes (issue 14) and the claim changes
  // (issue 16, lazy) took them to 32.25 and 43.71 KB: the guards moved to 32.3 and 43.8 KB. The outbox's queue
  // facts (machines/outbox/queue-facts.ts: per-step work that no longer grows with the queue, issue 16; lazy) took
  // everything to 44.09 KB (the minimal app 32.29 KB), and decisions kept after a failed write (issue 16, lazy)
  // to 44.24 KB: its guard moved to 44.3 KB. A request in flight as one object with methods (request-run.ts, 0.5 KB
  // less heap per request, issue 10) rather than closures, and machines prepared once per client, took them to
  // 32.51 and 44.41 KB (methods name the client's parts as properties, which minify less than closure variables):
  // the guards moved to 32.6 and 44.5 KB. The executor's effects as codes rather than closures, exit sets as masks
  // and the other cuts of allocation per step (0.8 x the success path's time, 0.64 x its allocation) took them to
  // 32.79 and 44.68 KB; the executor's refusals named (a sendTo to a child that is not a running machine, a table
  // over 31 states) to 32.90 and 44.79 KB: the guards moved to 32.95 and 44.85 KB. The transports' parameter for
  // Node's response answered from its bytes (src/transports/bytes-response.ts, in neither bundle) took them to
  // 33.02 and 44.88 KB: the guards moved to 33.05 and 44.95 KB. A read's retry routed past the origins that
  // failed it, and the retry budget claimed only for a retry back to one (the request machine's planningRetry,
  // checkingRetrySlot and claimingRetrySlot in its table, two guards, two actions, selectOrigin's `avoid`) took
  // them to 33.35 and 45.19 KB: the guards moved to 33.4 and 45.25 KB.
  it('does not grow: the minimal app loads at most 33.4 KB gzip up front (issue 10 asks 16)', async () => {
    expect((await minimal).upFrontGzipBytes).toBeLessThanOrEqual(33.4 * 1024);
  });

  it('does not grow: everything, in all its chunks, within 45.25 KB gzip (issue 10 asks 30)', async () => {
    expect((await everything).totalGzipBytes).toBeLessThanOrEqual(45.25 * 1024);
  });
});

describe('the minimal app built with rolldown, what Vite builds with (scripts/rolldown-bundle.ts)', () => {
  const minimal: Promise<RolldownMeasurement> = measureWithRolldown(MINIMAL_ENTRY);
  minimal.catch(() => {});
  const modulesOf = async (loaded: RolldownChunk['loaded']): Promise<string[]> =>
    (await minimal).chunks.filter((chunk) => chunk.loaded === loaded).flatMap((chunk) => chunk.modules);

  it('loads no outbox, no cache and no XState up front: memoryStore and memoryCache stay in the lazy chunks', async () => {
    const upFront = await modulesOf('up-front');
    const lazy = await modulesOf('lazy');
    expectOnlyLazy(
      [
        'src/runtime/durable-work.ts',
        'src/runtime/outbox-runner.ts',
        'machines/outbox/outbox.table.ts',
        'src/stores/memory-store.ts',
        'src/stores/store-input.ts',
        'src/runtime/cached-reads.ts',
        'src/cache/memory-cache.ts',
      ],
      upFront,
      lazy,
    );
    // What it does load up front: the client, its two machines and the lean executor.
    for (const part of [
      'src/runtime/create-failover-client.ts',
      'machines/request/request.table.ts',
      'machines/origin-health/origin-health.table.ts',
      'src/engine/lean-actor.ts',
    ])
      expect(upFront, part).toContain(part);
    expect([...upFront, ...lazy].filter((id) => id.includes('node_modules/xstate/'))).toEqual([]);
  });

  it('measures up front as part of the total, each chunk gzipped on its own', async () => {
    const { upFrontGzipBytes, totalGzipBytes, chunks } = await minimal;
    expect(upFrontGzipBytes).toBeGreaterThan(0);
    expect(totalGzipBytes).toBe(chunks.reduce((total, chunk) => total + chunk.gzipBytes, 0));
    expect(upFrontGzipBytes).toBeLessThan(totalGzipBytes);
    expect(chunks.filter((chunk) => chunk.loaded === 'up-front').length).toBeGreaterThan(0);
  });
});
