// Many senders under real crashes: three worker processes (test/fixtures/pg-worker.ts) share one
// outbox on a real PostgreSQL server through per-entry claims, against a loopback origin that deduplicates by
// Idempotency-Key, and are SIGKILLed at random points; the survivors send what the dead ones claimed or left.
// Afterwards no accepted write is lost, none was applied twice, and each orderKey's writes were applied in
// order. The trials live in test/helpers/pg-crash-trials.ts, shared with scripts/crash-soak-pg.ts.
//
//   FAILWISE_PG_CRASH_TRIALS=30 npx vitest run test/stores/postgres-crash.test.ts   more kills
//   FAILWISE_PG_CRASH_SEED=1234 npx vitest run test/stores/postgres-crash.test.ts   another plan
// `npm test` runs one fixed plan with a few kills; `npm run crash-soak:pg` runs 100 with random plans.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { formatPgReport, runPgCrashTrials } from '../helpers/pg-crash-trials.js';
import { startPostgres, type PostgresServer } from '../helpers/postgres-server.js';

const TRIALS = Number(process.env.FAILWISE_PG_CRASH_TRIALS ?? 3);
const SEED = Number(process.env.FAILWISE_PG_CRASH_SEED ?? 20_261_202);

let server: PostgresServer;
beforeAll(async () => {
  server = await startPostgres();
}, 60_000);
afterAll(() => server?.stop());

describe('three workers on one PostgreSQL outbox across SIGKILLs', () => {
  it(
    `loses no accepted write, applies none twice and keeps each key's order over ${TRIALS} kills (seed ${SEED})`,
    async () => {
      expect(Number.isInteger(TRIALS) && TRIALS > 0, 'FAILWISE_PG_CRASH_TRIALS: a positive integer').toBe(
        true,
      );
      const report = await runPgCrashTrials({ seed: SEED, trials: TRIALS, connection: server.url() });
      const summary = formatPgReport(report);
      console.log(`PostgreSQL crash trials (replay with FAILWISE_PG_CRASH_SEED=${SEED}):\n${summary}`);

      expect(report.violations, summary).toEqual([]);
      expect(report.kills, summary).toBeGreaterThanOrEqual(TRIALS);
      // The trials put the queue to work: writes accepted and applied, resends answered from a stored key.
      expect(report.accepted, summary).toBeGreaterThan(0);
      expect(report.applied, summary).toBeGreaterThanOrEqual(report.accepted);
      expect(report.replays, summary).toBeGreaterThan(0);
    },
    TRIALS * 20_000 + 60_000,
  );
});
