import { fc, test } from '@fast-check/vitest';
import { describe, expect, it } from 'vitest';
import { initialContext } from '../../machines/outbox/outbox.logic.js';
import {
  earliestAfter,
  hasWorkInFlight,
  nextWakeAt,
  planDispatch,
  queueFacts,
} from '../../machines/outbox/outbox.queue.js';
import type {
  OutboxDecision,
  OutboxEntryStatus,
  OutboxEntrySummary,
  OutboxMachineContext,
  PlannedWork,
} from '../../machines/outbox/outbox.types.js';
import { definePolicy } from '../../src/policy/define-policy.js';
import { pendingSummary } from '../helpers/outbox-summaries.js';

// The outbox's questions about its whole queue (what can start, when it next wakes, whether anything is in
// flight) are answered from facts computed once per queue array, and the walk stops once nothing more can start.
// These tests hold them to the plain definitions, written out below as the docs state them.

const DAY = 86_400_000;
const policy = (durable: { order?: 'fifo' | 'per-key'; concurrency?: number; maxAttempts?: number } = {}) =>
  definePolicy({ durable: { maxAgeMs: 7 * DAY, ...durable } });

const entry = (id: string, overrides: Partial<OutboxEntrySummary> = {}): OutboxEntrySummary =>
  pendingSummary(id, { heldByServer: false, ...overrides });

const context = (
  entries: OutboxEntrySummary[],
  overrides: Partial<OutboxMachineContext> = {},
  p = policy(),
): OutboxMachineContext => ({
  ...initialContext({ policy: p, now: 0, online: true }),
  entries,
  ...overrides,
});

describe('queueFacts', () => {
  it('counts what is in flight and what holds a sending slot', () => {
    const facts = queueFacts(
      [
        entry('c', { status: 'claiming' }),
        entry('s', { status: 'sending' }),
        entry('w', { status: 'committing' }),
        entry('p'),
        entry('d', { status: 'dead' }),
      ],
      policy().durable,
    );
    expect(facts).toMatchObject({ inFlight: 3, sending: 2 });
  });

  it('keeps the oldest pending entry and whether one has used its attempts; entries in flight or dead do not count', () => {
    const limits = policy({ maxAttempts: 3 }).durable;
    expect(
      queueFacts(
        [
          entry('old-dead', { status: 'dead', createdAt: 1, attempts: 9 }),
          entry('old-sending', { status: 'sending', createdAt: 2, attempts: 9 }),
          entry('p', { createdAt: 50, attempts: 2 }),
          entry('q', { createdAt: 40, attempts: 3, counted: true }), // 2 made: its counted one is not made yet
        ],
        limits,
      ),
    ).toEqual({ inFlight: 1, sending: 1, oldestCreatedAt: 40, exhausted: false, decided: 0 });
    expect(queueFacts([entry('spent', { attempts: 3 })], limits).exhausted).toBe(true);
    expect(queueFacts([], limits)).toEqual({
      inFlight: 0,
      sending: 0,
      oldestCreatedAt: Infinity,
      exhausted: false,
      decided: 0,
    });
  });

  it('counts the pending entries with a decision to write again', () => {
    const removal = { op: 'remove', attempts: 1 } as const;
    const queue = [
      entry('a', { decided: removal }),
      entry('b', { status: 'dead', decided: removal }),
      entry('c'),
    ];
    expect(queueFacts(queue, policy().durable).decided).toBe(1);
  });

  it('is computed once per queue array: asked again, it gives the facts it kept', () => {
    const queue = [entry('a'), entry('b', { status: 'sending' })];
    const limits = policy().durable;
    const facts = queueFacts(queue, limits);
    expect(queueFacts(queue, limits)).toBe(facts);
    // A copy of the queue is another array: its facts are computed again, equal.
    expect(queueFacts([...queue], limits)).not.toBe(facts);
    expect(queueFacts([...queue], limits)).toEqual(facts);
  });

  it('is computed again for the same queue under other limits', () => {
    const queue = [entry('a', { attempts: 3 })];
    expect(queueFacts(queue, policy({ maxAttempts: 5 }).durable).exhausted).toBe(false);
    expect(queueFacts(queue, policy({ maxAttempts: 3 }).durable).exhausted).toBe(true);
  });
});

describe('earliestAfter', () => {
  const limits = policy().durable;
  it('walks the queue again only once the time it found has passed, or when asked about an earlier time', () => {
    const queue = [entry('a')];
    const times = [10, 20, 30];
    let walks = 0;
    const walk = (now: number) => () => {
      walks += 1;
      return times.find((t) => t > now) ?? Infinity;
    };
    const ask = (now: number, online = true) => earliestAfter(queue, { online, limits, now }, walk(now));
    expect(ask(0)).toBe(10);
    expect(ask(9)).toBe(10);
    expect(walks).toBe(1);
    expect(ask(10)).toBe(20); // reached: walked again
    expect(walks).toBe(2);
    expect(ask(5)).toBe(10); // earlier than the last question: walked again
    expect(walks).toBe(3);
    expect(ask(5, false)).toBe(10); // connectivity is part of the question
    expect(walks).toBe(4);
  });

  it('answers the same question again without a walk, and walks again under other limits', () => {
    const queue = [entry('a')];
    let walks = 0;
    const ask = (now: number, l = limits) =>
      earliestAfter(queue, { online: true, limits: l, now }, () => {
        walks += 1;
        return 10;
      });
    expect(ask(0)).toBe(10);
    expect(ask(0)).toBe(10); // the same time again: not walked
    expect(walks).toBe(1);
    expect(ask(0, policy({ maxAttempts: 3 }).durable)).toBe(10); // other limits are another question
    expect(walks).toBe(2);
  });
});

