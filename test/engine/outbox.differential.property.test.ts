import { fc } from '@fast-check/vitest';
import type { MachineLogic } from '../../src/engine/machine-logic.js';
import { actionName } from '../../src/engine/machine-table.js';
import { outboxLogic } from '../../machines/outbox/outbox.logic.js';
import { outboxMachine } from '../../machines/outbox/outbox.machine.js';
import { commitEntryReply, sendEntryReply, type Settled } from '../../machines/outbox/outbox.replies.js';
import { outboxTable } from '../../machines/outbox/outbox.table.js';
import { outboxEntryLogic } from '../../machines/outbox-entry/outbox-entry.logic.js';
import { outboxEntryTable } from '../../machines/outbox-entry/outbox-entry.table.js';
import type {
  CommitEntryInput,
  CommitOutcome,
  OutboxEntryRecord,
  OutboxMachineInput,
  SendEntryInput,
  SendResult,
} from '../../machines/outbox/outbox.types.js';
import { definePolicy } from '../../src/policy/define-policy.js';
import type { Failure, FailureClass } from '../../src/policy/failure.js';
import {
  advanceBoth,
  answerBoth,
  describeDifferential,
  expectSame,
  invertGuard,
  leanSide,
  mapTransitions,
  sendBoth,
  settleIn,
  timerMutants,
  toNextTimer,
  xstateSide,
  type Invocation,
  type MachineUnderTest,
  type Mutation,
  type Outcome,
} from './differential-harness.js';

/**
 * The lean executor runs the outbox machine exactly as XState does: parallel regions, children spawned by
 * steps (`commitEntry`, `sendEntry`, and a child machine per entry in flight, `outboxEntry`, whose state value
 * and context are compared too), events sent to child machines and to the parent, raised events and a
 * re-entered state. For random durable policies, lease
 * times, entries enqueued and loaded (due, later, expired, out of attempts, dead, with a failure history),
 * flushes, retries of dead entries, connectivity changes, answers to every call (store reads, the lease, store
 * writes, sends; successes, refusals and rejections) and clock advances, compared after every step; each run
 * ends closed.
 */
export const outboxUnderTest: MachineUnderTest = {
  machine: outboxMachine,
  table: outboxTable,
  logic: outboxLogic as unknown as MachineLogic<never, never>,
  invoked: ['loadEntries', 'acquireLease', 'releaseLease'],
  machines: {
    outboxEntry: {
      table: outboxEntryTable,
      logic: outboxEntryLogic as unknown as MachineLogic<never, never>,
    },
  },
  // As the runtime's children do (src/runtime/outbox-runner.ts): each reply stamped with the clock's time.
  spawned: {
    commitEntry: (input: CommitEntryInput, outcome, now) => ({
      ...commitEntryReply(input, outcome as Settled<CommitOutcome>),
      at: now,
    }),
    sendEntry: (input: SendEntryInput, outcome, now) => ({
      ...sendEntryReply(input, outcome as Settled<SendResult | 'missing' | 'skipped'>),
      at: now,
    }),
  },
};

const START = 1_000_000;
const IDS = ['e0', 'e1', 'e2', 'e3', 'e4'];

/** As test/properties/outbox-termination.property.test.ts, with shorter waits and ages. */
const durableArb = fc
  .record({
    backoff: fc.constantFrom<'exponential' | 'linear'>('exponential', 'linear'),
    initialMs: fc.integer({ min: 1, max: 2_000 }),
    extraMaxMs: fc.integer({ min: 0, max: 20_000 }),
    maxAttempts: fc.integer({ min: 1, max: 5 }),
    maxAgeMs: fc.oneof(fc.integer({ min: 1, max: 10_000 }), fc.integer({ min: 1, max: 3_600_000 })),
    order: fc.constantFrom<'fifo' | 'per-key'>('fifo', 'per-key'),
    concurrency: fc.integer({ min: 1, max: 3 }),
  })
  .map(({ extraMaxMs, ...durable }) => ({ ...durable, maxMs: durable.initialMs + extraMaxMs }));

const FAILURE_CLASSES: readonly FailureClass[] = [
  'offline',
  'dns',
  'connect',
  'connect-timeout',
  'tls',
  'response-timeout',
  'connection-lost',
  'rate-limited',
  'unavailable',
  'server-error',
  'client-error',
  'unexpected',
];

