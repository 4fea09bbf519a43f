import { createActor, fromPromise, initialTransition, transition, type InspectionEvent } from 'xstate';
import { describe, expect, it } from 'vitest';
import { commitEntryActor, outboxActors, sendEntryActor } from '../../machines/outbox/outbox.machine.js';
import { initialContext, outboxLogic, summarize } from '../../machines/outbox/outbox.logic.js';
import { nextWakeAt, planDispatch } from '../../machines/outbox/outbox.queue.js';
import type {
  AcquireLeaseInput,
  AcquireLeaseOutput,
  CommitEntryInput,
  CommitOutcome,
  LoadEntriesOutput,
  OutboxEntryRecord,
  OutboxEntrySummary,
  OutboxMachineContext,
  OutboxMachineEmitted,
  SendEntryInput,
  SendResult,
} from '../../machines/outbox/outbox.types.js';
import { outboxMachine } from '../../src/machines.js';
import { simulatedClock } from '../../src/clock/simulated-clock.js';
import { definePolicy } from '../../src/policy/define-policy.js';
import type { PolicyInput } from '../../src/policy/policy.js';

// The outbox machine alone, as an app would embed it: its own actors, its own clock, no runner.

const record = (id: string, overrides: Partial<OutboxEntryRecord> = {}): OutboxEntryRecord => ({
  id,
  createdAt: 0,
  attempts: 0,
  nextAttemptAt: 0,
  status: 'pending',
  ...overrides,
});

const input = (policy: PolicyInput = {}, online = true) => ({ policy: definePolicy(policy), now: 0, online });

/** Values of the actor's snapshots as the inspector saw them. */
const statesSeen = (events: InspectionEvent[]) =>
  events.flatMap((e) =>
    e.type === '@xstate.snapshot' && 'value' in e.snapshot ? [JSON.stringify(e.snapshot.value)] : [],
  );

function run(actors: Partial<typeof outboxActors>, options: { policy?: PolicyInput; online?: boolean } = {}) {
  const clock = simulatedClock();
  const inspected: InspectionEvent[] = [];
  const emitted: OutboxMachineEmitted[] = [];
  const actor = createActor(outboxMachine.provide({ actors }), {
    input: input(options.policy, options.online),
    clock,
    inspect: (e) => inspected.push(e),
  });
  actor.on('*', (e) => emitted.push(e));
  actor.start();
  return { clock, actor, inspected, emitted };
}

