/**
 * The two baselines of the fleet benchmark, written here by hand and NOT part of failwise: what an app does
 * without it. Both send every attempt to the primary (they know no backup), retry any failure (an error, a 5xx or
 * a 429) up to 3 times, and never read Retry-After. They send the same requests failwise does, idempotency key
 * included.
 *
 * - `naive`: 3 immediate retries (4 attempts, no wait).
 * - `exponential`: 3 retries after 200, 400 and 800 ms (failwise's initialMs and multiplier), with no jitter.
 */
import { setMaxListeners } from 'node:events';
import type { Clock } from '../../src/clock/clock.js';
import type { Transport, TransportRequest } from '../../src/transports/transport.js';
import { PRIMARY_URL } from './fleet-world.js';

export type BaselineKind = 'naive' | 'exponential';

export interface BaselineClient {
  /** Resolves true when the request succeeded within its attempts. */
  request(path: string, method: string, headers: Record<string, string>): Promise<boolean>;
}

const MAX_ATTEMPTS = 4;
/** The baselines never abort: one signal for all their calls (the transport listens to it while a call is out). */
const NO_SIGNAL = new AbortController().signal;
setMaxListeners(0, NO_SIGNAL);

export function baselineClient(kind: BaselineKind, transport: Transport, clock: Clock): BaselineClient {
  const wait = (ms: number) => new Promise<void>((resolve) => clock.setTimeout(() => resolve(), ms));
  return {
    async request(path, method, headers) {
      const request: TransportRequest = {
        url: PRIMARY_URL + path,
        method,
        headers,
        signal: NO_SIGNAL,
        connectTimeoutMs: 3_000,
        attemptsLeft: 1,
      };
      for (let attempt = 1; attempt <= MAX_ATTEMPTS; attempt++) {
        const result = await transport.send(request);
        if (result.kind === 'response' && result.response.status < 400) return true;
        if (attempt < MAX_ATTEMPTS && kind === 'exponential') await wait(200 * 2 ** (attempt - 1));
      }
      return false;
    },
  };
}