const failureArb: fc.Arbitrary<Failure> = fc
  .record({
    failureClass: fc.constantFrom(...FAILURE_CLASSES),
    requestSent: fc.constantFrom<Failure['requestSent']>('no', 'yes', 'unknown'),
    retryAfterMs: fc.option(fc.integer({ min: 0, max: 30_000 }), { nil: undefined }),
  })
  .map(({ failureClass, requestSent, retryAfterMs }) => ({
    class: failureClass,
    requestSent,
    origin: 'primary',
    message: failureClass,
    ...(retryAfterMs === undefined ? {} : { retryAfterMs }),
  }));

/** A stored entry, its times relative to the clock when it is used. */
const recordArb = fc.record({
  id: fc.nat(IDS.length - 1),
  orderKey: fc.option(fc.constantFrom('a', 'b'), { nil: undefined }),
  attempts: fc.constantFrom(0, 0, 0, 1, 2, 4),
  // Mostly new and due now, so that runs send; now and then old (expired) or due later.
  ageMs: fc.oneof({ weight: 3, arbitrary: fc.constant(0) }, fc.integer({ min: 1, max: 20_000 })),
  dueInMs: fc.oneof({ weight: 3, arbitrary: fc.constant(0) }, fc.integer({ min: -2_000, max: 10_000 })),
  dead: fc.nat(5).map((n) => n === 0),
  failures: fc.option(fc.array(failureArb, { minLength: 1, maxLength: 2 }), { nil: undefined }),
});
type RecordRecipe = ValueOf<typeof recordArb>;

function recordAt(r: RecordRecipe, now: number): OutboxEntryRecord {
  return {
    id: IDS[r.id]!,
    createdAt: now - r.ageMs,
    orderKey: r.orderKey,
    attempts: r.attempts,
    nextAttemptAt: now + r.dueInMs,
    status: r.dead ? 'dead' : 'pending',
    ...(r.dead ? { deadReason: 'attempts-exhausted' } : {}),
    failures: r.failures,
  };
}

const sendResultArb: fc.Arbitrary<SendResult | 'missing' | 'skipped'> = fc.oneof(
  { weight: 4, arbitrary: fc.constant({ result: 'sent' as const }) },
  {
    weight: 4,
    arbitrary: fc
      .record({
        failure: failureArb,
        attempts: fc.integer({ min: 1, max: 3 }),
        retryable: fc.boolean(),
        retryAfterMs: fc.option(fc.integer({ min: 0, max: 30_000 }), { nil: undefined, freq: 4 }),
        endedOffline: fc.option(fc.boolean(), { nil: undefined }),
      })
      .map((r): SendResult => ({ result: 'failed', ...r })),
  },
  { weight: 1, arbitrary: fc.constantFrom('missing' as const, 'skipped' as const) },
);

/** An answer for whichever call is picked; the fields that fit the call's actor are used. */
const answerArb = fc.record({
  pick: fc.nat(5),
  reject: fc.nat(7).map((n) => n === 0),
  entries: fc.array(recordArb, { maxLength: 3 }),
  /** Ids a read says were written while it ran (`LoadEntriesOutput.keep`). */
  complete: fc.boolean(),
  keep: fc.subarray([...IDS], { maxLength: 2 }),
  held: fc.oneof({ weight: 4, arbitrary: fc.constant(true) }, fc.constant(false)),
  commit: fc.oneof(
    { weight: 6, arbitrary: fc.constant({ status: 'committed' as const }) },
    { weight: 1, arbitrary: fc.constant({ status: 'missing' as const }) },
    { weight: 1, arbitrary: fc.record({ status: fc.constant('stale' as const), stored: recordArb }) },
  ),
  send: sendResultArb,
});
type Answer = ValueOf<typeof answerArb>;

const inputArb = fc.record({
  durable: durableArb,
  online: fc.oneof({ weight: 3, arbitrary: fc.constant(true) }, fc.constant(false)),
  leaseTtlMs: fc.option(fc.integer({ min: 3, max: 6_000 }), { nil: undefined, freq: 4 }),
  /**
   * The run's end answers the first sends and writes with these, in turn (then every call succeeds): sends
   * that fail, writes that fail or do not apply.
   */
  ending: fc.record({
    sendEntry: fc.array(answerArb, { maxLength: 4 }),
    commitEntry: fc.array(answerArb, { maxLength: 3 }),
  }),
});

/** Whether a sent event carries `at` (the runtime always stamps; an embedder may not). */
const stampArb = fc.nat(5).map((n) => n > 0);

