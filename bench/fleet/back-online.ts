import { manualConnectivity } from '../../src/connectivity/manual-connectivity.js';
import { seededRandom } from '../../src/drill/seeded-random.js';
import { memoryStore } from '../../src/stores/memory-store.js';
import type { DurablePolicy } from '../../src/policy/policy.js';
import { createFailoverClient, type FailoverClient } from '../../src/runtime/create-failover-client.js';
import type { Transport, TransportResult } from '../../src/transports/transport.js';
import { fleetClock, type FleetClock } from './fleet-clock.js';

/**
 * A fleet whose phones all come back online in the same second (a train leaving a tunnel, a region's network
 * back after an outage), each with durable writes queued while it was offline, against an origin that answers
 * at most `capacityPerSecond` requests a second and a 503 to the rest. Run once with the outbox's backoff
 * jittered (`policy.durable.jitter: 'full'`, the default) and once without (`'none'`): the same phones, seeds
 * and requests. Real failwise clients on one simulated clock (fleet-clock.ts); deterministic per seed.
 */
export interface BackOnlineOptions {
  phones: number;
  seed: number;
  /** Durable writes each phone queued while offline. */
  writesPerPhone: number;
  /** Requests the origin answers (200) each second; the others get a 503. */
  capacityPerSecond: number;
}

/** What one jitter setting did. */
export interface BackOnlineFigures {
  jitter: DurablePolicy['jitter'];
  /** Requests that reached the origin, each second from the moment the phones came online. */
  perSecond: number[];
  /** The busiest second of all, and the busiest after the first minute (the outbox's retries, not the wave). */
  peak: number;
  peakAfterFirstMinute: number;
  /** Seconds until every phone's outbox was empty. */
  drainedAfterS: number;
  /** Requests that reached the origin, per durable write. */
  sendsPerWrite: number;
  /** Writes left in an outbox at the end (none: every write was sent). */
  left: number;
}

export interface BackOnlineReport {
  options: BackOnlineOptions;
  runs: BackOnlineFigures[];
}

const ORIGIN = 'https://api.fleet.test';
const LATENCY_MS = 50;
/** The phones come online at once, each within this window. */
const ONLINE_WINDOW_MS = 1_000;
/** The simulated time a run may take: enough for five-hour waits to come round a few times. */
const LIMIT_MS = 48 * 3_600_000;

/** The origin: up to `capacity` 200s in each second of simulated time, a 503 to the others. */
function cappedOrigin(clock: FleetClock, capacity: number, arrivals: number[], start: number): Transport {
  const served = new Map<number, number>();
  return {
    name: 'back-online-origin',
    send() {
      const second = Math.floor((clock.now() - start) / 1_000);
      arrivals[second] = (arrivals[second] ?? 0) + 1;
      const count = (served.get(second) ?? 0) + 1;
      served.set(second, count);
      const status = count <= capacity ? 200 : 503;
      const result: TransportResult = {
        kind: 'response',
        response: new Response(null, { status: status === 200 ? 204 : 503 }),
      };
      return new Promise<TransportResult>((resolve) => clock.setTimeout(() => resolve(result), LATENCY_MS));
    },
  };
}

async function runOnce(
  options: BackOnlineOptions,
  jitter: DurablePolicy['jitter'],
): Promise<BackOnlineFigures> {
  const clock = fleetClock();
  const arrivals: number[] = [];
  const start = 60_000;
  const clients: FailoverClient[] = [];
  const origin = cappedOrigin(clock, options.capacityPerSecond, arrivals, start);
  const devices = Array.from({ length: options.phones }, (_, index) => {
    const connectivity = manualConnectivity('offline');
    const random = seededRandom(options.seed * 7919 + index);
    const client = createFailoverClient({
      origins: [{ id: 'primary', url: ORIGIN }],
      clock,
      transport: origin,
      connectivity,
      random,
      generateIdempotencyKey: () => `p${index}-${Math.floor(random() * 2 ** 32)}`,
      policy: { durable: { jitter } },
      // Given a store, the client loads its durable work at once, before the clock runs (below).
      store: memoryStore(),
    });
    clients.push(client);
    return { client, connectivity, online: start + Math.floor(random() * ONLINE_WINDOW_MS) };
  });
  // The durable work loads with import(), in real time: let it, before simulated time starts.
  await import('../../src/runtime/durable-work.js');
  await new Promise((resolve) => setTimeout(resolve, 20));
  // Offline: every write is stored and deferred.
  for (const { client } of devices)
    for (let w = 0; w < options.writesPerPhone; w++)
      void client.request({ method: 'POST', path: '/notes', body: `{"n":${w}}`, lifetime: 'durable' });
  await clock.runUntil(start - 1);
  for (const device of devices)
    clock.setTimeout(() => device.connectivity.set('online'), device.online - clock.now());
  let drainedAt = LIMIT_MS;
  for (let t = start; t < start + LIMIT_MS; t += 60_000) {
    await clock.runUntil(t + 60_000);
    const sizes = await Promise.all(clients.map((client) => client.outbox.size()));
    if (sizes.every((size) => size === 0)) {
      drainedAt = clock.now() - start;
      break;
    }
  }
  const left = (await Promise.all(clients.map((client) => client.outbox.size()))).reduce((a, b) => a + b, 0);
  await Promise.all(clients.map((client) => client.close()));
  const perSecond = Array.from({ length: arrivals.length }, (_, i) => arrivals[i] ?? 0);
  const total = perSecond.reduce((a, b) => a + b, 0);
  // The last busy second, rather than the end of the minute the check ran in.
  const lastBusy = perSecond.reduce((last, count, i) => (count > 0 ? i : last), 0);
  return {
    jitter,
    perSecond,
    peak: Math.max(0, ...perSecond),
    peakAfterFirstMinute: Math.max(0, ...perSecond.slice(60)),
    drainedAfterS: left === 0 ? lastBusy + 1 : Math.round(drainedAt / 1_000),
    sendsPerWrite: total / (options.phones * options.writesPerPhone),
    left,
  };
}

/** The same fleet with the outbox's backoff jittered (the default) and without. */
export async function runBackOnline(options: BackOnlineOptions): Promise<BackOnlineReport> {
  const runs: BackOnlineFigures[] = [];
  for (const jitter of ['full', 'none'] as const) runs.push(await runOnce(options, jitter));
  return { options, runs };
}

/** The report as a small text table. */
export function backOnlineTable({ options, runs }: BackOnlineReport): string {
  const head = `${options.phones} phones back online in one second, ${options.writesPerPhone} queued write(s) each, origin capacity ${options.capacityPerSecond}/s (seed ${options.seed})`;
  const rows = runs.map(
    (r) =>
      `  jitter ${r.jitter.padEnd(5)} peak ${String(r.peak).padStart(6)}/s  peak after 1 min ${String(r.peakAfterFirstMinute).padStart(6)}/s  drained after ${String(r.drainedAfterS).padStart(6)} s  sends per write ${r.sendsPerWrite.toFixed(2)}  left ${r.left}`,
  );
  return [head, ...rows].join('\n');
}
