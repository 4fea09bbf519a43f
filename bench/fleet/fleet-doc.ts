import { ERROR_RATE, OUTAGE, OVERLOAD_CAPACITY, OVERLOAD_RETRY_AFTER_S, PHASES } from './fleet-world.js';
import { READ_SHARE } from './workload.js';
import type { FleetReport, PolicyFigures } from './run-fleet.js';
import { fleetSummary } from './fleet-report.js';

/** The fleet section of docs/benchmarks.md lies between these markers; `npm run bench` keeps it as it is. */
export const FLEET_START =
  '<!-- fleet:start (written by `npm run bench:fleet -- --write`; bench/fleet/fleet-doc.ts) -->';
export const FLEET_END = '<!-- fleet:end -->';

/** `doc` with its fleet section replaced by `section` (or, if it has none, with `section` at its end). */
export function withFleetSection(doc: string, section: string): string {
  const start = doc.indexOf(FLEET_START);
  const end = doc.indexOf(FLEET_END);
  if (start < 0 || end < start) return `${doc.trimEnd()}\n\n${section}\n`;
  return doc.slice(0, start) + section + doc.slice(end + FLEET_END.length);
}

/** `fresh` (a newly rendered docs/benchmarks.md) with the fleet section `old` had, if any. */
export function keepFleetSection(fresh: string, old: string): string {
  const start = old.indexOf(FLEET_START);
  const end = old.indexOf(FLEET_END);
  return start < 0 || end < start ? fresh : withFleetSection(fresh, old.slice(start, end + FLEET_END.length));
}

interface Meta {
  command: string;
  date: string;
  node: string;
  cores: number;
}

const pct = (x: number) => `${Math.round(x * 100)} %`;
const s = (ms: number | undefined) =>
  ms === undefined || Number.isNaN(ms) ? '-' : `${(ms / 1000).toFixed(1)} s`;

