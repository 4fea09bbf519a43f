import { describe, expect, it } from 'vitest';
import { fleetSummary, fleetTable } from '../../bench/fleet/fleet-report.js';
import { fleetSvg } from '../../bench/fleet/fleet-svg.js';
import { DURATION_MS } from '../../bench/fleet/fleet-world.js';
import { runFleet, type FleetReport } from '../../bench/fleet/run-fleet.js';
import { backOnlineTable, runBackOnline } from '../../bench/fleet/back-online.js';

/** Figures without the real time they took, which is the one thing a rerun may change. */
const figuresOf = (report: FleetReport) =>
  report.policies.map((policy) => ({ ...policy, realMs: undefined }));

// The fleet simulator (npm run bench:fleet) with few clients: its report's shape and invariants, not its timing.
describe('fleet simulator', () => {
  it('reports every policy on the same requests, with no duplicate write, the same figures for the same seed', async () => {
    const options = { clients: 20, seed: 7, ratePerSecond: 0.5 };
    const first = await runFleet(options);
    const again = await runFleet(options);
    expect(figuresOf(again)).toEqual(figuresOf(first));

    expect(first.policies.map((p) => p.policy)).toEqual(['failwise', 'naive', 'exponential']);
    const [failwise, naive, exponential] = first.policies;
    for (const p of first.policies) {
      expect(p.requests).toBe(failwise!.requests);
      expect(p.requests).toBeGreaterThan(0);
      expect(p.attempts).toBeGreaterThanOrEqual(p.requests - p.succeeded);
      expect(p.duplicateWrites).toBe(0);
      expect(p.primaryPerSecond).toHaveLength(DURATION_MS / 1000);
    }
    // The baselines send every attempt to the primary: 4 attempts for each request during a full outage.
    expect(naive!.outageAmplification).toBe(4);
    expect(exponential!.outageAmplification).toBeGreaterThan(3.5);
    // failwise fails each client over and back, and sends fewer attempts than either baseline.
    expect(failwise!.clientsNotFailedOver).toBe(0);
    expect(failwise!.clientsNotFailedBack).toBe(0);
    expect(failwise!.outageAmplification).toBeLessThan(naive!.outageAmplification);
    expect(failwise!.failoverMs!.median).toBeGreaterThan(0);
    expect(failwise!.failbackMs!.median).toBeGreaterThan(0);

    const summary = fleetSummary(first);
    expect(Object.keys(summary)).toEqual(
      expect.arrayContaining([
        'amplification',
        'naiveAmplification',
        'recoveryPeakToMean',
        'duplicateWrites',
        'switches',
        'failoverMs',
        'failbackMs',
      ]),
    );
    expect(summary.amplification).toBe(failwise!.outageAmplification);
    expect(fleetTable(first)).toContain('outage amplification');
    const svg = fleetSvg(first);
    expect(svg.match(/<polyline/g)).toHaveLength(3);
    expect(svg).toContain('simulated time (s)');
  }, 120_000);
});

// The back-online phase of npm run bench:fleet, small: phones that all come back online in one second.
describe('fleet back online in one second', () => {
  it('spreads the outbox retries with jitter: no later wave, drained sooner, fewer sends, every write sent', async () => {
    const options = { phones: 20, seed: 3, writesPerPhone: 1, capacityPerSecond: 2 };
    const report = await runBackOnline(options);
    expect(await runBackOnline(options)).toEqual(report);
    const [full, none] = report.runs;
    expect([full!.jitter, none!.jitter]).toEqual(['full', 'none']);
    for (const run of report.runs) {
      expect(run.left).toBe(0);
      // Every phone's first send arrives in the first second or two: the wave itself, the same either way.
      expect(run.peak).toBeGreaterThanOrEqual(options.phones);
    }
    // Without jitter the phones that got a 503 come back together 40 s later, and again after each wait.
    expect(none!.peakAfterFirstMinute).toBeGreaterThan(options.phones / 2);
    expect(full!.peakAfterFirstMinute).toBeLessThanOrEqual(options.capacityPerSecond * 2);
    expect(full!.drainedAfterS).toBeLessThan(none!.drainedAfterS / 10);
    expect(full!.sendsPerWrite).toBeLessThan(none!.sendsPerWrite);
    expect(backOnlineTable(report)).toContain('20 phones back online in one second');
  }, 60_000);
});
