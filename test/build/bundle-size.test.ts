import { describe, expect, it } from 'vitest';

import {
  OWN_BUDGET_GZIP_BYTES,
  TOTAL_BUDGET_GZIP_BYTES,
  dependencyEntry,
  formatReport,
  measureBundle,
  type BundleMeasurement,
} from '../../scripts/check-bundle-size.js';

describe('browser bundle of the failwise entry (src/index.ts)', () => {
  // One build for all assertions. It is browser-only and nothing is external, so it rejects with
  // esbuild's "Could not resolve" if anything reachable from the entry imports a Node built-in.
  const measured: Promise<BundleMeasurement> = measureBundle();
  // Keep a rejection from surfacing as unhandled before the first test awaits it.
  measured.catch(() => {});

  it('builds for the browser without Node built-ins', async () => {
    const measurement = await measured;
    console.log(`\n${formatReport(measurement)}\n`);
    expect(measurement.bundleImports).toEqual([]);
  });

  it(`keeps what failwise's own code adds to the bundle within ${OWN_BUDGET_GZIP_BYTES / 1024} KB gzip`, async () => {
    const { ownGzipBytes, ownAloneGzipBytes, dependenciesGzipBytes, totalGzipBytes } = await measured;
    expect(ownGzipBytes).toBeGreaterThan(0);
    expect(ownGzipBytes).toBe(totalGzipBytes - dependenciesGzipBytes);
    // Bundled alone, own code compresses worse (no shared dictionary); a sanity bound, not the budget.
    expect(ownAloneGzipBytes).toBeGreaterThanOrEqual(ownGzipBytes);
    expect(ownGzipBytes).toBeLessThanOrEqual(OWN_BUDGET_GZIP_BYTES);
  });

  it('measures the dependencies from exactly the exports failwise imports', () => {
    const own =
      'import{setup as a,assign as b}from"xstate";import*as z from"zod/mini";z.strictObject(z.number());a.z;';
    expect(dependencyEntry(own).split('\n')).toEqual([
      "export { setup, assign } from 'xstate';",
      "export { strictObject, number } from 'zod/mini';",
    ]);
  });

  it(`keeps the whole bundle within ${TOTAL_BUDGET_GZIP_BYTES / 1024} KB gzip`, async () => {
    const { totalGzipBytes, ownGzipBytes } = await measured;
    expect(totalGzipBytes).toBeGreaterThanOrEqual(ownGzipBytes);
    expect(totalGzipBytes).toBeLessThanOrEqual(TOTAL_BUDGET_GZIP_BYTES);
  });
});