/** The fleet section: how it was run, the figures per policy, the targets, and the plot. */
export function fleetSection(report: FleetReport, meta: Meta): string {
  const summary = fleetSummary(report);
  const [failwise, naive, exponential] = ['failwise', 'naive', 'exponential'].map((name) =>
    report.policies.find((p) => p.policy === name)!,
  ) as [PolicyFigures, PolicyFigures, PolicyFigures];
  const phases = PHASES.map((p) => `${p.name} ${p.from / 1000}–${p.to / 1000} s`).join(', ');
  const row = (label: string, pick: (p: PolicyFigures) => string) =>
    `| ${label} | ${pick(failwise)} | ${pick(naive)} | ${pick(exponential)} |`;
  const target = (label: string, measured: string, goal: string, met: boolean) =>
    `| ${label} | ${measured} | ${goal} | ${met ? 'yes' : 'no'} |`;
  return [
    FLEET_START,
    '',
    '## 7. A fleet through an outage',
    '',
    `Measured with \`${meta.command}\` on ${meta.date} (Node ${meta.node}, ${meta.cores} cores, shared with other work); the run took ${s(report.realMs)} of real time. Deterministic: the same seed gives the same figures (\`test/bench/fleet.test.ts\`).`,
    '',
    `${report.options.clients} clients, each the real failwise client (\`createFailoverClient\`, default policy, its own seeded jitter and its own simulated transport), all on one simulated clock (bench/fleet/fleet-clock.ts), send ${report.options.ratePerSecond} requests a second on average (random arrivals, seed ${report.options.seed}; ${pct(READ_SHARE)} GETs, the rest POSTs with an idempotency key) to a simulated primary and backup (bench/fleet/fleet-world.ts). The primary's script: ${phases}. Outage: every connection refused. Errors: ${pct(ERROR_RATE)} of answers fail, half of them 503, half a connection lost after a write was applied. Overload: the primary serves ${pct(OVERLOAD_CAPACITY)} of the fleet's mean load a second and answers the rest 503 \`Retry-After: ${OVERLOAD_RETRY_AFTER_S}\`. Each origin applies a write once per idempotency key it has seen (the backup does not see the primary's keys). The two baselines are hand-written in bench/fleet/baseline-clients.ts, not failwise: they meet the very same requests, know only the primary and never read Retry-After.`,
    '',
    '| figure | failwise (default policy) | naive: 3 immediate retries | exponential backoff, no jitter |',
    '| --- | --- | --- | --- |',
    row('logical requests', (p) => p.requests.toLocaleString('en-US')),
    row('attempts (all phases)', (p) => p.attempts.toLocaleString('en-US')),
    row('succeeded', (p) => p.succeeded.toLocaleString('en-US')),
    row('amplification during the outage (attempts / request begun in it)', (p) =>
      p.outageAmplification.toFixed(3),
    ),
    row('requests at the primary during the outage / request', (p) =>
      p.outagePrimaryLoadPerRequest.toFixed(3),
    ),
    row('recovery: peak second / mean second at the primary, 60 s after the outage', (p) =>
      p.recoveryPeakToMean.toFixed(2),
    ),
    row('recovery: peak second / mean second before the outage', (p) => p.recoveryPeakToSteady.toFixed(2)),
    row('duplicate writes applied', (p) => String(p.duplicateWrites)),
    row('probes', (p) => p.probes.toLocaleString('en-US')),
    row('time to fail over (median / p95 / max)', (p) =>
      p.failoverMs ? `${s(p.failoverMs.median)} / ${s(p.failoverMs.p95)} / ${s(p.failoverMs.max)}` : 'never',
    ),
    row('time to fail back after the outage (median / p95 / max)', (p) =>
      p.failbackMs ? `${s(p.failbackMs.median)} / ${s(p.failbackMs.p95)} / ${s(p.failbackMs.max)}` : '-',
    ),
    row('origin switches per client (mean / max)', (p) =>
      p.switchesPerClient ? `${p.switchesPerClient.mean} / ${p.switchesPerClient.max}` : '0',
    ),
    row('most switches of one client within one dwell window (30 s)', (p) =>
      String(p.maxSwitchesPerDwell ?? 0),
    ),
    '',
    "The targets, for failwise's default policy (nothing asserts them):",
    '',
    '| target | measured | goal | met |',
    '| --- | --- | --- | --- |',
    target(
      'amplification during a full outage',
      summary.amplification.toFixed(3),
      '<= 1.2',
      summary.amplification <= 1.2,
    ),
    target(
      'recovery peak-to-mean',
      summary.recoveryPeakToMean.toFixed(2),
      '<= 2',
      summary.recoveryPeakToMean <= 2,
    ),
    target('duplicate writes', String(summary.duplicateWrites), '0', summary.duplicateWrites === 0),
    target(
      'switches per failover dwell window',
      String(summary.maxSwitchesPerDwell),
      '<= 1',
      (summary.maxSwitchesPerDwell ?? 0) <= 1,
    ),
    ...whyMissed(failwise, exponential, (report.options.ratePerSecond * (OUTAGE.to - OUTAGE.from)) / 1000),
    ...howMet(failwise),
    ...before(report),
    '',
    '![Requests per second at the primary, per policy](fleet-load.svg)',
    '',
    FLEET_END,
  ].join('\n');
}

/** What a missed target comes from, read from the figures (each sentence only when its target is missed). */
function whyMissed(failwise: PolicyFigures, exponential: PolicyFigures, perClient: number): string[] {
  const lines: string[] = [
    '',
    `Amplification depends on how many requests a client sends during the outage: each request a client starts on the primary before it fails over pays about one extra attempt (a read's retry goes to the backup at once, free of the retry budget; \`failoverAfter: 5\` such failures in a row move the client), then 1 a request: about 1 + 5 / (requests a client sends during the outage), here ${failwise.outageAmplification.toFixed(3)} with ${perClient} requests a client on average.`,
  ];
  if (failwise.recoveryPeakToMean > 2)
    lines.push(
      '',
      `Recovery peak-to-mean (${failwise.recoveryPeakToMean.toFixed(2)}): not a storm. The clients do not come back when the primary does: each fails back on its own, once the wait after its last failed probe is up and 3 probes have succeeded (median ${s(failwise.failbackMs?.median)} after the outage ends, p95 ${s(failwise.failbackMs?.p95)}). Until then the primary gets probes only, so the 60 s window's mean is well below its last seconds. Its busiest second is ${failwise.recoveryPeakToSteady.toFixed(2)} times its mean second before the outage: the load comes back to normal, not above it (exponential backoff without jitter: ${exponential.recoveryPeakToSteady.toFixed(2)} times, its synchronized retries on top). Measured against the window's own mean, a late step reads as a high ratio; the naive client never left the primary, so its ratio is that of a flat line.`,
    );
  if ((failwise.maxSwitchesPerDwell ?? 0) > 1)
    lines.push(
      '',
      `Switches (${failwise.clientsOverDwell} of the clients made ${failwise.maxSwitchesPerDwell} within one 30 s window): a failover and its failback are always at least \`minFailedOverMs\` apart; after a failback, \`failbackDwellMs\` holds a client on the primary unless \`dwellFailoverAfter\` failures come in a row. A client that failed back and met that many failures in a row (or a policy with a shorter dwell) fails over again within the window.`,
    );
  return lines;
}

