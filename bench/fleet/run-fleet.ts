import { seededRandom } from '../../src/drill/seeded-random.js';
import { createFailoverClient, type FailoverClient } from '../../src/runtime/create-failover-client.js';
import { defaultPolicy } from '../../src/policy/defaults.js';
import { baselineClient, type BaselineKind } from './baseline-clients.js';
import { fleetClock } from './fleet-clock.js';
import {
  BACKUP_URL,
  DURATION_MS,
  FleetWorld,
  OP_HEADER,
  OUTAGE,
  OVERLOAD_CAPACITY,
  PRIMARY_URL,
  RECOVERY,
} from './fleet-world.js';
import { simTransport } from './sim-transport.js';
import { workload, type Op } from './workload.js';

export type PolicyName = 'failwise' | BaselineKind;
export const POLICIES: readonly PolicyName[] = ['failwise', 'naive', 'exponential'];

export interface FleetOptions {
  clients: number;
  seed: number;
  /** Requests a client sends a second, on average. */
  ratePerSecond: number;
}

/** What one policy did in the run. */
export interface PolicyFigures {
  policy: PolicyName;
  requests: number;
  attempts: number;
  succeeded: number;
  /** Attempts per logical request, for the requests that began during the full outage. */
  outageAmplification: number;
  /** Every request the primary saw during the outage (attempts and probes) per logical request begun in it. */
  outagePrimaryLoadPerRequest: number;
  /** The primary's busiest second in the 60 s after the outage, over its mean second in that window. */
  recoveryPeakToMean: number;
  /** The primary's busiest second after the outage, over its mean second before the outage. */
  recoveryPeakToSteady: number;
  /** Writes applied more than once (over both origins), summed. */
  duplicateWrites: number;
  writesApplied: number;
  probes: number;
  /** failwise only: per client, from the outage's start to its failover, ms (median, p95, max). */
  failoverMs?: Percentiles;
  /** failwise only: per client, from the outage's end to its failback, ms. */
  failbackMs?: Percentiles;
  /** failwise only: origin switches (failovers and failbacks) per client, mean and max. */
  switchesPerClient?: { mean: number; max: number };
  /** failwise only: the most switches any client made within one failover dwell window (`minFailedOverMs`). */
  maxSwitchesPerDwell?: number;
  /** failwise only: clients that made more than one switch within one dwell window. */
  clientsOverDwell?: number;
  /** failwise only: clients that never failed over during the outage, or never failed back. */
  clientsNotFailedOver?: number;
  clientsNotFailedBack?: number;
  /** Requests the primary saw per second, over the whole run (for the plot). */
  primaryPerSecond: number[];
  backupPerSecond: number[];
  realMs: number;
}

export interface Percentiles {
  median: number;
  p95: number;
  max: number;
}

export interface FleetReport {
  options: FleetOptions;
  policies: PolicyFigures[];
  realMs: number;
}

/** Runs the fleet once per policy, each on a fresh clock and world, with the same requests and seeds. */
export async function runFleet(
  options: FleetOptions,
  onProgress?: (line: string) => void,
): Promise<FleetReport> {
  const started = performance.now();
  const ops = workload(options.clients, options.ratePerSecond, options.seed);
  const policies: PolicyFigures[] = [];
  for (const policy of POLICIES) {
    onProgress?.(`fleet: ${policy}, ${options.clients} clients ...`);
    policies.push(await runPolicy(policy, ops, options));
  }
  return { options, policies, realMs: Math.round(performance.now() - started) };
}

interface ClientTrace {
  /** [at, origin traffic goes to] at each health change that moved it. */
  switches: Array<{ at: number; to: string | undefined; state: string }>;
}

