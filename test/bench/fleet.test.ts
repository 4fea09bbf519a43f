import { describe, expect, it } from 'vitest';
import { fleetSummary, fleetTable } from '../../bench/fleet/fleet-report.js';
import { fleetSvg } from '../../bench/fleet/fleet-svg.js';
import { DURATION_MS } from '../../bench/fleet/fleet-world.js';
import { runFleet, type FleetReport } from '../../bench/fleet/run-fleet.js';

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
