// Rule 10 under real crashes: a child process (test/fixtures/durable-writer.ts) submits durable
// writes to a loopback origin that deduplicates by Idempotency-Key, on a SQLite file, and is SIGKILLed at
// random points, then started again on the same file; after the last run drains, no accepted write is lost
// and none was applied twice. The trials live in test/helpers/crash-trials.ts, shared with
// scripts/crash-soak.ts (many more trials).
//
//   FAILWISE_CRASH_TRIALS=200 npx vitest run test/runtime/durable-crash.test.ts   more kills
//   FAILWISE_CRASH_SEED=1234 npx vitest run test/runtime/durable-crash.test.ts    another plan, or a printed one
// `npm test` runs one fixed plan (timing still varies); random plans are `npm run crash-soak`'s job.
import { describe, expect, it } from 'vitest';
import { OUTBOX_LEASE_TTL_MS } from '../../src/runtime/outbox-runner.js';
import {
  formatReport,
  runCrashTrials,
  runRestartTrial,
  startDedupingOrigin,
} from '../helpers/crash-trials.js';

const TRIALS = Number(process.env.FAILWISE_CRASH_TRIALS ?? 50);
const SEED = Number(process.env.FAILWISE_CRASH_SEED ?? 20_261_201);

describe('the deduplicating origin (the crash test oracle)', () => {
  it('answers a known key from what it stored, and counts a payload applied under another key as a double apply', async () => {
    const origin = await startDedupingOrigin();
    try {
      const post = (key: string, payload: string) =>
        fetch(`${origin.url}/apply`, {
          method: 'POST',
          headers: { 'idempotency-key': key },
          body: JSON.stringify({ payload }),
        }).then(async (response) => [response.status, await response.text()]);
      const first = await post('k1', 'p1');
      expect(await post('k1', 'p1')).toEqual(first);
      expect(origin.violations).toEqual([]);
      expect(origin.replays).toBe(1);
      await post('k2', 'p1');
      expect(origin.applied.get('p1')).toEqual(['k1', 'k2']);
      expect(origin.violations).toEqual([expect.stringContaining('double apply: payload p1')]);
    } finally {
      await origin.close();
    }
  });
});

describe('durable writes across SIGKILLs (rule 10)', () => {
  it(
    `loses no accepted write and applies none twice over ${TRIALS} kills (seed ${SEED})`,
    async () => {
      expect(Number.isInteger(TRIALS) && TRIALS > 0, 'FAILWISE_CRASH_TRIALS: a positive integer').toBe(true);
      expect(Number.isInteger(SEED) && SEED >= 0, 'FAILWISE_CRASH_SEED: an integer >= 0').toBe(true);
      const report = await runCrashTrials({ seed: SEED, trials: TRIALS, childLimitMs: 20_000 });
      const summary = formatReport(report);
      console.log(`durable crash trials (replay with FAILWISE_CRASH_SEED=${SEED}):\n${summary}`);

      expect(report.violations, summary).toEqual([]);
      expect(report.doubleApplies, summary).toBe(0);
      expect(report.kills, summary).toBeGreaterThanOrEqual(TRIALS);
      // The trials must have put the outbox to work: entries left behind by kills, resends answered from a
      // stored key, accepted writes the origin had not seen yet.
      expect(report.accepted, summary).toBeGreaterThan(0);
      expect(report.applied, summary).toBeGreaterThanOrEqual(report.accepted);
      if (TRIALS >= 20) {
        expect(report.leftByKills, summary).toBeGreaterThan(0);
        expect(report.replays, summary).toBeGreaterThan(0);
        expect(report.acceptedAs.deferred ?? 0, summary).toBeGreaterThan(0);
      }
    },
    // ~10 s for 50 kills on 2 cores; the bound leaves room for a loaded machine. Each child is bounded too.
    Math.max(90_000, TRIALS * 2_000),
  );
});

describe('a process SIGKILLed mid-sync, then restarted (a lease dies with its holder)', () => {
  // Fixed cases: how many writes the first run submits, and which of its POSTs it dies in (holding the lease).
  it.each([
    { payloads: 3, killAt: 1 },
    { payloads: 6, killAt: 4 },
  ])(
    'flushes everything at once, each write applied once ($payloads writes, killed in POST $killAt)',
    async ({ payloads, killAt }) => {
      const trial = await runRestartTrial({ payloads, killAt });
      expect(trial.violations).toEqual([]);
      expect(trial.killed).toBe(true);
      expect(trial.left).toBeGreaterThan(0);
      // One flush sent all the dead run left, nothing pending: no wait for its lease to expire.
      expect(trial.flushes).toEqual([[trial.left, 0, '-']]);
      expect(trial.restartMs).toBeLessThan(OUTBOX_LEASE_TTL_MS / 3);
    },
    60_000,
  );
});
