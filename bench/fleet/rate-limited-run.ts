/**
 * `npm run bench:fleet`'s rate-limited fleet: N clients against one origin that admits `limit` requests a second
 * (bench/fleet/rate-limited-world.ts), for each way it can say so, with three clients that meet the very same
 * requests:
 *
 * - failwise, default policy (its throttle on);
 * - `naive`: 3 immediate retries of any failure, no wait (as in baseline-clients.ts);
 * - `aws-standard`: AWS SDKs' standard retry mode written out here (not failwise, not the SDK): 3 attempts, full
 *   jitter over 2^attempt x 500 ms after a throttle (100 ms otherwise, at most 20 s), a retry quota of 500
 *   tokens that a retry costs 5 of and a success without a retry gives 1 back. It reads no Retry-After and no
 *   RateLimit field.
 *
 * Figures per client and variant: goodput (2xx answers a second during the overload, from its first second, as a
 * share of the limit), the share of answers that were 429 from the first second on, requests that failed, the
 * time from the end of the overload until every request begun in it ended, and (failwise) the longest hold.
 */
import { setMaxListeners } from 'node:events';
import { seededRandom } from '../../src/drill/seeded-random.js';
import { createFailoverClient, type FailoverClient } from '../../src/runtime/create-failover-client.js';
import type { Clock } from '../../src/clock/clock.js';
import type { Transport, TransportRequest } from '../../src/transports/transport.js';
import { fleetClock } from './fleet-clock.js';
import {
  LIMIT_VARIANTS,
  LIMITED_DURATION_MS,
  LIMITED_OP_HEADER,
  LIMITED_PHASES,
  LIMITED_URL,
  limitedWorkload,
  RateLimitedWorld,
  type LimitedOp,
  type LimitVariant,
} from './rate-limited-world.js';
import { simTransport } from './sim-transport.js';

export type LimitedClient = 'failwise' | 'naive' | 'aws-standard';
export const LIMITED_CLIENTS: readonly LimitedClient[] = ['failwise', 'naive', 'aws-standard'];

export interface RateLimitedOptions {
  clients: number;
  /** Requests a second the origin admits. */
  limit: number;
  seed: number;
}

export interface LimitedFigures {
  client: LimitedClient;
  variant: LimitVariant;
  requests: number;
  attempts: number;
  succeeded: number;
  failed: number;
  /** failwise only: failed requests by reason. */
  failedBy?: Record<string, number>;
  /** 2xx answers a second in the overload (from 1 s to its end), over the limit. */
  goodput: number;
  /** 429 answers over all answers, from 1 s to the end of the run. */
  refusedShare: number;
  /** From the end of the overload until the last request begun in it ended, ms. */
  drainMs: number;
  /** failwise only: the longest wait for a hold or a send slot, ms. */
  longestHoldMs?: number;
  /** 2xx answers per second, over the run (for the plot). */
  okPerSecond: number[];
  refusedPerSecond: number[];
}

export interface RateLimitedReport {
  options: RateLimitedOptions;
  runs: LimitedFigures[];
  realMs: number;
}

export async function runRateLimitedFleet(
  options: RateLimitedOptions,
  onProgress?: (line: string) => void,
): Promise<RateLimitedReport> {
  const started = performance.now();
  const ops = limitedWorkload(options.clients, options.limit, options.seed);
  const runs: LimitedFigures[] = [];
  for (const variant of LIMIT_VARIANTS)
    for (const client of LIMITED_CLIENTS) {
      onProgress?.(`rate-limited fleet: ${client}, ${variant}, ${options.clients} clients ...`);
      runs.push(await runOne(client, variant, ops, options));
    }
  return { options, runs, realMs: Math.round(performance.now() - started) };
}

