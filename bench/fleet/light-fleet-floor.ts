/**
 * The fewest 429s any client-side rule can get in `npm run bench:fleet`'s rate-limited fleet of 1,000 light
 * clients (bench/fleet/rate-limited-world.ts: 0.2 requests a second each, twice the limit for 20 s), measured
 * against the same origin and the same requests:
 *
 *   npx tsx bench/fleet/light-fleet-floor.ts [--seed 1]
 *
 * A client that has had no 429 knows nothing of the overload (a bare 429 or `Retry-After: 1` is the only word
 * the origin gives), so it sends at once, as it must when the origin is well. The ideal client here is an
 * oracle: from its first 429 it sends nothing more until the overload ends (it is told when: t = 20 s), and it
 * never retries into the overload. Each 429 then takes one client's 0.2 requests a second off the origin, and
 * the excess `0.2 U - limit` of the U clients not yet refused decays with a time constant of 5 s: about 490
 * 429s in all, whatever the rule. With `backlog`, the oracle also sends the requests it held that still have
 * budget after the overload, paced at exactly the spare rate (50 a second): the most 2xx answers there can be.
 * Latency is left out (a client hears its 429 when it sends), which only makes the oracle better.
 *
 * A rule that keeps the retry of a lone request's 429 (rules 4 and 5: after its backoff, or when its Retry-After
 * says) cannot be that oracle: a client whose first request meets a 429 looks like a lone client, so it retries,
 * and the retry meets the overload. With `retry once`, the oracle retries the 429 of a client's first request once
 * (200 ms later, failwise's first backoff, or 1 s, what this origin's Retry-After says while it is saturated) and
 * falls silent only if that retry is refused too; a later request's 429 silences it at once: the floor for such
 * rules.
 *
 * Only the answers that say nothing but 429: with RateLimit fields on every answer, a 2xx with `r=0` tells a
 * client of the overload too, and this floor does not hold there.
 */
import { parseArgs } from 'node:util';
import { seededRandom } from '../../src/drill/seeded-random.js';
import {
  LIMITED_OP_HEADER,
  LIMITED_PHASES,
  limitedWorkload,
  RateLimitedWorld,
  type LimitVariant,
} from './rate-limited-world.js';

const VARIANTS: readonly LimitVariant[] = ['bare', 'retry-after'];
const CLIENTS = 1000;
const LIMIT = 100;
const BUDGET_MS = 10_000;
const OVERLOAD_END = LIMITED_PHASES[0].to;
/** Held requests go out one every 20 ms after the overload: 50 a second, what the origin has to spare then. */
const SPARE_GAP_MS = 1000 / (LIMIT - LIMITED_PHASES[1].load * LIMIT);

/** What the oracle does from its first 429 (see above). */
type OracleMode = 'silent' | 'backlog' | 'retry once';
const MODES: readonly OracleMode[] = ['silent', 'backlog', 'retry once'];
/** The wait before the retry of a first 429, ms: failwise's first backoff, or the Retry-After this origin names. */
const RETRY_AFTER_429_MS: Record<LimitVariant, number> = { bare: 200, 'retry-after': 1_000, ratelimit: 200 };

interface Floor {
  variant: LimitVariant;
  mode: OracleMode;
  ok: number;
  refused: number;
  informed: number;
}

function oracle(variant: LimitVariant, mode: OracleMode, seed: number): Floor {
  const backlog = mode === 'backlog';
  const perClient = limitedWorkload(CLIENTS, LIMIT, seed);
  const total = perClient.reduce((n, ops) => n + ops.length, 0);
  const all = perClient
    .flatMap((ops, client) => ops.map((op) => ({ ...op, client })))
    .sort((a, b) => a.at - b.at);
  const world = new RateLimitedWorld(LIMIT, variant, total, seededRandom(seed ^ 0x1a7e));
  const signal = new AbortController().signal;
  const send = (id: number, at: number) => {
    const request = { url: '', method: 'GET', headers: { [LIMITED_OP_HEADER]: String(id) }, signal };
    const { result } = world.answer({ ...request, connectTimeoutMs: 1, attemptsLeft: 1 }, at);
    return result.kind === 'response' && result.response.status === 429;
  };
  const informed = new Set<number>();
  const held: { at: number; id: number }[] = [];
  /** Retries of first 429s (`retry once`), in the order they go. */
  const retries: { at: number; id: number; client: number }[] = [];
  /** Clients that have sent a request: a 429 to a later one is no lone request's. */
  const sentBefore = new Set<number>();
  let nextHeld = OVERLOAD_END;
  for (let i = 0; i < all.length || (backlog && held.length > 0) || retries.length > 0;) {
    const op = all[i];
    if (retries.length > 0 && retries[0]!.at <= (op?.at ?? Infinity)) {
      const retry = retries.shift()!;
      if (send(retry.id, retry.at) && retry.at < OVERLOAD_END) informed.add(retry.client);
      continue;
    }
    if (backlog && held.length > 0 && nextHeld < (op?.at ?? Infinity)) {
      const request = held.shift()!;
      if (request.at + BUDGET_MS > nextHeld) {
        send(request.id, nextHeld);
        nextHeld += SPARE_GAP_MS;
      }
      continue;
    }
    i++;
    if (op === undefined) continue;
    if (informed.has(op.client) && op.at < OVERLOAD_END) {
      // Only a request that can still wait for the overload's end within its budget is worth holding.
      if (op.at + BUDGET_MS > OVERLOAD_END) held.push(op);
      continue;
    }
    const first = !sentBefore.has(op.client);
    sentBefore.add(op.client);
    if (!send(op.id, op.at) || op.at >= OVERLOAD_END) continue;
    if (mode !== 'retry once' || !first) informed.add(op.client);
    else {
      // Retries come in the order they were scheduled: the same wait for all, and ops come in time order.
      retries.push({ at: op.at + RETRY_AFTER_429_MS[variant], id: op.id, client: op.client });
    }
  }
  // As the fleet bench counts them: answers from the first second on.
  const sum = (list: number[]) => list.slice(1).reduce((a, b) => a + b, 0);
  return {
    variant,
    mode,
    ok: sum(world.okPerSecond),
    refused: sum(world.refusedPerSecond),
    informed: informed.size,
  };
}

const { values } = parseArgs({ options: { seed: { type: 'string', default: '1' } } });
const seed = Number(values.seed);
if (!Number.isInteger(seed)) throw new Error(`--seed: expected an integer, got ${values.seed}`);
console.log(`| answers | oracle | 2xx after 1 s | 429s after 1 s | 429 share | clients refused |`);
console.log(`| --- | --- | --- | --- | --- | --- |`);
for (const variant of VARIANTS)
  for (const mode of MODES) {
    const f = oracle(variant, mode, seed);
    const share = ((100 * f.refused) / (f.ok + f.refused)).toFixed(2);
    const how = {
      silent: 'silent until the end',
      backlog: 'silent, then held requests paced at the spare rate',
      'retry once': "retries a first request's 429 once, silent if refused again",
    }[mode];
    console.log(`| ${variant} | ${how} | ${f.ok} | ${f.refused} | ${share} % | ${f.informed} |`);
  }
