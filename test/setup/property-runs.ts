// How many cases a property runs. `npm test` runs the count the file writes. Under Stryker (`npm run mutate`,
// vitest.stryker.config.ts sets FAILWISE_MUTATE_RUNS), a mutant of a machine reruns every property that covers
// it, and a surviving one reruns them all: there, each property runs at most that many cases, which lowers
// what a mutant must get past (docs/verification.md, "Mutation testing" says by how much).
const fromEnv = process.env['FAILWISE_MUTATE_RUNS'];
const cap = fromEnv === undefined ? Infinity : Number(fromEnv);
if (!(Number.isInteger(cap) && cap > 0) && cap !== Infinity)
  throw new Error(`FAILWISE_MUTATE_RUNS: expected a positive integer, got ${fromEnv}`);

/** `runs`, or fewer under Stryker (FAILWISE_MUTATE_RUNS). */
export const propertyRuns = (runs: number): number => Math.min(runs, cap);
