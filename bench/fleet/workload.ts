import { seededRandom } from '../../src/drill/seeded-random.js';
import { DURATION_MS } from './fleet-world.js';

/** One logical request of one client: the same for every policy of a run. */
export interface Op {
  /** Its number across the fleet (the world counts attempts and writes by it). */
  id: number;
  client: number;
  at: number;
  write: boolean;
}

/** Reads are this share of the mix; the rest are writes with an idempotency key. */
export const READ_SHARE = 0.8;

/**
 * Each client's requests: arrivals at random (exponential gaps, `ratePerSecond` a client on average) from 0 to
 * the end of the script, drawn from `seed`, so every policy meets the very same requests.
 */
export function workload(clients: number, ratePerSecond: number, seed: number): Op[][] {
  const random = seededRandom(seed);
  const perClient: Op[][] = [];
  let id = 0;
  for (let client = 0; client < clients; client++) {
    const ops: Op[] = [];
    for (let at = -Math.log(1 - random()) * (1000 / ratePerSecond); at < DURATION_MS;) {
      ops.push({ id: id++, client, at: Math.floor(at), write: random() >= READ_SHARE });
      at += -Math.log(1 - random()) * (1000 / ratePerSecond);
    }
    perClient.push(ops);
  }
  return perClient;
}
