// What this proves: whatever the origins answer (200s, 503s and 429s with or without a Retry-After,
// refused connections, any latency), however many requests of one client run at once (reads, keyed writes,
// durable writes, with any budget), and with one origin or a primary and a backup: once an origin has answered
// 429 or 503 with a Retry-After of r ms at time t, no attempt and no probe of that client reaches it in the
// open interval (t, t + r); and no interactive request waits past its budget for a hold (every one ends
// within its budget). Every request ends, and the client leaves no timer.
import { fc, test } from '@fast-check/vitest';
import { expect } from 'vitest';
import { simulatedClock } from '../../src/clock/simulated-clock.js';
import { createFailoverClient } from '../../src/runtime/create-failover-client.js';
import type { Outcome } from '../../src/policy/outcome.js';
import type { TransportResult } from '../../src/transports/transport.js';
import { routedTransport } from '../helpers/routed-transport.js';
import { propertyRuns } from '../setup/property-runs.js';

const RUNS = 80;
const PRIMARY = 'https://primary.example.test';
const BACKUP = 'https://backup.example.test';

const answerArb = fc.oneof(
  { weight: 3, arbitrary: fc.constant({ status: 200 }) },
  {
    weight: 4,
    arbitrary: fc.record({
      status: fc.constantFrom(429, 503),
      retryAfter: fc.option(fc.constantFrom('0', '1', '2', '5', '12', '40'), { nil: undefined }),
    }),
  },
  { weight: 1, arbitrary: fc.constant({ status: 'refused' as const }) },
);
type Answer = typeof answerArb extends fc.Arbitrary<infer T> ? T : never;

const requestArb = fc.record({
  startAt: fc.integer({ min: 0, max: 20_000 }),
  kind: fc.constantFrom('read', 'keyed-write', 'durable-write'),
  deadlineMs: fc.option(fc.integer({ min: 200, max: 15_000 }), { nil: undefined }),
});

const argsArb = fc.record({
  withBackup: fc.boolean(),
  primary: fc.array(answerArb, { minLength: 1, maxLength: 10 }),
  backup: fc.array(answerArb, { minLength: 1, maxLength: 4 }),
  latencies: fc.array(fc.integer({ min: 1, max: 800 }), { minLength: 1, maxLength: 5 }),
  requests: fc.array(requestArb, { minLength: 1, maxLength: 12 }),
});
type Args = typeof argsArb extends fc.Arbitrary<infer T> ? T : never;

function resultOf(answer: Answer): TransportResult {
  if (answer.status === 'refused')
    return { kind: 'error', phase: 'connect', requestSent: 'no', message: 'refused' };
  const headers: Record<string, string> = {};
  if ('retryAfter' in answer && answer.retryAfter !== undefined) headers['retry-after'] = answer.retryAfter;
  return { kind: 'response', response: new Response(null, { status: answer.status, headers }) };
}

async function runOnce(args: Args): Promise<void> {
  const clock = simulatedClock();
  const count = { primary: 0, backup: 0, latency: 0 };
  const transport = routedTransport(clock, (request) => {
    const onPrimary = request.url.startsWith(PRIMARY);
    const list = onPrimary ? args.primary : args.backup;
    const n = onPrimary ? count.primary++ : count.backup++;
    return {
      result: resultOf(list[n % list.length]!),
      latencyMs: args.latencies[count.latency++ % args.latencies.length]!,
    };
  });
  const client = createFailoverClient({
    origins: [{ id: 'primary', url: PRIMARY }, ...(args.withBackup ? [{ id: 'backup', url: BACKUP }] : [])],
    clock,
    transport,
    random: () => 0.5,
  });
  const ends: Array<{ outcome: Outcome; budgetMs: number }> = [];
  const started: Array<Promise<void>> = [];
  const byStart = [...args.requests].sort((a, b) => a.startAt - b.startAt);
  for (const [i, spec] of byStart.entries()) {
    await clock.set(spec.startAt);
    const request =
      spec.kind === 'read'
        ? { path: `/r${i}` }
        : {
            method: 'POST',
            path: `/w${i}`,
            body: '{}',
            idempotencyKey: `k${i}`,
            ...(spec.kind === 'durable-write' ? { lifetime: 'durable' as const } : {}),
          };
    const budgetMs = spec.deadlineMs ?? client.policy.budgetMs;
    started.push(
      client
        .request({ ...request, ...(spec.deadlineMs === undefined ? {} : { deadlineMs: spec.deadlineMs }) })
        .then((outcome) => void ends.push({ outcome, budgetMs })),
    );
  }
  await clock.runAll(10 * 60_000);
  await Promise.all(started);
  await client.close();

  // Every request ended; an interactive one within its budget, however long a hold.
  expect(ends).toHaveLength(args.requests.length);
  for (const { outcome, budgetMs } of ends)
    if (outcome.status !== 'deferred') expect(outcome.elapsedMs).toBeLessThanOrEqual(budgetMs);

  // No call (attempt or probe) reached an origin while a hold it asked for was in force.
  for (const base of [PRIMARY, BACKUP]) {
    const calls = transport.calls.filter((call) => call.request.url.startsWith(base));
    for (const held of calls) {
      if (held.answeredAt === undefined) continue;
      const result = held.result;
      if (result?.kind !== 'response' || ![429, 503].includes(result.response.status)) continue;
      const seconds = result.response.headers.get('retry-after');
      const retryAfterMs = seconds === null ? 0 : Number(seconds) * 1000;
      const from = held.answeredAt;
      const until = from + retryAfterMs;
      const inside = calls.filter((call) => call.sentAt > from && call.sentAt < until);
      expect(
        inside.map((call) => call.sentAt),
        `held ${from}..${until} on ${base}`,
      ).toEqual([]);
    }
  }
  expect(clock.pending()).toBe(0);
}

test.prop([argsArb], { numRuns: propertyRuns(RUNS) })(
  'no attempt or probe reaches a held origin, and no request waits past its budget',
  async (args) => {
    await runOnce(args);
  },
);
