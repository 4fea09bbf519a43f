import type { FleetReport, PolicyFigures } from './run-fleet.js';

/** The console table: one column per policy. */
export function fleetTable(report: FleetReport): string {
  const { policies, options } = report;
  const cell = (p: PolicyFigures, pick: (p: PolicyFigures) => string | number | undefined) => {
    const value = pick(p);
    return value === undefined ? '-' : String(value);
  };
  const rows: Array<[string, (p: PolicyFigures) => string | number | undefined]> = [
    ['logical requests', (p) => p.requests],
    ['attempts', (p) => p.attempts],
    ['succeeded', (p) => p.succeeded],
    ['outage amplification (attempts / request)', (p) => p.outageAmplification],
    ['outage load on primary / request', (p) => p.outagePrimaryLoadPerRequest],
    ['recovery peak-to-mean (primary)', (p) => p.recoveryPeakToMean],
    ['recovery peak / pre-outage mean', (p) => p.recoveryPeakToSteady],
    ['duplicate writes applied', (p) => p.duplicateWrites],
    ['writes applied', (p) => p.writesApplied],
    ['probes', (p) => p.probes],
    ['time to fail over, ms (median/p95/max)', (p) => p.failoverMs && triple(p.failoverMs)],
    ['time to fail back, ms (median/p95/max)', (p) => p.failbackMs && triple(p.failbackMs)],
    [
      'switches per client (mean/max)',
      (p) => p.switchesPerClient && `${p.switchesPerClient.mean}/${p.switchesPerClient.max}`,
    ],
    ['most switches in one dwell window', (p) => p.maxSwitchesPerDwell],
    [
      'clients that never failed over / back',
      (p) =>
        p.clientsNotFailedOver !== undefined
          ? `${p.clientsNotFailedOver}/${p.clientsNotFailedBack}`
          : undefined,
    ],
    ['real time, ms', (p) => p.realMs],
  ];
  const header = ['', ...policies.map((p) => p.policy)];
  const body = rows.map(([label, pick]) => [label, ...policies.map((p) => cell(p, pick))]);
  const widths = header.map((_, i) => Math.max(...[header, ...body].map((row) => row[i]!.length)));
  const line = (row: string[]) => row.map((c, i) => c.padEnd(widths[i]!)).join('  ');
  return [
    `fleet: ${options.clients} clients, ${options.ratePerSecond} requests/s each, seed ${options.seed}, ${report.realMs} ms real`,
    line(header),
    line(widths.map((w) => '-'.repeat(w))),
    ...body.map(line),
  ].join('\n');
}

const triple = (p: { median: number; p95: number; max: number }) => `${p.median}/${p.p95}/${p.max}`;

/** The last console line: the headline figures, failwise's default policy first. */
export function fleetSummary(report: FleetReport) {
  const of = (name: string) => report.policies.find((p) => p.policy === name)!;
  const failwise = of('failwise');
  return {
    clients: report.options.clients,
    seed: report.options.seed,
    ratePerSecond: report.options.ratePerSecond,
    amplification: failwise.outageAmplification,
    naiveAmplification: of('naive').outageAmplification,
    exponentialAmplification: of('exponential').outageAmplification,
    recoveryPeakToMean: failwise.recoveryPeakToMean,
    naiveRecoveryPeakToMean: of('naive').recoveryPeakToMean,
    exponentialRecoveryPeakToMean: of('exponential').recoveryPeakToMean,
    recoveryPeakToSteady: failwise.recoveryPeakToSteady,
    duplicateWrites: failwise.duplicateWrites,
    switches: failwise.switchesPerClient?.mean,
    maxSwitchesPerDwell: failwise.maxSwitchesPerDwell,
    failoverMs: failwise.failoverMs?.median,
    failbackMs: failwise.failbackMs?.median,
    realMs: report.realMs,
  };
}