describe('outboxMachine embedded without the runner', () => {
  it('loads, sends in order with app-provided actors, and stops with no timer left', async () => {
    const sent: SendEntryInput[] = [];
    const { clock, actor, inspected, emitted } = run({
      loadEntries: fromPromise<LoadEntriesOutput>(() =>
        Promise.resolve({ entries: [record('a'), record('b', { orderKey: 'k' })] }),
      ),
      sendEntry: sendEntryActor(async (input) => {
        sent.push(input);
        return { result: 'sent' };
      }),
    });
    await clock.increment(0);
    expect(sent).toEqual([
      { id: 'a', attempt: 1 },
      { id: 'b', attempt: 1 },
    ]);
    expect(actor.getSnapshot().context.entries).toEqual([]);
    expect(emitted.filter((e) => e.type === 'entry-sent').map((e) => e.id)).toEqual(['a', 'b']);
    expect(emitted.at(-1)).toEqual({ type: 'outbox-changed', size: 0, pending: 0, dead: 0, at: 0 });
    // The inspector sees the states by name.
    const states = statesSeen(inspected);
    expect(states[0]).toBe('"loading"');
    expect(states).toContain('{"running":{"lease":"held","timer":"idle"}}');
    expect(actor.getSnapshot().value).toEqual({ running: { lease: 'released', timer: 'idle' } });
    actor.send({ type: 'outbox.close' });
    expect(actor.getSnapshot().status).toBe('done');
    expect(clock.pending()).toBe(0);
  });

  it('without a provided sendEntry, dead-letters visibly rather than waiting forever', async () => {
    const { clock, actor, emitted } = run({});
    actor.send({ type: 'outbox.enqueued', entry: record('a') });
    await clock.increment(0);
    expect(actor.getSnapshot().context.entries).toMatchObject([
      { id: 'a', status: 'dead', deadReason: 'not-retryable' },
    ]);
    expect(emitted).toContainEqual(
      expect.objectContaining({
        type: 'entry-dead-lettered',
        reason: 'not-retryable',
        failureClass: 'unexpected',
      }),
    );
    actor.stop();
  });

  it('without a provided sendEntry, writes a dead-letter whose failure says what to provide and that nothing was sent', async () => {
    const writes: CommitEntryInput[] = [];
    const { clock, actor } = run({
      commitEntry: commitEntryActor((write) => {
        writes.push(write);
        return Promise.resolve({ status: 'committed' });
      }),
    });
    actor.send({ type: 'outbox.enqueued', entry: record('a') });
    await clock.increment(0);
    expect(writes.map((w) => w.commit.op)).toEqual(['claim', 'dead-letter']);
    expect(writes[1]!.commit).toMatchObject({
      reason: 'not-retryable',
      failure: {
        class: 'unexpected',
        requestSent: 'no',
        origin: '',
        message: 'outboxMachine: provide a `sendEntry` actor with outboxMachine.provide({ actors })',
      },
    });
    actor.stop();
  });

  it('counts each attempt in the store before sending it', async () => {
    const order: string[] = [];
    const { clock, actor } = run({
      commitEntry: commitEntryActor(async ({ commit }) => {
        order.push(commit.op);
        return { status: 'committed' };
      }),
      sendEntry: sendEntryActor(async () => {
        order.push('send');
        return order.length < 3
          ? {
              result: 'failed',
              failure: { class: 'connect', requestSent: 'no', origin: 'o', message: 'x' },
              attempts: 1,
              retryable: true,
            }
          : { result: 'sent' };
      }),
    });
    actor.send({ type: 'outbox.enqueued', entry: record('a'), at: 0 });
    await clock.increment(10_000);
    expect(order).toEqual(['claim', 'send', 'reschedule', 'claim', 'send', 'remove']);
    actor.stop();
  });

  it('takes the store version when a claim finds the entry moved on, and sends nothing then', async () => {
    const sent: SendEntryInput[] = [];
    const { clock, actor } = run({
      commitEntry: commitEntryActor(async ({ commit }): Promise<CommitOutcome> =>
        commit.op === 'claim'
          ? { status: 'stale', stored: record('a', { attempts: 4, nextAttemptAt: 50_000 }) }
          : { status: 'committed' },
      ),
      sendEntry: sendEntryActor(async (input) => {
        sent.push(input);
        return { result: 'sent' };
      }),
    });
    actor.send({ type: 'outbox.enqueued', entry: record('a') });
    await clock.increment(0);
    expect(sent).toEqual([]);
    expect(actor.getSnapshot().context.entries).toMatchObject([
      { id: 'a', status: 'pending', attempts: 4, nextAttemptAt: 50_000 },
    ]);
    actor.stop();
  });

  it('leaves an entry another runner holds until the time the store gives, with its group, then claims it again', async () => {
    const claims: number[] = [];
    const sent: string[] = [];
    const { clock, actor, emitted } = run(
      {
        commitEntry: commitEntryActor(
          async ({ commit }): Promise<CommitOutcome> => {
            if (commit.op !== 'claim') return { status: 'committed' };
            claims.push(clock.now());
            return claims.length === 1 ? { status: 'taken', until: 800 } : { status: 'committed' };
          },
          { now: () => clock.now() },
        ),
        sendEntry: sendEntryActor(async ({ id }) => {
          sent.push(id);
          return { result: 'sent' };
        }),
      },
      { policy: { durable: { order: 'per-key', concurrency: 4 } } },
    );
    actor.send({ type: 'outbox.enqueued', entry: record('a', { orderKey: 'k' }), at: 0 });
    actor.send({ type: 'outbox.enqueued', entry: record('b', { orderKey: 'k' }), at: 0 });
    await clock.increment(0);
    expect(actor.getSnapshot().context.entries).toMatchObject([
      { id: 'a', status: 'pending', attempts: 0, heldUntil: 800, taken: true },
      { id: 'b', status: 'pending' },
    ]);
    // Not a store failure: nothing says so.
    expect(emitted.some((e) => e.type === 'outbox-store-failed')).toBe(false);
    await clock.increment(799);
    expect(claims).toEqual([0]);
    expect(sent).toEqual([]);
    await clock.increment(1);
    expect(claims).toEqual([0, 800, 800]);
    expect(sent).toEqual(['a', 'b']);
    actor.stop();
  });

  it('sends nothing when a claim fails, and tries again after initialMs', async () => {
    let claims = 0;
    const sent: number[] = [];
    const { clock, actor, emitted } = run({
      commitEntry: commitEntryActor(async ({ commit }) => {
        if (commit.op === 'claim' && ++claims === 1) throw new Error('store unavailable');
        return { status: 'committed' };
      }),
      sendEntry: sendEntryActor(
        async () => {
          sent.push(clock.now());
          return { result: 'sent' };
        },
        { now: () => clock.now() },
      ),
    });
    actor.send({ type: 'outbox.enqueued', entry: record('a'), at: 0 });
    await clock.increment(9_999);
    expect(sent).toEqual([]);
    expect(emitted).toContainEqual({ type: 'outbox-store-failed', id: 'a', op: 'claim', at: 0 });
    await clock.increment(1);
    expect(sent).toEqual([10_000]);
    actor.stop();
  });

  it('keeps the counted attempt of a send that did not start, and uses it for the next send', async () => {
    const ops: string[] = [];
    let skip = true;
    const { clock, actor } = run({
      commitEntry: commitEntryActor(async ({ commit }) => {
        ops.push(commit.op);
        return { status: 'committed' };
      }),
      sendEntry: sendEntryActor(async ({ attempt }) => {
        ops.push(`send ${attempt}`);
        if (skip) {
          skip = false;
          return 'skipped';
        }
        return { result: 'sent' };
      }),
    });
    actor.send({ type: 'outbox.enqueued', entry: record('a') });
    await clock.increment(0);
    expect(ops).toEqual(['claim', 'send 1', 'send 1', 'remove']);
    actor.stop();
  });

  it('forgets an entry the store no longer has', async () => {
    const { clock, actor } = run({ sendEntry: sendEntryActor(async () => 'missing' as const) });
    actor.send({ type: 'outbox.enqueued', entry: record('a') });
    await clock.increment(0);
    expect(actor.getSnapshot().context.entries).toEqual([]);
    expect(Object.keys(actor.getSnapshot().children)).toEqual([]);
    actor.stop();
  });

  it('reads the store again after loadRetry when loading fails', async () => {
    let loads = 0;
    const { clock, actor, emitted } = run(
      {
        loadEntries: fromPromise<LoadEntriesOutput>(async () => {
          loads += 1;
          if (loads === 1) throw new Error('locked');
          return { entries: [] };
        }),
      },
      { policy: { durable: { initialMs: 5_000 } } },
    );
    await clock.increment(0);
    expect(actor.getSnapshot().value).toBe('loadFailed');
    expect(emitted).toEqual([{ type: 'outbox-store-failed', op: 'load', at: 0 }]);
    await clock.increment(5_000);
    expect(loads).toBe(2);
    expect(actor.getSnapshot().matches('running')).toBe(true);
    actor.stop();
  });

  it('waits for the lease while another runner holds it', async () => {
    const asked: number[] = [];
    const { clock, actor } = run({
      acquireLease: fromPromise<AcquireLeaseOutput, AcquireLeaseInput>(async ({ input }) => {
        asked.push(clock.now());
        expect(input.ttlMs).toBe(30_000);
        return { held: asked.length > 2, at: clock.now() };
      }),
      sendEntry: sendEntryActor(async () => ({ result: 'sent' })),
    });
    actor.send({ type: 'outbox.enqueued', entry: record('a') });
    await clock.increment(0);
    expect(actor.getSnapshot().value).toMatchObject({ running: { lease: 'waitingForLease' } });
    await clock.increment(30_000);
    expect(asked).toEqual([0, 15_000, 30_000]);
    expect(actor.getSnapshot().context.entries).toEqual([]);
    actor.stop();
  });

  it('aborts the sends in flight when closed', async () => {
    let aborted = false;
    const { clock, actor } = run({
      sendEntry: sendEntryActor(
        (_, signal) =>
          new Promise<SendResult>((resolve) =>
            signal.addEventListener('abort', () => {
              aborted = true;
              resolve({ result: 'sent' });
            }),
          ),
      ),
    });
    actor.send({ type: 'outbox.enqueued', entry: record('a') });
    await clock.increment(10_000);
    expect(actor.getSnapshot().value).toMatchObject({ running: { lease: 'held' } });
    actor.send({ type: 'outbox.close' });
    await clock.increment(0);
    expect(aborted).toBe(true);
    expect(actor.getSnapshot().status).toBe('done');
    expect(clock.pending()).toBe(0);
  });

  it('ignores results for an entry that is not sending', async () => {
    const { clock, actor } = run({});
    actor.send({ type: 'outbox.enqueued', entry: record('dead', { status: 'dead' }) });
    await clock.increment(0);
    const before = actor.getSnapshot().context.entries;
    actor.send({ type: 'send.ended', id: 'dead', result: { result: 'sent' } });
    actor.send({ type: 'commit.succeeded', id: 'dead' });
    actor.send({ type: 'send.ended', id: 'nobody', result: { result: 'sent' } });
    expect(actor.getSnapshot().context.entries).toEqual(before);
    actor.stop();
  });

  it('can be stepped without an actor (pure transitions)', () => {
    const [loading] = initialTransition(outboxMachine, input());
    expect(loading.value).toBe('loading');
    const [running] = transition(outboxMachine, loading, {
      type: 'xstate.done.actor.loadEntries',
      output: { entries: [record('a')] },
    } as never);
    expect(running.value).toEqual({ running: { lease: 'acquiring', timer: 'armed' } });
    expect(running.context.wakeAt).toBe(604_800_000); // the entry's expiry
  });
});

