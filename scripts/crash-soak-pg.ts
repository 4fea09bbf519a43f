/**
 * Crash soak of many senders on one PostgreSQL queue: three worker processes share one outbox
 * through per-entry claims and are SIGKILLed at random points, against a loopback origin that deduplicates by
 * key. After every chain no accepted write may be lost, none applied twice, and each orderKey's writes must
 * have been applied in order. It starts its own PostgreSQL server (test/helpers/postgres-server.ts) and stops
 * it at the end.
 *
 *   npx tsx scripts/crash-soak-pg.ts [trials] [--seed N] [--chains N]
 *
 * trials: SIGKILLs to deliver (default 100). --seed replays a plan (printed at the start and in the summary;
 * timing still varies). Exits 1 on any violation. See test/helpers/pg-crash-trials.ts for the design.
 */
import { parseArgs } from 'node:util';
import { formatPgReport, runPgCrashTrials } from '../test/helpers/pg-crash-trials.js';
import { startPostgres } from '../test/helpers/postgres-server.js';

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: { seed: { type: 'string' }, chains: { type: 'string' } },
});

const integer = (text: string | undefined, name: string, fallback: number): number => {
  if (text === undefined) return fallback;
  const value = Number(text);
  if (!Number.isInteger(value) || value < 0)
    throw new Error(`crash-soak-pg: ${name}: expected an integer >= 0, got ${text}`);
  return value;
};

const trials = Math.max(1, integer(positionals[0], 'trials', 100));
const seed = integer(values.seed, '--seed', Math.floor(Math.random() * 2 ** 32));
const chains = integer(values.chains, '--chains', Math.max(1, Math.ceil(trials / 20)));

console.log(
  `crash soak (PostgreSQL): ${trials} SIGKILLs of 3 workers sharing a queue, ${chains} schemas, seed ${seed}`,
);
const server = await startPostgres();
try {
  const report = await runPgCrashTrials({
    seed,
    trials,
    chains,
    connection: server.url(),
    log: (line) => console.log(line),
  });
  console.log(formatPgReport(report));
  if (report.violations.length > 0 || report.kills < trials) {
    console.log(`FAILED (seed ${seed}): npx tsx scripts/crash-soak-pg.ts ${trials} --seed ${seed}`);
    process.exitCode = 1;
  }
} finally {
  await server.stop();
}