const stimulusArb = fc.oneof(
  { weight: 8, arbitrary: fc.record({ kind: fc.constant('answer' as const), answer: answerArb }) },
  {
    weight: 3,
    arbitrary: fc.record({
      kind: fc.constant('advance' as const),
      ms: fc.oneof(
        fc.integer({ min: 0, max: 50 }),
        fc.integer({ min: 1, max: 5_000 }),
        fc.integer({ min: 1, max: 60_000 }),
      ),
    }),
  },
  {
    weight: 2,
    arbitrary: fc.record({ kind: fc.constant('toTimer' as const), short: fc.nat(3).map((n) => n === 0) }),
  },
  {
    weight: 3,
    arbitrary: fc.record({ kind: fc.constant('enqueue' as const), entry: recordArb, stamp: stampArb }),
  },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('flush' as const), stamp: stampArb }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('askForLease' as const), stamp: stampArb }) },
  {
    weight: 1,
    arbitrary: fc.record({ kind: fc.constant('pause' as const), paused: fc.boolean(), stamp: stampArb }),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant('retry' as const),
      id: fc.nat(IDS.length - 1),
      stamp: stampArb,
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant('connectivity' as const),
      online: fc.boolean(),
      stamp: stampArb,
    }),
  },
  { weight: 1, arbitrary: fc.constant({ kind: 'close' as const }) },
);

type ValueOf<A> = A extends fc.Arbitrary<infer T> ? T : never;
export type OutboxCase = ValueOf<typeof inputArb>;
export type OutboxStimulus = ValueOf<typeof stimulusArb>;

/** The value (or error) that answers `call`, built once and given to both sides. */
function answerFor(call: Invocation, answer: Answer, at: number): Outcome {
  if (answer.reject) return { ok: false, error: new Error(`${call.src} failed`) };
  switch (call.src) {
    case 'loadEntries':
      return {
        ok: true,
        value: {
          entries: answer.entries.map((r) => recordAt(r, at)),
          complete: answer.complete,
          keep: answer.keep,
          at,
        },
      };
    case 'acquireLease':
      return { ok: true, value: { held: answer.held, at } };
    case 'releaseLease':
      return { ok: true, value: undefined };
    case 'commitEntry': {
      const { commit } = answer;
      if (commit.status !== 'stale') return { ok: true, value: commit };
      const id = (call.input as CommitEntryInput).id;
      return { ok: true, value: { status: 'stale', stored: { ...recordAt(commit.stored, at), id } } };
    }
    default:
      return { ok: true, value: answer.send };
  }
}

function makeInput(i: OutboxCase): OutboxMachineInput {
  return {
    policy: definePolicy({ durable: i.durable }),
    now: START,
    online: i.online,
    ...(i.leaseTtlMs === undefined ? {} : { leaseTtlMs: i.leaseTtlMs }),
  };
}

const stamped = (stamp: boolean, at: number) => (stamp ? { at } : {});