describe('a decision whose write failed', () => {
  // After a send, its outcome (the removal, a reschedule, a dead-lettering) is written to the store. When that
  // write fails, the outcome is still known: it is written again after the hold-off (storeRetryMs: the durable
  // backoff, 10 s by default), and the entry is not claimed or sent again meanwhile.
  function decisionRun(options: {
    maxAttempts?: number;
    reply: SendResult;
    failWrites: number;
    renewal?: 'fails';
  }) {
    const writes: string[] = [];
    const sends: SendEntryInput[] = [];
    let failures = options.failWrites;
    let leaseAsks = 0;
    const t = run(
      {
        commitEntry: commitEntryActor(async ({ commit }) => {
          writes.push(commit.op);
          if (commit.op !== 'claim' && failures-- > 0) throw new Error('disk full');
          return { status: 'committed' };
        }),
        sendEntry: sendEntryActor(async (input) => {
          sends.push(input);
          return options.reply;
        }),
        acquireLease: fromPromise<AcquireLeaseOutput, AcquireLeaseInput>(async () => {
          leaseAsks += 1;
          if (options.renewal === 'fails' && leaseAsks === 2) throw new Error('store gone');
          return { held: true };
        }),
      },
      { policy: { durable: { maxAttempts: options.maxAttempts ?? 10 } } },
    );
    t.actor.send({ type: 'outbox.enqueued', entry: record('a'), at: 0 });
    return { ...t, writes, sends };
  }
  const refused: SendResult = {
    result: 'failed',
    failure: { class: 'client-error', requestSent: 'yes', origin: 'o', status: 422, message: 'HTTP 422' },
    attempts: 1,
    retryable: false,
  };

  it('is written again after the hold-off, with no other send: a delivered entry at its last attempt is removed, not dead-lettered', async () => {
    const { clock, actor, writes, sends, emitted } = decisionRun({
      maxAttempts: 1,
      reply: { result: 'sent' },
      failWrites: 1,
    });
    await clock.increment(0);
    expect(writes).toEqual(['claim', 'remove']);
    expect(actor.getSnapshot().context.entries).toMatchObject([
      { id: 'a', status: 'pending', decided: { op: 'remove', attempts: 1 }, heldUntil: 10_000 },
    ]);
    // The lease is kept while the decision waits: another runner cannot take the entry meanwhile.
    expect(actor.getSnapshot().value).toMatchObject({ running: { lease: 'held', timer: 'armed' } });
    await clock.increment(9_999);
    expect(writes).toEqual(['claim', 'remove']);
    await clock.increment(1);
    expect(writes).toEqual(['claim', 'remove', 'remove']);
    expect(sends).toEqual([{ id: 'a', attempt: 1 }]);
    expect(actor.getSnapshot().context.entries).toEqual([]);
    expect(emitted.filter((e) => e.type === 'entry-sent')).toEqual([
      { type: 'entry-sent', id: 'a', attempts: 1, at: 10_000 },
    ]);
    expect(emitted.some((e) => e.type === 'entry-dead-lettered')).toBe(false);
    actor.stop();
  });

  it('a refused write (422) whose dead-lettering failed is dead-lettered after the hold-off, not sent again', async () => {
    const { clock, actor, writes, sends, emitted } = decisionRun({ reply: refused, failWrites: 2 });
    await clock.increment(0);
    await clock.increment(10_000); // the first hold-off; the write fails again
    expect(writes).toEqual(['claim', 'dead-letter', 'dead-letter']);
    await clock.increment(20_000); // the second: the backoff for two failed writes in a row
    expect(writes).toEqual(['claim', 'dead-letter', 'dead-letter', 'dead-letter']);
    expect(sends).toHaveLength(1);
    expect(actor.getSnapshot().context.entries).toMatchObject([
      { id: 'a', status: 'dead', deadReason: 'not-retryable' },
    ]);
    expect(emitted).toContainEqual(
      expect.objectContaining({ type: 'entry-dead-lettered', id: 'a', reason: 'not-retryable', at: 30_000 }),
    );
    actor.stop();
  });

  it('is forgotten when the lease is lost: the entry goes back to the queue as the store has it', async () => {
    // The lease is renewed every 10 s (a third of its 30 s); the hold-off is 10 s too, and the renewal fails
    // first, at the same instant.
    const { clock, actor, writes } = decisionRun({ reply: refused, failWrites: 1, renewal: 'fails' });
    await clock.increment(0);
    expect(actor.getSnapshot().context.entries[0]?.decided).toMatchObject({ op: 'dead-letter' });
    await clock.increment(10_000);
    expect(actor.getSnapshot().value).toMatchObject({ running: { lease: 'waitingForLease' } });
    expect(actor.getSnapshot().context.entries).toMatchObject([{ id: 'a', status: 'pending', attempts: 1 }]);
    expect(actor.getSnapshot().context.entries[0]?.decided).toBeUndefined();
    expect(writes).toEqual(['claim', 'dead-letter']);
    actor.stop();
  });
});

