import type { TransportRequest, TransportResult } from '../../src/transports/transport.js';
import { seededRandom } from '../../src/drill/seeded-random.js';

/**
 * The rate-limited fleet's one origin: a token bucket that admits `limit` requests a second (it holds one
 * second's worth) and answers 429 past it, in one of three ways. The fleet asks twice what it admits for the
 * first 20 s, then half for 40 s, so that a backlog builds and drains.
 */
export type LimitVariant = 'bare' | 'retry-after' | 'ratelimit';
export const LIMIT_VARIANTS: readonly LimitVariant[] = ['bare', 'retry-after', 'ratelimit'];
export const LIMIT_LABELS: Record<LimitVariant, string> = {
  bare: '429 alone',
  'retry-after': '429 with Retry-After',
  ratelimit: 'RateLimit fields on every answer',
};

/** The offered load, as a multiple of the limit: 2x for the first 20 s, then 0.5x until 60 s. */
export const LIMITED_PHASES = [
  { from: 0, to: 20_000, load: 2 },
  { from: 20_000, to: 60_000, load: 0.5 },
] as const;
export const LIMITED_DURATION_MS = 60_000;
export const LIMITED_URL = 'https://api.fleet.test';
export const LIMITED_OP_HEADER = 'x-fleet-op';

export class RateLimitedWorld {
  /** Answers per second: 2xx, and 429. */
  readonly okPerSecond: number[];
  readonly refusedPerSecond: number[];
  readonly attemptsByOp: Uint16Array;
  private tokens: number;
  private filledAt = 0;

  constructor(
    private readonly limit: number,
    private readonly variant: LimitVariant,
    ops: number,
    private readonly random: () => number,
  ) {
    this.tokens = limit;
    const seconds = LIMITED_DURATION_MS / 1000 + 120;
    this.okPerSecond = new Array<number>(seconds).fill(0);
    this.refusedPerSecond = new Array<number>(seconds).fill(0);
    this.attemptsByOp = new Uint16Array(ops);
  }

  answer(request: TransportRequest, now: number): { result: TransportResult; latencyMs: number } {
    this.tokens = Math.min(this.limit, this.tokens + ((now - this.filledAt) / 1000) * this.limit);
    this.filledAt = now;
    const op = Number(request.headers[LIMITED_OP_HEADER] ?? -1);
    if (op >= 0) this.attemptsByOp[op] = (this.attemptsByOp[op] ?? 0) + 1;
    const second = Math.floor(now / 1000);
    const latencyMs = 20 + Math.floor(this.random() * 40);
    const admitted = this.tokens >= 1;
    if (admitted) this.tokens -= 1;
    (admitted ? this.okPerSecond : this.refusedPerSecond)[second]! += 1;
    // Seconds until the bucket holds a token again (at least 1: the fields speak in whole seconds).
    const waitS = Math.max(1, Math.ceil((1 - this.tokens) / this.limit));
    const headers: Record<string, string> = {};
    if (!admitted && this.variant === 'retry-after') headers['retry-after'] = String(waitS);
    if (this.variant === 'ratelimit') {
      const remaining = Math.floor(this.tokens);
      headers['ratelimit'] = `"default";r=${remaining};t=${remaining > 0 ? 1 : waitS}`;
    }
    const response = new Response(null, { status: admitted ? 200 : 429, headers });
    return { result: { kind: 'response', response }, latencyMs };
  }
}

/** One request of one client: the same for every policy and variant of a run. */
export interface LimitedOp {
  id: number;
  at: number;
}

/** Each client's requests: random arrivals at the phases' offered load, shared by the fleet, drawn from `seed`. */
export function limitedWorkload(clients: number, limit: number, seed: number): LimitedOp[][] {
  const random = seededRandom(seed);
  const perClient: LimitedOp[][] = Array.from({ length: clients }, () => []);
  let id = 0;
  for (let client = 0; client < clients; client++) {
    let at = 0;
    for (const phase of LIMITED_PHASES) {
      const perClientRate = (phase.load * limit) / clients;
      at = Math.max(at, phase.from);
      for (;;) {
        at += -Math.log(1 - random()) * (1000 / perClientRate);
        if (at >= phase.to) break;
        perClient[client]!.push({ id: id++, at: Math.floor(at) });
      }
      at = phase.to;
    }
  }
  return perClient;
}