export async function runOutboxDifferential(
  i: OutboxCase,
  stimuli: readonly OutboxStimulus[],
  mutation?: Mutation,
  mut: MachineUnderTest = outboxUnderTest,
) {
  // One input for both: its policy is frozen data that neither side changes.
  const input = makeInput(i);
  const a = xstateSide(mut, input, START);
  const b = leanSide(mut, input, START, mutation);
  // Every wait of the machine is at least 1 ms: one round lets every answer's reaction run on both sides.
  const settle = () => settleIn(1, a, b);
  await settle();
  expectSame(mut, a, b, 'start');
  let step = 0;
  for (const s of stimuli) {
    step++;
    switch (s.kind) {
      case 'answer':
        answerBoth(a, b, s.answer.pick, (call, at) => answerFor(call, s.answer, at));
        break;
      case 'advance':
        await advanceBoth(a, b, s.ms);
        break;
      case 'toTimer':
        await toNextTimer(a, b, s.short ? 1 : 0);
        break;
      case 'enqueue':
        sendBoth(a, b, (at) => ({
          type: 'outbox.enqueued',
          entry: recordAt(s.entry, at),
          ...stamped(s.stamp, at),
        }));
        break;
      case 'flush':
        sendBoth(a, b, (at) => ({ type: 'outbox.flush', ...stamped(s.stamp, at) }));
        break;
      case 'askForLease':
        sendBoth(a, b, (at) => ({ type: 'outbox.askForLease', ...stamped(s.stamp, at) }));
        break;
      case 'pause':
        sendBoth(a, b, (at) => ({
          type: s.paused ? 'outbox.pause' : 'outbox.resume',
          ...stamped(s.stamp, at),
        }));
        break;
      case 'retry':
        sendBoth(a, b, (at) => ({ type: 'outbox.retry', id: IDS[s.id]!, ...stamped(s.stamp, at) }));
        break;
      case 'connectivity':
        sendBoth(a, b, (at) => ({ type: 'connectivity.changed', online: s.online, ...stamped(s.stamp, at) }));
        break;
      case 'close':
        sendBoth(a, b, () => ({ type: 'outbox.close' }));
        break;
    }
    await settle();
    expectSame(mut, a, b, `step ${step} (${JSON.stringify(s)})`);
  }
  // Then online, every call answered (the first sends and writes as `ending` says, the rest with a success)
  // and time moved on, until nothing is left to do; then closed.
  sendBoth(a, b, (at) => ({ type: 'connectivity.changed', online: true, at }));
  await settle();
  expectSame(mut, a, b, 'end: online');
  const success: Answer = {
    pick: 0,
    reject: false,
    entries: [],
    // Not a full read: the end drains what the machine knows instead of forgetting it.
    complete: false,
    keep: [],
    held: true,
    commit: { status: 'committed' },
    send: { result: 'sent' },
  };
  const script = { sendEntry: [...i.ending.sendEntry], commitEntry: [...i.ending.commitEntry] };
  const ending = (call: Invocation, at: number) => {
    const scripted =
      call.src === 'sendEntry' || call.src === 'commitEntry' ? script[call.src].shift() : undefined;
    return answerFor(call, scripted ?? success, at);
  };
  for (let n = 0; a.observe().status === 'active' && n < 30; n++) {
    if (!answerBoth(a, b, 0, ending) && !(await toNextTimer(a, b, 0))) break;
    await settle();
    expectSame(mut, a, b, `end ${n}`);
  }
  sendBoth(a, b, () => ({ type: 'outbox.close' }));
  await settle();
  expectSame(mut, a, b, 'end: closed');
}

describeDifferential({
  checks: 'same states, context, emitted events, children, invocations, timers and output at every step',
  machine: outboxMachine,
  table: outboxTable,
  input: inputArb,
  stimuli: fc.array(stimulusArb, { maxLength: 20 }),
  run: (input, stimuli, mutation) => runOutboxDifferential(input, stimuli, mutation),
  children: [outboxEntryTable],
  mutants: [
    // The entry's machine: a wrong lean run of the child machine is caught as surely as one of the outbox.
    [
      'a guard inverted in the entry machine (isMovedOn)',
      { machines: { outboxEntry: invertGuard(outboxEntryTable, 'isMovedOn') } },
    ],
    [
      'a guard inverted in the entry machine (wroteDeadLetter)',
      { machines: { outboxEntry: invertGuard(outboxEntryTable, 'wroteDeadLetter') } },
    ],
    [
      'a report to the outbox dropped (reportProgress, on entering a state of the entry machine)',
      {
        machines: {
          outboxEntry: {
            ...outboxEntryTable,
            states: outboxEntryTable.states.map((state) =>
              state.key === 'committing'
                ? { ...state, entry: state.entry!.filter((a) => actionName(a) !== 'reportProgress') }
                : state,
            ),
          },
        },
      },
    ],
    ['a guard inverted (isLeaseGranted)', { table: invertGuard(outboxTable, 'isLeaseGranted') }],
    ['a guard inverted (hasWakeTime)', { table: invertGuard(outboxTable, 'hasWakeTime') }],
    [
      'a re-entry dropped (timer.armed on outbox.rearm)',
      {
        table: mapTransitions(outboxTable, (row) => {
          if (!row.reenter) return row;
          const { reenter: _dropped, ...rest } = row;
          return rest;
        }),
      },
    ],
    [
      'a raised event dropped (rearm, from every transition)',
      {
        table: mapTransitions(outboxTable, (row) =>
          row.actions
            ? { ...row, actions: row.actions.filter((action) => actionName(action) !== 'rearm') }
            : row,
        ),
      },
    ],
    // 1 ms, not 0: every wait at 0 could loop in microtasks without end (loadFailed -> loading, the lease).
    ...timerMutants(1),
  ],
});
