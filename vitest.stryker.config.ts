// The tests Stryker runs against each mutant of src/policy and machines/ (`npm run mutate`, stryker.config.json).
// Only the suites that exercise these layers directly: unit tests, the machines' tests and tables, the
// property tests and the lean-engine differentials. The loopback, store, browser and process tests also reach
// policy and machine code, but through servers, child processes and real time: too slow to run per mutant on
// a shared 2-core machine, and Stryker runs vitest in worker threads, not the forks they need.
import { defineConfig } from 'vitest/config';
import { BaseSequencer, type TestSpecification } from 'vitest/node';
import base from './vite.config.js';

/** Fast, focused suites first, the long property runs last. */
const ALL = ['test/policy/', 'test/machines/', 'test/engine/', 'test/properties/'];
/**
 * `FAILWISE_MUTATE_TESTS=test/policy/` (comma-separated) narrows the run to some of these suites, to test a
 * subset of the mutants (`npm run mutate -- --mutate 'src/policy/**'`) in less time.
 */
const ORDER = process.env['FAILWISE_MUTATE_TESTS']?.split(',') ?? ALL;
const rank = (spec: TestSpecification) => {
  const index = ORDER.findIndex((dir) => spec.moduleId.includes(`/${dir}`));
  return index === -1 ? ORDER.length : index;
};

/**
 * Stryker stops at a mutant's first failing test, and runs every test for a mutant it cannot map to tests (a
 * module-level value, such as a machine's config or a zod schema). Vitest's own order puts the largest files
 * first, so such a mutant would wait for the property runs before the table or schema test that kills it.
 */
class FastFirstSequencer extends BaseSequencer {
  override sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    return Promise.resolve(
      [...files].sort((a, b) => rank(a) - rank(b) || a.moduleId.localeCompare(b.moduleId)),
    );
  }
}

/**
 * The most cases any property or differential run makes here (`npm test` runs the counts the files write): a
 * mutant of a machine reruns every property that covers it, and a survivor all of them. 500 is the least that
 * still reaches every state and path the suites' own reach checks ask for (400 misses the request machine's
 * `handingOver`, 250 a probe failure that sent nothing). docs/verification.md, "Mutation testing".
 */
const MUTATE_RUNS = '500';

// Spread, not mergeConfig: mergeConfig appends arrays, and `include` must replace the base's `test/**`.
export default defineConfig({
  // The base config builds @fast-check/vitest's chains on demand (test/setup/lazy-fast-check-chains.ts).
  ...base,
  test: {
    ...base.test,
    // The files of one mutant run share one worker and its loaded modules (Stryker's runner allows one worker):
    // these suites keep no state between files (the one environment change, TZ in retry-after.test.ts, is
    // restored), and the dry run, which must pass, runs all of them in that one worker.
    isolate: false,
    include: ORDER.map((dir) =>
      dir === 'test/engine/' ? `${dir}*.differential.property.test.ts` : `${dir}**/*.test.ts`,
    ),
    sequence: { sequencer: FastFirstSequencer },
    // Read by test/setup/property-runs.ts and test/engine/differential-harness.ts (DIFF_RUNS).
    env: { FAILWISE_MUTATE_RUNS: MUTATE_RUNS, DIFF_RUNS: MUTATE_RUNS },
  },
});