async function runPolicy(
  policy: PolicyName,
  perClient: Op[][],
  options: FleetOptions,
): Promise<PolicyFigures> {
  const started = performance.now();
  const totalOps = perClient.reduce((n, ops) => n + ops.length, 0);
  const clock = fleetClock();
  const meanLoadPerSecond = options.clients * options.ratePerSecond;
  const world = new FleetWorld(
    totalOps,
    seededRandom(options.seed ^ 0x5eed),
    Math.floor(meanLoadPerSecond * OVERLOAD_CAPACITY),
  );
  const startAt = new Float64Array(totalOps);
  let succeeded = 0;
  const traces: ClientTrace[] = [];
  const closers: FailoverClient[] = [];

  for (const [index, ops] of perClient.entries()) {
    const transport = simTransport(world, clock);
    let send: (op: Op) => Promise<boolean>;
    if (policy === 'failwise') {
      const trace: ClientTrace = { switches: [] };
      traces.push(trace);
      let active: string | undefined = 'primary';
      const client = createFailoverClient({
        origins: [
          { id: 'primary', url: PRIMARY_URL },
          { id: 'backup', url: BACKUP_URL },
        ],
        clock,
        transport,
        // Each device draws its own jitter.
        random: seededRandom(options.seed * 7919 + index),
        onEvent: (event) => {
          if (event.type !== 'health-changed') return;
          if (event.origin !== active)
            trace.switches.push({ at: clock.now(), to: event.origin, state: event.to });
          active = event.origin;
        },
      });
      closers.push(client);
      send = (op) =>
        client
          .request(
            op.write
              ? {
                  method: 'POST',
                  path: '/v1/orders',
                  headers: { [OP_HEADER]: String(op.id) },
                  body: '{}',
                  idempotencyKey: `op-${op.id}`,
                }
              : { path: `/v1/items/${op.id % 100}`, headers: { [OP_HEADER]: String(op.id) } },
          )
          .then((outcome) => outcome.status === 'succeeded');
    } else {
      const client = baselineClient(policy, transport, clock);
      send = (op) =>
        client.request(
          op.write ? '/v1/orders' : `/v1/items/${op.id % 100}`,
          op.write ? 'POST' : 'GET',
          op.write
            ? { [OP_HEADER]: String(op.id), 'idempotency-key': `op-${op.id}` }
            : { [OP_HEADER]: String(op.id) },
        );
    }
    // Each client starts its requests at their times, one timer at a time.
    let next = 0;
    const fire = () => {
      const op = ops[next++]!;
      startAt[op.id] = clock.now();
      void send(op).then((ok) => void (ok && succeeded++));
      if (next < ops.length) clock.setTimeout(fire, ops[next]!.at - clock.now());
    };
    if (ops.length > 0) clock.setTimeout(fire, ops[0]!.at);
  }

  // Run the script, then long enough for every request to end and every client to fail back.
  await clock.runUntil(DURATION_MS + 60_000);
  await Promise.all(closers.map((client) => client.close()));
  await clock.runUntil(DURATION_MS + 120_000);

  // Figures.
  let attempts = 0;
  let outageOps = 0;
  let outageAttempts = 0;
  let writesApplied = 0;
  let duplicateWrites = 0;
  for (const ops of perClient)
    for (const op of ops) {
      const made = world.attemptsByOp[op.id] ?? 0;
      attempts += made;
      if (op.at >= OUTAGE.from && op.at < OUTAGE.to) {
        outageOps += 1;
        outageAttempts += made;
      }
      const applied = world.appliedByOp[op.id] ?? 0;
      writesApplied += applied;
      if (applied > 1) duplicateWrites += applied - 1;
    }
  const primary = world.load.primary.perSecond;
  const sum = (from: number, to: number) => primary.slice(from / 1000, to / 1000).reduce((a, b) => a + b, 0);
  const recovery = primary.slice(RECOVERY.from / 1000, RECOVERY.to / 1000);
  const recoveryMean = recovery.reduce((a, b) => a + b, 0) / recovery.length;
  const peak = Math.max(...recovery);
  const steadyMean = sum(0, OUTAGE.from) / (OUTAGE.from / 1000);

  const figures: PolicyFigures = {
    policy,
    requests: totalOps,
    attempts,
    succeeded,
    outageAmplification: round(outageAttempts / outageOps),
    outagePrimaryLoadPerRequest: round(sum(OUTAGE.from, OUTAGE.to) / outageOps),
    recoveryPeakToMean: round(peak / recoveryMean),
    recoveryPeakToSteady: round(peak / steadyMean),
    duplicateWrites,
    writesApplied,
    probes: world.load.primary.probes + world.load.backup.probes,
    primaryPerSecond: primary.slice(0, Math.ceil(DURATION_MS / 1000)),
    backupPerSecond: world.load.backup.perSecond.slice(0, Math.ceil(DURATION_MS / 1000)),
    realMs: 0,
  };
  if (policy === 'failwise') Object.assign(figures, switchFigures(traces));
  figures.realMs = Math.round(performance.now() - started);
  return figures;
}

function switchFigures(traces: ClientTrace[]): Partial<PolicyFigures> {
  const failover: number[] = [];
  const failback: number[] = [];
  let maxPerDwell = 0;
  let overDwell = 0;
  const dwell = defaultPolicy.health.minFailedOverMs;
  for (const { switches } of traces) {
    const over = switches.find((s) => s.at >= OUTAGE.from && s.at < OUTAGE.to && s.to === 'backup');
    if (over) failover.push(over.at - OUTAGE.from);
    const back = switches.find((s) => s.at >= OUTAGE.to && s.to === 'primary');
    if (back) failback.push(back.at - OUTAGE.to);
    // The most switches within any window of one dwell: each window starting at a switch.
    let most = 0;
    for (const [i, s] of switches.entries())
      most = Math.max(most, switches.slice(i).filter((t) => t.at < s.at + dwell).length);
    maxPerDwell = Math.max(maxPerDwell, most);
    if (most > 1) overDwell += 1;
  }
  const counts = traces.map((t) => t.switches.length);
  return {
    failoverMs: percentiles(failover),
    failbackMs: percentiles(failback),
    switchesPerClient: {
      mean: round(counts.reduce((a, b) => a + b, 0) / Math.max(1, counts.length)),
      max: Math.max(0, ...counts),
    },
    maxSwitchesPerDwell: maxPerDwell,
    clientsOverDwell: overDwell,
    clientsNotFailedOver: traces.length - failover.length,
    clientsNotFailedBack: traces.length - failback.length,
  };
}

function percentiles(values: number[]): Percentiles {
  if (values.length === 0) return { median: Number.NaN, p95: Number.NaN, max: Number.NaN };
  const sorted = [...values].sort((a, b) => a - b);
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;
  return { median: at(0.5), p95: at(0.95), max: sorted.at(-1)! };
}

const round = (x: number) => Math.round(x * 1000) / 1000;
