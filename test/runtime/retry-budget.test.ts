import { describe, expect, it } from 'vitest';
import { harness, type Harness } from '../helpers/client-harness.js';
import { respond } from '../helpers/scripted-transport.js';
import { retrySlots } from '../../src/policy/retry-budget.js';
import { createRetrySlots } from '../../src/runtime/retry-slots.js';
import type { Outcome } from '../../src/policy/outcome.js';

// policy.retryBudget: retries in progress stay under a share of the requests in progress (Envoy's retry
// budget), so that during an outage many requests do not triple the load on the origin.

/** `n` GETs at once, driven to their ends. */
async function concurrently(h: Harness, n: number): Promise<Outcome[]> {
  const pending = Array.from({ length: n }, (_, i) => h.client.request({ path: `/v1/items/${i}` }));
  await h.clock.runAll();
  return Promise.all(pending);
}

const ends = (outcomes: Outcome[]) =>
  outcomes.map((o) =>
    o.status === 'failed'
      ? `${o.reason} after ${o.attempts}`
      : `${o.status} after ${o.status === 'succeeded' ? o.attempts : 0}`,
  );

describe('retrySlots', () => {
  it('is percent of the requests in progress, never fewer than minConcurrency', () => {
    expect(retrySlots({ percent: 20, minConcurrency: 3 }, 1)).toBe(3);
    expect(retrySlots({ percent: 20, minConcurrency: 3 }, 14)).toBe(3);
    expect(retrySlots({ percent: 20, minConcurrency: 3 }, 20)).toBe(4);
    expect(retrySlots({ percent: 50, minConcurrency: 0 }, 5)).toBe(2);
    expect(retrySlots({ percent: 0, minConcurrency: 0 }, 100)).toBe(0);
  });

  it('counts exactly, without floating-point loss: 29% of 100 is 29, 58% of 50 is 29, 70% of 90 is 63', () => {
    expect(retrySlots({ percent: 29, minConcurrency: 0 }, 100)).toBe(29);
    expect(retrySlots({ percent: 57, minConcurrency: 0 }, 100)).toBe(57);
    expect(retrySlots({ percent: 58, minConcurrency: 0 }, 50)).toBe(29);
    expect(retrySlots({ percent: 70, minConcurrency: 0 }, 90)).toBe(63);
  });

  it('a request keeps its slot until it is released, and claims it again at no cost', () => {
    const slots = createRetrySlots({ percent: 0, minConcurrency: 1 });
    expect(slots.claim('a', 5)).toBe(true);
    expect(slots.claim('a', 5)).toBe(true);
    expect(slots.claim('b', 5)).toBe(false);
    slots.release('a');
    expect(slots.inUse).toBe(0);
    expect(slots.claim('b', 5)).toBe(true);
  });
});

describe('the client-wide retry budget', () => {
  it('during an outage, lets only its share of 10 concurrent requests retry; the rest end at once', async () => {
    const h = harness([{ reply: respond(503) }]);
    const outcomes = await concurrently(h, 10);
    // 10 in progress: max(3, 20% of 10) = 3 slots. Those 3 use all their attempts; 7 end after their first.
    expect(ends(outcomes).sort()).toEqual([
      ...Array(3).fill('attempts-exhausted after 3'),
      ...Array(7).fill('retry-budget-exhausted after 1'),
    ]);
    expect(h.transport.calls).toHaveLength(10 + 3 * 2);
    const failed = h.events
      .filter((e) => e.type === 'failed')
      .filter((e) => e.reason === 'retry-budget-exhausted');
    expect(failed).toHaveLength(7);
    // Nothing is waited for: the 7 end when their first attempt does.
    expect(failed.every((e) => e.elapsedMs === 0)).toBe(true);
  });

  it('gives a lone request all its retries (minConcurrency), and frees the slots when requests end', async () => {
    const h = harness([{ reply: respond(503) }, { reply: respond(503) }, { reply: respond(200) }]);
    expect(await h.run({ path: '/v1/items' })).toMatchObject({ status: 'succeeded', attempts: 3 });
    const storm = harness([{ reply: respond(503) }]);
    await concurrently(storm, 10);
    const calls = storm.transport.calls.length;
    expect(await storm.run({ path: '/v1/after' })).toMatchObject({
      status: 'failed',
      reason: 'attempts-exhausted',
      attempts: 3,
    });
    expect(storm.transport.calls.length - calls).toBe(3);
  });

  it('with no budget at all, a failed attempt that could be retried ends retry-budget-exhausted', async () => {
    const h = harness([{ reply: respond(503) }, { reply: respond(200) }], {
      policy: { retryBudget: { percent: 0, minConcurrency: 0 } },
    });
    expect(await h.run({ path: '/v1/items' })).toMatchObject({
      status: 'failed',
      reason: 'retry-budget-exhausted',
      attempts: 1,
      failure: { class: 'unavailable', status: 503 },
    });
    expect(h.transport.calls).toHaveLength(1);
  });

  it('does not count the one more attempt after an auth refresh (rule 3) as a retry', async () => {
    let token = 'old';
    const h = harness([{ reply: respond(401) }, { reply: respond(200) }], {
      policy: { retryBudget: { percent: 0, minConcurrency: 0 } },
      auth: {
        headers: () => ({ authorization: `Bearer ${token}` }),
        refresh: async () => void (token = 'new'),
      },
    });
    expect(await h.run({ path: '/v1/me' })).toMatchObject({ status: 'succeeded', attempts: 2 });
  });
});