async function runOne(
  kind: LimitedClient,
  variant: LimitVariant,
  perClient: LimitedOp[][],
  options: RateLimitedOptions,
): Promise<LimitedFigures> {
  const total = perClient.reduce((n, ops) => n + ops.length, 0);
  const clock = fleetClock();
  const world = new RateLimitedWorld(options.limit, variant, total, seededRandom(options.seed ^ 0x1a7e));
  const endAt = new Float64Array(total);
  const failedBy: Record<string, number> = {};
  let succeeded = 0;
  let longestHoldMs = 0;
  const closers: FailoverClient[] = [];
  for (const [index, ops] of perClient.entries()) {
    const transport = simTransport(world, clock);
    let send: (op: LimitedOp) => Promise<boolean>;
    if (kind === 'failwise') {
      const client = createFailoverClient({
        origins: [{ id: 'api', url: LIMITED_URL }],
        clock,
        transport,
        random: seededRandom(options.seed * 7919 + index),
        onEvent: (event) => {
          if (event.type === 'waiting-for-hold') longestHoldMs = Math.max(longestHoldMs, event.delayMs);
        },
      });
      closers.push(client);
      send = (op) =>
        client
          .request({ path: `/v1/items/${op.id % 100}`, headers: { [LIMITED_OP_HEADER]: String(op.id) } })
          .then((outcome) => {
            if (outcome.status === 'failed') failedBy[outcome.reason] = (failedBy[outcome.reason] ?? 0) + 1;
            return outcome.status === 'succeeded';
          });
    } else {
      const client =
        kind === 'naive'
          ? naiveClient(transport)
          : awsStandardClient(transport, clock, seededRandom(options.seed * 104_729 + index));
      send = (op) => client(`/v1/items/${op.id % 100}`, { [LIMITED_OP_HEADER]: String(op.id) });
    }
    let next = 0;
    const fire = () => {
      const op = ops[next++]!;
      void send(op).then((ok) => {
        endAt[op.id] = clock.now();
        if (ok) succeeded++;
      });
      if (next < ops.length) clock.setTimeout(fire, ops[next]!.at - clock.now());
    };
    if (ops.length > 0) clock.setTimeout(fire, ops[0]!.at);
  }
  await clock.runUntil(LIMITED_DURATION_MS + 60_000);
  await Promise.all(closers.map((client) => client.close()));
  await clock.runUntil(LIMITED_DURATION_MS + 120_000);

  const overload = LIMITED_PHASES[0];
  let attempts = 0;
  let lastEnd: number = overload.to;
  for (const ops of perClient)
    for (const op of ops) {
      attempts += world.attemptsByOp[op.id] ?? 0;
      if (op.at < overload.to) lastEnd = Math.max(lastEnd, endAt[op.id] ?? 0);
    }
  const sum = (list: number[], from: number, to: number) => list.slice(from, to).reduce((a, b) => a + b, 0);
  const seconds = Math.ceil(LIMITED_DURATION_MS / 1000) + 60;
  const ok = sum(world.okPerSecond, 1, seconds);
  const refused = sum(world.refusedPerSecond, 1, seconds);
  const figures: LimitedFigures = {
    client: kind,
    variant,
    requests: total,
    attempts,
    succeeded,
    failed: total - succeeded,
    goodput: round(
      sum(world.okPerSecond, 1, overload.to / 1000) / ((overload.to / 1000 - 1) * options.limit),
    ),
    refusedShare: round(refused / Math.max(1, ok + refused)),
    drainMs: lastEnd - overload.to,
    okPerSecond: world.okPerSecond.slice(0, LIMITED_DURATION_MS / 1000),
    refusedPerSecond: world.refusedPerSecond.slice(0, LIMITED_DURATION_MS / 1000),
  };
  if (kind === 'failwise') Object.assign(figures, { failedBy, longestHoldMs });
  return figures;
}

/** The baselines never abort: one signal for all their calls. */
const NO_SIGNAL = new AbortController().signal;
setMaxListeners(0, NO_SIGNAL);

const requestOf = (path: string, headers: Record<string, string>): TransportRequest => ({
  url: LIMITED_URL + path,
  method: 'GET',
  headers,
  signal: NO_SIGNAL,
  connectTimeoutMs: 3_000,
  attemptsLeft: 1,
});

/** 3 immediate retries of any failure (4 attempts), no wait. */
function naiveClient(transport: Transport) {
  return async (path: string, headers: Record<string, string>): Promise<boolean> => {
    const request = requestOf(path, headers);
    for (let attempt = 1; attempt <= 4; attempt++) {
      const result = await transport.send(request);
      if (result.kind === 'response' && result.response.status < 400) return true;
    }
    return false;
  };
}

/**
 * AWS SDKs' standard retry mode (smithy-typescript's StandardRetryStrategy with its DefaultRetryBackoffStrategy),
 * one per client: 3 attempts; before retry n, full jitter over min(20 s, 2^n x base), base 500 ms after a
 * throttle (429) and 100 ms otherwise; a retry costs 5 of a quota of 500 tokens, a success without a retry
 * gives 1 back, and with too few tokens the request fails.
 */
function awsStandardClient(transport: Transport, clock: Clock, random: () => number) {
  let quota = 500;
  const wait = (ms: number) => new Promise<void>((resolve) => clock.setTimeout(() => resolve(), ms));
  return async (path: string, headers: Record<string, string>): Promise<boolean> => {
    const request = requestOf(path, headers);
    for (let attempt = 1; ; attempt++) {
      const result = await transport.send(request);
      if (result.kind === 'response' && result.response.status < 400) {
        if (attempt === 1) quota = Math.min(500, quota + 1);
        return true;
      }
      if (attempt >= 3 || quota < 5) return false;
      quota -= 5;
      const throttled = result.kind === 'response' && result.response.status === 429;
      await wait(Math.floor(random() * Math.min(20_000, 2 ** attempt * (throttled ? 500 : 100))));
    }
  };
}

const round = (x: number) => Math.round(x * 1000) / 1000;
