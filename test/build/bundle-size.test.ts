import { describe, expect, it } from 'vitest';

import {
  BUDGETS,
  EVERYTHING_BUDGET_GZIP_BYTES,
  EVERYTHING_ENTRY,
  MINIMAL_ENTRY,
  MINIMAL_UP_FRONT_BUDGET_GZIP_BYTES,
  dependencyEntry,
  formatReport,
  measureBundle,
  withinBudget,
  type BundleMeasurement,
} from '../../scripts/check-bundle-size.js';

/** The inputs of a measurement's chunks: those loaded up front, or those loaded by import(). */
const inputsOf = (measurement: BundleMeasurement, lazy: boolean): string[] =>
  measurement.chunks
    .filter((chunk) => (chunk.loaded === 'lazy') === lazy)
    .flatMap((chunk) => Object.keys(chunk.inputs));

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
    for (const part of [
      'src/runtime/durable-work.ts',
      'src/runtime/outbox-runner.ts',
      'src/runtime/durable-entry.ts',
      'machines/outbox/outbox.table.ts',
      'machines/outbox/outbox.actions.ts',
      'src/runtime/cached-reads.ts',
    ]) {
      expect(upFront, part).not.toContain(part);
      expect(lazy, part).toContain(part);
    }
    expect(measurement.chunks[0]?.loaded).toBe('entry');
    // XState comes only with failwise/machines (withInspector), not from the root entry.
    for (const { minifiedByPackage } of [measurement, await everything])
      expect(Object.keys(minifiedByPackage)).not.toContain('xstate');
  });

  it("measures what failwise's own code adds as the total minus its dependencies alone", async () => {
    for (const measurement of [await everything, await minimal]) {
      const { ownGzipBytes, ownAloneGzipBytes, dependenciesGzipBytes, totalGzipBytes } = measurement;
      expect(ownGzipBytes).toBeGreaterThan(0);
      expect(ownGzipBytes).toBe(totalGzipBytes - dependenciesGzipBytes);
      // Bundled alone, own code compresses worse (no shared dictionary); a sanity bound, not a budget.
      expect(ownAloneGzipBytes).toBeGreaterThanOrEqual(ownGzipBytes);
      const chunks = measurement.chunks.map((chunk) => chunk.gzipBytes);
      expect(totalGzipBytes).toBe(chunks.reduce((sum, bytes) => sum + bytes, 0));
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

  it('checks each entry against its budget: the minimal app up front, everything in all its chunks', async () => {
    expect(BUDGETS[MINIMAL_ENTRY]).toEqual({
      what: 'upFrontGzipBytes',
      bytes: MINIMAL_UP_FRONT_BUDGET_GZIP_BYTES,
    });
    expect(BUDGETS[EVERYTHING_ENTRY]).toEqual({
      what: 'totalGzipBytes',
      bytes: EVERYTHING_BUDGET_GZIP_BYTES,
    });
    const measurement = await minimal;
    expect(withinBudget(measurement, { what: 'upFrontGzipBytes', bytes: measurement.upFrontGzipBytes })).toBe(
      true,
    );
    expect(
      withinBudget(measurement, { what: 'upFrontGzipBytes', bytes: measurement.upFrontGzipBytes - 1 }),
    ).toBe(false);
  });

  // Issue 10's targets (16 KB up front, 30 KB in all) are not met yet: `npm run size` checks them and says so
  // (docs/design.md#bundle-budget, docs/benchmarks.md). Until they are, these keep today's sizes from growing.
  it('does not grow: the minimal app loads at most 28 KB gzip up front (issue 10 asks 16)', async () => {
    expect((await minimal).upFrontGzipBytes).toBeLessThanOrEqual(28 * 1024);
  });

  it('does not grow: everything, in all its chunks, within 36 KB gzip (issue 10 asks 30)', async () => {
    expect((await everything).totalGzipBytes).toBeLessThanOrEqual(36 * 1024);
  });
});
