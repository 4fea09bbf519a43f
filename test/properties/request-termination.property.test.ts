// What this proves: for ANY valid policy, ANY sequence of transport outcomes (every failure class,
// random statuses, random Retry-After values, transport-reported attempt counts, hangs and crashes),
// any write/read mix, with or without key, auth and cancellation, connectivity hints at any moment, and any
// clock advances, a request
// made through the public client always ends; within attempts.max attempts counted across layers;
// within its time budget; never re-sends a write that may have reached the server without a key
// (CONTRACT rule 2); sends nothing while the device reports offline (rule 6); always says why it failed; and
// leaves no timer behind.
import { fc, test } from '@fast-check/vitest';
import { expect } from 'vitest';
import { simulatedClock } from '../../src/clock/simulated-clock.js';
import { manualConnectivity } from '../../src/connectivity/manual-connectivity.js';
import { createFailoverClient } from '../../src/runtime/create-failover-client.js';
import { definePolicy } from '../../src/policy/define-policy.js';
import { classifyResult } from '../../src/policy/classify-failure.js';
import { isWrite } from '../../src/policy/methods.js';
import type { Outcome } from '../../src/policy/outcome.js';
import { policyArb, replyArb } from '../helpers/arbitraries.js';
import { scriptedTransport } from '../helpers/scripted-transport.js';

const REASONS = [
  'not-retryable',
  'attempts-exhausted',
  'budget-exhausted',
  'unsafe-to-replay',
  'retry-after-exceeds-budget',
  'retry-budget-exhausted',
  'unauthorized',
  'offline',
  'no-healthy-origin',
  'cancelled',
];

test.prop(
  {
    policyInput: policyArb,
    replies: fc.array(replyArb, { minLength: 1, maxLength: 8 }),
    method: fc.constantFrom('GET', 'POST', 'PUT', 'PATCH', 'DELETE'),
    withKey: fc.boolean(),
    auth: fc.constantFrom('none', 'refreshes', 'refresh-fails'),
    steps: fc.array(fc.integer({ min: 1, max: 3_000 }), { minLength: 1, maxLength: 10 }),
    cancelAfterStep: fc.option(fc.integer({ min: 0, max: 12 }), { nil: undefined }),
    random: fc.double({ min: 0, max: 0.999_999, noNaN: true }),
    /** A hint (or none) before each clock step. */
    hints: fc.array(fc.option(fc.constantFrom('online', 'offline', 'changed'), { nil: undefined }), {
      maxLength: 12,
    }),
  },
  { numRuns: 1_000 },
)(
  'every request ends within its attempts and budget, never replays an unsafe write, and says why',
  async (args) => {
    const policy = definePolicy(args.policyInput);
    const clock = simulatedClock({ startAt: 1_000_000 });
    const transport = scriptedTransport(clock, args.replies);
    const connectivity = manualConnectivity('online');
    const sentWhileOffline: number[] = [];
    const send = transport.send.bind(transport);
    transport.send = (request) => {
      if (connectivity.current() === 'offline') sentWhileOffline.push(transport.calls.length + 1);
      return send(request);
    };
    // Rule 6: no attempt starts (is counted) while offline, sent or not.
    const startedWhileOffline: number[] = [];
    const client = createFailoverClient({
      connectivity,
      onEvent: (event) => {
        if (event.type === 'attempt-started' && connectivity.current() === 'offline')
          startedWhileOffline.push(event.attempt);
      },
      origins: [{ id: 'primary', url: 'https://api.example.test' }],
      policy,
      clock,
      transport,
      random: () => args.random,
      ...(args.auth === 'none'
        ? {}
        : {
            auth: {
              headers: () => ({ authorization: 'Bearer t' }),
              refresh: () =>
                args.auth === 'refreshes' ? Promise.resolve() : Promise.reject(new Error('no')),
            },
          }),
    });
    const controller = new AbortController();
    let outcome: Outcome | undefined;
    const started = clock.now();
    void client
      .request({
        method: args.method,
        path: '/p',
        signal: controller.signal,
        ...(args.withKey ? { idempotencyKey: 'k' } : {}),
      })
      .then((o) => (outcome = o));

    for (let i = 0; outcome === undefined; i++) {
      if (i === args.cancelAfterStep) controller.abort();
      const hint = args.hints[i];
      if (hint !== undefined) connectivity.set(hint);
      await clock.increment(args.steps[i % args.steps.length]!);
      expect(i).toBeLessThan(10_000); // harness guard: the loop itself must end
    }

    expect(['succeeded', 'failed']).toContain(outcome.status);
    if (outcome.status === 'deferred') throw new Error('an interactive request was deferred');
    expect(outcome.attempts).toBeLessThanOrEqual(policy.attempts.max);
    expect(transport.calls.length).toBeLessThanOrEqual(policy.attempts.max);
    expect(outcome.elapsedMs).toBeLessThanOrEqual(policy.budgetMs);
    expect(clock.now() - started).toBeGreaterThanOrEqual(outcome.elapsedMs);
    if (outcome.status === 'failed') expect(REASONS).toContain(outcome.reason);
    expect(clock.pending()).toBe(0);
    expect(sentWhileOffline).toEqual([]);
    expect(startedWhileOffline).toEqual([]);

    // Rule 2: after an attempt whose write may have reached the server, no further send without a key.
    // A 401 is the exception rule 3 makes: the server refused to process it, so it is sent once more.
    if (isWrite(args.method) && !args.withKey) {
      transport.calls.forEach((_, i) => {
        if (i === transport.calls.length - 1) return;
        const reply = args.replies[Math.min(i, args.replies.length - 1)]!.reply;
        if (reply === 'hang' || reply === 'throw') throw new Error(`a write was re-sent after a ${reply}`);
        const failure = classifyResult(reply, 'primary', { now: 0 });
        expect(failure?.requestSent === 'no' || failure?.class === 'unauthorized').toBe(true);
      });
    }
    await client.close();
  },
);
