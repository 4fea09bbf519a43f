// What this proves: whatever the policy, the retry budget and the transport's outcomes, when N requests run
// at once, the requests that are retrying at any moment (from their first retry-scheduled event until they
// end) never outnumber the budget's slots for N requests: max(minConcurrency, floor(percent% of N)). Every
// request still ends, with a reason when it fails, and no timer is left. The bound is written out here (not the
// library's `retrySlots`), and the last test asserts that the runs press against it: some fill every slot while
// more requests than slots are in progress, and some have a retry refused (`retry-budget-exhausted`).
import { fc, test } from '@fast-check/vitest';
import { expect } from 'vitest';
import { simulatedClock } from '../../src/clock/simulated-clock.js';
import { createFailoverClient } from '../../src/runtime/create-failover-client.js';
import { definePolicy } from '../../src/policy/define-policy.js';
import type { Outcome } from '../../src/policy/outcome.js';
import type { DecisionEvent } from '../../src/runtime/decision-events.js';
import { policyArb, replyArb } from '../helpers/arbitraries.js';
import { scriptedTransport } from '../helpers/scripted-transport.js';
import { propertyRuns } from '../setup/property-runs.js';

const RUNS = 300;
const runs = propertyRuns(RUNS);

/** The budget's slots for `active` requests, in integers: max(minConcurrency, floor(percent% of active)). */
const slotsFor = (budget: { percent: number; minConcurrency: number }, active: number) =>
  Math.max(budget.minConcurrency, Math.floor((budget.percent * active) / 100));

/** Runs (across the property's runs) that pressed against the budget; asserted by the last test. */
const reached = { runs: 0, everySlotTaken: 0, retryRefused: 0 };

const argsArb = fc.record({
  policyInput: policyArb,
  replies: fc.array(replyArb, { minLength: 1, maxLength: 12 }),
  requests: fc.integer({ min: 1, max: 25 }),
  /** The random numbers the client draws, in turn and cyclically. */
  randoms: fc.array(fc.double({ min: 0, max: 0.999_999, noNaN: true }), { minLength: 1, maxLength: 6 }),
});
type Args = typeof argsArb extends fc.Arbitrary<infer T> ? T : never;

async function runOnce(args: Args): Promise<void> {
  const policy = definePolicy(args.policyInput);
  const clock = simulatedClock();
  const transport = scriptedTransport(clock, args.replies);
  const retrying = new Set<string>();
  let most = 0;
  let draws = 0;
  const client = createFailoverClient({
    origins: [{ id: 'primary', url: 'https://api.example.test' }],
    policy,
    clock,
    transport,
    random: () => args.randoms[draws++ % args.randoms.length]!,
    onEvent: (event: DecisionEvent) => {
      if (event.type === 'retry-scheduled') retrying.add(event.requestId);
      if (event.type === 'succeeded' || event.type === 'failed') retrying.delete(event.requestId);
      most = Math.max(most, retrying.size);
    },
  });
  const outcomes: Outcome[] = [];
  const pending = Array.from({ length: args.requests }, (_, i) =>
    client.request({ path: `/p/${i}` }).then((outcome) => void outcomes.push(outcome)),
  );
  await clock.runAll();
  await Promise.all(pending);

  const slots = slotsFor(policy.retryBudget, args.requests);
  expect(most).toBeLessThanOrEqual(slots);
  expect(outcomes).toHaveLength(args.requests);
  for (const outcome of outcomes) if (outcome.status === 'failed') expect(outcome.reason).toBeTruthy();
  expect(clock.pending()).toBe(0);
  await client.close();

  reached.runs += 1;
  if (most === slots && slots > 0 && slots < args.requests) reached.everySlotTaken += 1;
  if (outcomes.some((o) => o.status === 'failed' && o.reason === 'retry-budget-exhausted'))
    reached.retryRefused += 1;
}

test.prop({ args: argsArb }, { numRuns: runs })(
  'requests retrying at once never outnumber the retry budget',
  async ({ args }) => {
    await runOnce(args);
  },
  60_000,
);

// Tests in a file run in order: this reads what the property reached. Run alone (`-t`), it generates the same
// runs itself (same fixed seed, same count).
test('the generated runs fill every slot of the budget, and have retries refused', async () => {
  if (reached.runs === 0) await fc.assert(fc.asyncProperty(argsArb, runOnce), { numRuns: runs });
  expect(reached.runs).toBe(runs);
  for (const [path, runs] of Object.entries(reached)) expect(runs, path).toBeGreaterThan(0);
}, 60_000);