/** How the default policy meets the recovery and switch targets (each sentence only when its target is met). */
function howMet(failwise: PolicyFigures): string[] {
  const lines: string[] = [];
  if (failwise.recoveryPeakToMean <= 2)
    lines.push(
      '',
      `Recovery peak-to-mean (${failwise.recoveryPeakToMean.toFixed(2)}): after a failed probe a client probes again \`reprobeAfterMs\` (5 s) later, twice that after two failed probes in a row, and so on, each wait spread by equal jitter drawn from the client's own seed (docs/failover.md, question 5). So the clients find the recovered primary soon and at different moments: they fail back a median ${s(failwise.failbackMs?.median)} after the outage ends (p95 ${s(failwise.failbackMs?.p95)}), and the primary's load climbs back over the window rather than in its last seconds. Its busiest second is ${failwise.recoveryPeakToSteady.toFixed(2)} times its mean second before the outage: back to normal, not above it.`,
    );
  if ((failwise.maxSwitchesPerDwell ?? 0) <= 1)
    lines.push(
      '',
      `Switches (at most ${failwise.maxSwitchesPerDwell ?? 0} within any 30 s window): a failover and its failback are at least \`minFailedOverMs\` apart, and for \`failbackDwellMs\` (30 s) after a failback only \`dwellFailoverAfter\` (10) failures in a row or a TLS failure fail over again. The ${pct(ERROR_RATE)} errors phase rarely brings 10 failures in a row, so the clients that failed back shortly before it stay on the primary until their dwell is over; those that then fail over on the usual criteria do so more than 30 s after their failback.`,
    );
  return lines;
}

/**
 * The figures of the run before the failback dwell and the growing, jittered wait after a failed probe
 * (commit 2686e7f, the same command, 1000 clients, seed 1), kept so the change can be read against them.
 */
const BEFORE = {
  recoveryPeakToMean: 2.92,
  recoveryPeakToSteady: 1.06,
  failbackMs: { median: 43_577, p95: 49_434, max: 60_765 },
  maxSwitchesPerDwell: 2,
  clientsOverDwell: 21,
  switchesPerClient: 2.572,
  probes: 4_109,
  outagePrimaryLoadPerRequest: 0.201,
};

function before(report: FleetReport): string[] {
  const { clients, seed, ratePerSecond } = report.options;
  if (clients !== 1000 || seed !== 1 || ratePerSecond !== 0.5) return [];
  const b = BEFORE;
  const after = report.policies.find((p) => p.policy === 'failwise')!;
  return [
    '',
    `Before the failback dwell and the growing wait after a failed probe (commit 2686e7f, when a failed probe doubled the whole failed-over time, 30 s then 60 s, and nothing held a client on the primary after a failback; same command and seed): recovery peak-to-mean ${b.recoveryPeakToMean} (busiest second ${b.recoveryPeakToSteady} times a normal one), time to fail back ${s(b.failbackMs.median)} / ${s(b.failbackMs.p95)} / ${s(b.failbackMs.max)}, most switches in one dwell window ${b.maxSwitchesPerDwell} (${b.clientsOverDwell} clients), switches per client ${b.switchesPerClient}, ${b.probes.toLocaleString('en-US')} probes, ${b.outagePrimaryLoadPerRequest} requests at the primary during the outage per request. Switches per client rose because the clients that fail over in the errors and overload phases (about 540) now also fail back before the run ends: their failover dwell doubles from 30 s to 60 s (a failover soon after a failback), where before it doubled the 60 s a failed probe had left, to 120 s, past the end of the run (then 29 of them failed back, now about 540). Probes doubled: a client now probes a primary that is still down several times in the minute after its failover dwell (waits of 2.5–5, 5–10, 10–20 s) instead of once, so the requests at the primary during the outage rose from ${b.outagePrimaryLoadPerRequest} to ${after.outagePrimaryLoadPerRequest} per request, the difference all probes (each refused at once).`,
  ];
}