// ---- the plain definitions (docs/durable.md, planDispatch's comment), as a reference ----

function referencePlan(context: OutboxMachineContext): PlannedWork[] {
  const { durable } = context.policy;
  let slots =
    durable.concurrency -
    context.entries.filter((e) => e.status === 'claiming' || e.status === 'sending').length;
  const seenGroups = new Set<string>();
  const plans: PlannedWork[] = [];
  for (const e of context.entries) {
    if (e.status === 'dead') continue;
    const group = durable.order === 'fifo' ? '' : e.orderKey;
    const blocked = group !== undefined && seenGroups.has(group);
    if (group !== undefined) seenGroups.add(group);
    if (e.status !== 'pending' || (e.heldUntil ?? -Infinity) > context.now) continue;
    if (e.decided) {
      plans.push({ id: e.id, commit: e.decided });
      continue;
    }
    const made = e.counted ? e.attempts - 1 : e.attempts;
    if (made >= durable.maxAttempts)
      plans.push({
        id: e.id,
        commit: { op: 'dead-letter', attempts: e.attempts, reason: 'attempts-exhausted' },
      });
    else if (context.now - e.createdAt >= durable.maxAgeMs)
      plans.push({ id: e.id, commit: { op: 'dead-letter', attempts: e.attempts, reason: 'expired' } });
    else if (!blocked && context.online && !context.paused && slots > 0 && e.nextAttemptAt <= context.now) {
      plans.push(
        e.counted
          ? { id: e.id, send: { id: e.id, attempt: e.attempts } }
          : { id: e.id, commit: { op: 'claim', attempts: e.attempts + 1 } },
      );
      slots -= 1;
    }
  }
  return plans;
}

function referenceWake(context: OutboxMachineContext): number {
  const candidates = context.entries
    .filter((e) => e.status === 'pending')
    .flatMap((e) => {
      const held = e.heldUntil ?? -Infinity;
      if (e.decided) return [held];
      const expiry = Math.max(held, e.createdAt + context.policy.durable.maxAgeMs);
      return context.online ? [expiry, Math.max(held, e.nextAttemptAt)] : [expiry];
    })
    .filter((at) => at > context.now);
  return Math.min(Infinity, ...candidates);
}

const statusArb = fc.constantFrom<OutboxEntryStatus>(
  'pending',
  'pending',
  'pending',
  'claiming',
  'sending',
  'committing',
  'dead',
);
const entryArb = (id: number) =>
  fc.record({
    id: fc.constant(`e${id}`),
    orderKey: fc.option(fc.constantFrom('a', 'b', 'c'), { nil: undefined }),
    createdAt: fc.integer({ min: -8 * DAY, max: 100 }),
    attempts: fc.integer({ min: 0, max: 6 }),
    nextAttemptAt: fc.integer({ min: -50, max: 200 }),
    heldUntil: fc.option(fc.integer({ min: -50, max: 200 }), { nil: undefined }),
    counted: fc.option(fc.boolean(), { nil: undefined }),
    status: statusArb,
    wakesWhenOnline: fc.boolean(),
    heldByServer: fc.boolean(),
    decided: fc.option(
      fc.constantFrom<OutboxDecision>(
        { op: 'remove', attempts: 1 },
        { op: 'dead-letter', attempts: 2, reason: 'not-retryable' },
      ),
      { nil: undefined, freq: 4 },
    ),
  });
const queueArb = fc
  .integer({ min: 0, max: 12 })
  .chain((n) => fc.tuple(...Array.from({ length: n }, (_, i) => entryArb(i))));

test.prop(
  {
    queue: queueArb,
    order: fc.constantFrom<'fifo' | 'per-key'>('fifo', 'per-key'),
    concurrency: fc.integer({ min: 1, max: 4 }),
    maxAttempts: fc.integer({ min: 1, max: 6 }),
    online: fc.boolean(),
    paused: fc.boolean(),
    // One queue asked at several times, in order and out of order, as the machine and the tests ask it.
    times: fc.array(fc.integer({ min: -60, max: 250 }), { minLength: 1, maxLength: 6 }),
  },
  { numRuns: 2_000 },
)('what can start, when the queue wakes and what is in flight match their plain definitions', (args) => {
  const p = policy({ order: args.order, concurrency: args.concurrency, maxAttempts: args.maxAttempts });
  const entries = args.queue as OutboxEntrySummary[];
  for (const now of args.times) {
    const ctx = context(entries, { now, online: args.online, paused: args.paused }, p);
    expect(planDispatch(ctx)).toEqual(referencePlan(ctx));
    expect(nextWakeAt(ctx)).toBe(referenceWake(ctx));
    expect(hasWorkInFlight(ctx)).toBe(
      entries.some((e) => ['claiming', 'sending', 'committing'].includes(e.status)),
    );
  }
});