describe('outboxMachine decisions (pure)', () => {
  const context = (
    entries: OutboxEntrySummary[],
    policy: PolicyInput = {},
    overrides: Partial<OutboxMachineContext> = {},
  ): OutboxMachineContext => ({ ...initialContext(input(policy)), entries, ...overrides });
  const pending = (id: string, overrides: Partial<OutboxEntryRecord> = {}) =>
    summarize(record(id, overrides));

  it('starts only the head of a fifo queue, even with room for more', () => {
    const ctx = context([pending('a'), pending('b')], { durable: { concurrency: 5 } });
    expect(planDispatch(ctx)).toEqual([{ id: 'a', commit: { op: 'claim', attempts: 1 } }]);
  });

  it('lets a fifo head waiting for its backoff block the rest', () => {
    const ctx = context([pending('a', { nextAttemptAt: 10 }), pending('b')]);
    expect(planDispatch(ctx)).toEqual([]);
    expect(nextWakeAt(ctx)).toBe(10);
  });

  it('lets dead entries block nothing', () => {
    const ctx = context([pending('a', { status: 'dead' }), pending('b')]);
    expect(planDispatch(ctx).map((p) => p.id)).toEqual(['b']);
  });

  it('orders per key only, up to concurrency', () => {
    const entries = [
      pending('a1', { orderKey: 'a' }),
      pending('a2', { orderKey: 'a' }),
      pending('b1', { orderKey: 'b' }),
      pending('n1'),
      pending('n2'),
    ];
    expect(
      planDispatch(context(entries, { durable: { order: 'per-key', concurrency: 3 } })).map((p) => p.id),
    ).toEqual(['a1', 'b1', 'n1']);
    expect(
      planDispatch(context(entries, { durable: { order: 'per-key', concurrency: 9 } })).map((p) => p.id),
    ).toEqual(['a1', 'b1', 'n1', 'n2']);
  });

  it('sends nothing while offline, but dead-letters what expired or ran out of attempts', () => {
    const ctx = context(
      [pending('old', { createdAt: -604_800_000 }), pending('spent', { attempts: 10 }), pending('fresh')],
      { durable: { maxAttempts: 10 } },
      { online: false },
    );
    expect(planDispatch(ctx)).toEqual([
      { id: 'old', commit: { op: 'dead-letter', attempts: 0, reason: 'expired' } },
      { id: 'spent', commit: { op: 'dead-letter', attempts: 10, reason: 'attempts-exhausted' } },
    ]);
  });

  it('wakes for expiry while offline, and for the next attempt only while online', () => {
    const entries = [pending('a', { nextAttemptAt: 5_000 })];
    expect(nextWakeAt(context(entries))).toBe(5_000);
    expect(nextWakeAt(context(entries, {}, { online: false }))).toBe(604_800_000);
    expect(nextWakeAt(context([]))).toBe(Infinity);
    expect(outboxLogic.guards.hasWakeTime({ context: context([]) })).toBe(false);
  });

  it('never asks a timer to wait longer than a host timer can', () => {
    const ctx = context([pending('a', { nextAttemptAt: 10 ** 12 })], {
      durable: { maxAgeMs: 2_147_483_647 },
    });
    expect(outboxLogic.delays.nextDue({ context: ctx })).toBe(2_147_483_647);
    expect(outboxLogic.delays.leaseRenewal({ context: ctx })).toBe(10_000);
    expect(outboxLogic.delays.leaseRetry({ context: ctx })).toBe(15_000);
  });

  it('is settled only with nothing in flight and nothing to start', () => {
    expect(outboxLogic.guards.isSettled({ context: context([pending('a', { nextAttemptAt: 1 })]) })).toBe(
      true,
    );
    expect(outboxLogic.guards.isSettled({ context: context([{ ...pending('a'), status: 'sending' }]) })).toBe(
      false,
    );
    expect(outboxLogic.guards.isSettled({ context: context([pending('a')]) })).toBe(false);
  });

  it('keeps no request data: only ids, counters and times', () => {
    const summary = summarize({
      ...record('a'),
      request: { path: '/secret', headers: { authorization: 'x' }, body: 'b' },
    } as OutboxEntryRecord);
    expect(Object.keys(summary).sort()).toEqual(
      [
        'attempts',
        'createdAt',
        'deadReason',
        'heldByServer',
        'id',
        'nextAttemptAt',
        'orderKey',
        'status',
        'wakesWhenOnline',
      ].sort(),
    );
  });
});

// Type-level: the commit function an app provides receives the machine's commit input.
export type _CommitInputIsTyped = Parameters<
  Parameters<typeof commitEntryActor>[0]
>[0] extends CommitEntryInput
  ? true
  : never;
