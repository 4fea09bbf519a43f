// What this proves: whatever the policy, the retry budget and the transport's outcomes, when N requests run
// at once, the requests that are retrying at any moment (from their first retry-scheduled event until they
// end) never outnumber the budget's slots for N requests: max(minConcurrency, floor(percent% of N)). Every
// request still ends, with a reason when it fails, and no timer is left.
import { fc, test } from '@fast-check/vitest';
import { expect } from 'vitest';
import { simulatedClock } from '../../src/clock/simulated-clock.js';
import { createFailoverClient } from '../../src/runtime/create-failover-client.js';
import { definePolicy } from '../../src/policy/define-policy.js';
import { retrySlots } from '../../src/policy/retry-budget.js';
import type { Outcome } from '../../src/policy/outcome.js';
import type { DecisionEvent } from '../../src/runtime/decision-events.js';
import { policyArb, replyArb } from '../helpers/arbitraries.js';
import { scriptedTransport } from '../helpers/scripted-transport.js';

test.prop(
  {
    policyInput: policyArb,
    replies: fc.array(replyArb, { minLength: 1, maxLength: 12 }),
    requests: fc.integer({ min: 1, max: 25 }),
    random: fc.double({ min: 0, max: 0.999_999, noNaN: true }),
  },
  { numRuns: 300 },
)('requests retrying at once never outnumber the retry budget', async (args) => {
  const policy = definePolicy(args.policyInput);
  const clock = simulatedClock();
  const transport = scriptedTransport(clock, args.replies);
  const retrying = new Set<string>();
  let most = 0;
  const client = createFailoverClient({
    origins: [{ id: 'primary', url: 'https://api.example.test' }],
    policy,
    clock,
    transport,
    random: () => args.random,
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

  expect(most).toBeLessThanOrEqual(retrySlots(policy.retryBudget, args.requests));
  expect(outcomes).toHaveLength(args.requests);
  for (const outcome of outcomes) if (outcome.status === 'failed') expect(outcome.reason).toBeTruthy();
  expect(clock.pending()).toBe(0);
  await client.close();
});
