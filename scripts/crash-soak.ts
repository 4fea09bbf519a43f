/**
 * Crash soak of durable work (rule 10): the trials of test/runtime/durable-crash.test.ts, many more
 * of them. A child process submits durable writes to a loopback origin that deduplicates by key and is
 * SIGKILLed at random points; after each restart no accepted write may be lost and none applied twice.
 *
 *   npx tsx scripts/crash-soak.ts [trials] [--seed N] [--parallel N] [--chains N] [--fixture path]
 *
 * trials: SIGKILLs to deliver (default 500). --seed replays a plan (printed at the start and in the summary).
 * --fixture runs another child (a mutant copy of test/fixtures/durable-writer.ts, say). Exits 1 on any
 * violation. See test/helpers/crash-trials.ts for the design.
 */
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { formatReport, runCrashTrials } from '../test/helpers/crash-trials.js';

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    seed: { type: 'string' },
    parallel: { type: 'string' },
    chains: { type: 'string' },
    fixture: { type: 'string' },
  },
});

const integer = (text: string | undefined, name: string, fallback: number): number => {
  if (text === undefined) return fallback;
  const value = Number(text);
  if (!Number.isInteger(value) || value < 0)
    throw new Error(`crash-soak: ${name}: expected an integer >= 0, got ${text}`);
  return value;
};

const trials = Math.max(1, integer(positionals[0], 'trials', 500));
const seed = integer(values.seed, '--seed', Math.floor(Math.random() * 2 ** 32));
const parallel = integer(values.parallel, '--parallel', 2);
const chains = values.chains === undefined ? Math.ceil(trials / 10) : integer(values.chains, '--chains', 1);

console.log(
  `crash soak: ${trials} SIGKILLs over ${chains} SQLite files, ${parallel} at a time, seed ${seed}`,
);
let chainsDone = 0;
const report = await runCrashTrials({
  seed,
  trials,
  chains,
  parallel,
  ...(values.fixture === undefined ? {} : { fixture: resolve(values.fixture) }),
  log: (line) => {
    if (!line.includes(' done: ')) return;
    chainsDone++;
    console.log(`[${chainsDone}/${chains}] ${line}`);
  },
});
console.log(formatReport(report));
if (report.violations.length > 0 || report.kills < trials) {
  console.log(`FAILED (seed ${seed}): npx tsx scripts/crash-soak.ts ${trials} --seed ${seed}`);
  process.exitCode = 1;
}
