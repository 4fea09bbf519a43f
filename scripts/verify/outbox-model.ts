import type { MachineLogic } from '../../src/engine/machine-logic.js';
import { outboxLogic } from '../../machines/outbox/outbox.logic.js';
import { commitEntryReply, sendEntryReply, type Settled } from '../../machines/outbox/outbox.replies.js';
import { outboxTable } from '../../machines/outbox/outbox.table.js';
import { outboxEntryLogic } from '../../machines/outbox-entry/outbox-entry.logic.js';
import { outboxEntryTable } from '../../machines/outbox-entry/outbox-entry.table.js';
import { childMachine } from '../../src/engine/child-machine.js';
import type {
  CommitEntryInput,
  CommitOutcome,
  OutboxCommit,
  OutboxEntryRecord,
  OutboxEntrySummary,
  OutboxMachineInput,
  SendEntryInput,
  SendResult,
} from '../../machines/outbox/outbox.types.js';
import { definePolicy } from '../../src/policy/define-policy.js';
import { durableBackoffMs, wakesWhenOnline } from '../../src/policy/durable-backoff.js';
import type { Policy } from '../../src/policy/policy.js';
import type { Call, DrivenRun, Outcome } from './driven-run.js';
import type { MachineModel, Monitor } from './machine-model.js';

/**
 * The outbox machine with `entries` durable entries (each enqueued at most once per path, or found in the
 * store), every answer of the store (reads, lease, writes: done, missing, stale, failed) and of each send (sent,
 * failed retryable or not, with Retry-After, offline, missing, skipped, thrown), flushes, retries, connectivity,
 * lease requests and close. Nothing carries a time: time moves only by the machine's own timers.
 */
const record = (
  entry: EntryShape,
  now: number,
  changes: Partial<OutboxEntryRecord> = {},
): OutboxEntryRecord => ({
  id: entry.id,
  createdAt: now,
  ...(entry.orderKey === undefined ? {} : { orderKey: entry.orderKey }),
  attempts: 0,
  nextAttemptAt: now,
  status: 'pending',
  ...changes,
});

/** An entry of the model: its id, and its `orderKey` when the input gives it one. */
interface EntryShape {
  id: string;
  orderKey?: string;
}

/** How many of the store's and the sends' answers a search tries (see `OutboxBounds`). */
export type Answers = 'every' | 'few' | 'fewest';

/**
 * The bounds of one outbox search.
 * - `entries`: 1 or 2 durable entries;
 * - `keys` (two entries): the same `orderKey` for both, or one each; with keys the policy is `per-key` with
 *   concurrency 2, so both entries can be in flight at once, or the second waits for the first;
 * - `answers`: `every` answer of every store call and send (docs/verification.md), or `few`: one success and
 *   one failure of each kind the scheduler tells apart (a send that is retryable, one that is not; a write that
 *   is done, one that throws), for the two-entry search where every answer combines with every phase of the
 *   other entry; or `fewest` (the quick part in `npm test`): the store always answers with its success, and a
 *   send is sent or fails retryably;
 * - `callerEvents`: at most this many events from the caller (flush, retry, lease, connectivity, close) per
 *   path, besides each entry's `outbox.enqueued`; unbounded when left out.
 */
export interface OutboxBounds {
  entries: 1 | 2;
  keys?: 'fifo' | 'same' | 'different';
  answers?: Answers;
  callerEvents?: number;
  /** Start online, offline, or both (the default). */
  online?: readonly boolean[];
}

const ok = (value: unknown): Outcome => ({ ok: true, value });
const thrown = (src: string): Outcome => ({ ok: false, error: new Error(`${src} failed`) });
const failure = (
  cls: 'unavailable' | 'client-error' | 'offline' | 'rate-limited',
  retryAfterMs?: number,
) => ({
  class: cls,
  requestSent: cls === 'offline' ? ('no' as const) : ('yes' as const),
  origin: 'primary',
  message: cls,
  ...(retryAfterMs === undefined ? {} : { retryAfterMs }),
});
const failed = (f: ReturnType<typeof failure>, retryable: boolean, endedOffline?: boolean): SendResult => ({
  result: 'failed',
  failure: f,
  attempts: 1,
  retryable,
  ...(endedOffline ? { endedOffline } : {}),
});

function answers(entries: readonly EntryShape[], level: Answers, call: Call, run: DrivenRun) {
  const now = run.actor.context.now as number;
  const of = (label: string, outcome: () => Outcome) => ({ label: `${call.src}: ${label}`, outcome });
  const few = level !== 'every';
  // `fewest` keeps each list's first answer (its success) and a send's retryable failure.
  const pick = <T>(every: T[], some: T[]) =>
    level === 'every' ? every : level === 'few' ? some : some.slice(0, call.src === 'sendEntry' ? 2 : 1);
  switch (call.src) {
    case 'loadEntries': {
      const empty = of('empty', () => ok({ entries: [] }));
      const all = of('all', () => ok({ entries: entries.map((e) => record(e, now)) }));
      // With few answers, a rescan finds nothing new: an entry brought back by another runner is a story of one.
      if (few && (run.actor.value as { running?: { lease?: string } }).running?.lease === 'rescanning')
        return [empty];
      return pick(
        [
          empty,
          of('empty, complete', () => ok({ entries: [], complete: true })),
          all,
          thrownBy('loadEntries'),
        ],
        [empty, all],
      );
    }
    case 'acquireLease': {
      const held = of('held', () => ok({ held: true }));
      const refused = of('refused', () => ok({ held: false }));
      return pick([held, refused, thrownBy('acquireLease')], [held, refused]);
    }
    case 'releaseLease':
      return pick(
        [of('done', () => ok(undefined)), thrownBy('releaseLease')],
        [of('done', () => ok(undefined))],
      );
    case 'commitEntry': {
      const { id } = call.input as CommitEntryInput;
      const entry = entries.find((e) => e.id === id) ?? { id };
      const committed = of('committed', () => ok({ status: 'committed' }));
      return pick(
        [
          committed,
          of('missing', () => ok({ status: 'missing' })),
          of('stale', () =>
            ok({ status: 'stale', stored: record(entry, now, { attempts: 1, nextAttemptAt: now + 100 }) }),
          ),
          thrownBy('commitEntry'),
        ],
        [committed, thrownBy('commitEntry')],
      );
    }
    case 'sendEntry': {
      const sent = of('sent', () => ok({ result: 'sent' }));
      const unavailable = of('503', () => ok(failed(failure('unavailable'), true)));
      const notFound = of('404', () => ok(failed(failure('client-error'), false)));
      return pick(
        [
          sent,
          unavailable,
          notFound,
          of('429 Retry-After 100', () => ok(failed(failure('rate-limited', 100), true))),
          of('offline', () => ok(failed(failure('offline'), true, true))),
          of('missing', () => ok('missing')),
          of('skipped', () => ok('skipped')),
          thrownBy('sendEntry'),
        ],
        [sent, unavailable, notFound],
      );
    }
    default:
      return [];
  }

  function thrownBy(src: string) {
    return of('throws', () => thrown(src));
  }
}

/** The events the caller sends, besides `outbox.enqueued`: bounded per path by `callerEvents`. */
const callerEventsOf = (run: DrivenRun) => run.sent.filter((e) => e.type !== 'outbox.enqueued').length;

function events(entries: readonly EntryShape[], bounds: OutboxBounds, type: string, run: DrivenRun) {
  if (type !== 'outbox.enqueued' && callerEventsOf(run) >= (bounds.callerEvents ?? Infinity)) return [];
  switch (type) {
    case 'outbox.enqueued':
      // Each entry is written once per path: the same id again is ignored, or would start the same story anew.
      return entries
        .filter((e) => !run.sent.some((s) => s.type === type && (s.entry as { id: string }).id === e.id))
        .map((e) => ({ type, entry: record(e, run.actor.context.now as number) }));
    case 'outbox.retry':
      return entries.map((e) => ({ type, id: e.id }));
    case 'connectivity.changed':
      return [true, false].map((online) => ({ type, online }));
    case 'entry.progressed':
    case 'entry.settled':
      // Only an entry's machine sends these.
      return [];
    default:
      return [{ type }];
  }
}

/** Past this many store failures in a row the hold-off no longer grows: more say nothing new. */
function storeFailuresCap(durable: Policy['durable']): number {
  let n = 1;
  while (n < 64 && durableBackoffMs(durable, n + 1) !== durableBackoffMs(durable, n)) n++;
  return n;
}

/**
 * Times relative to `now` (all the machine compares them with): an entry's age capped past its expiry, a time
 * already passed as 0 (due), a hold-off already over as none. Of a rescheduling write's failure only what the
 * summary takes from it; `storeFailures` capped where the hold-off stops growing. Left out: the policy and the
 * lease time, fixed per input.
 */
function abstractContext(context: Record<string, unknown>): unknown {
  const now = context.now as number;
  const durable = (context.policy as Policy).durable;
  const ahead = (t: number | undefined) => (t === undefined ? undefined : Math.max(0, t - now));
  return {
    online: context.online,
    entries: (context.entries as OutboxEntrySummary[]).map((e) => abstractEntry(e, now, durable)),
    storeFailures: Math.min(context.storeFailures as number, storeFailuresCap(durable)),
    wakeAt: ahead(context.wakeAt as number | undefined),
  };
}

/** An entry's times relative to `now`, as `abstractContext` keeps them. */
function abstractEntry(e: OutboxEntrySummary, now: number, durable: Policy['durable']) {
  return {
    ...e,
    createdAt: Math.min(now - e.createdAt, durable.maxAgeMs + 1),
    nextAttemptAt: Math.max(0, e.nextAttemptAt - now),
    heldUntil: e.heldUntil !== undefined && e.heldUntil > now ? e.heldUntil - now : undefined,
    commit: abstractCommit(e.commit, now),
  };
}

/** Of a write, its times relative to `now`, and of its failure only what the entry takes from it. */
function abstractCommit(commit: OutboxCommit | undefined, now: number) {
  return (
    commit && {
      ...commit,
      ...('nextAttemptAt' in commit ? { nextAttemptAt: Math.max(0, commit.nextAttemptAt - now) } : {}),
      ...('createdAt' in commit ? { createdAt: now - commit.createdAt } : {}),
      ...('failure' in commit && commit.failure
        ? {
            failure: [wakesWhenOnline(commit.failure), commit.failure.retryAfterMs !== undefined],
            delayMs: 0,
          }
        : {}),
    }
  );
}

/**
 * An entry's machine: its entry and write as `abstractContext` keeps them (relative to the outbox's time: every
 * event the outbox forwards brings the entry's machine to it), whether it is online, and whether a write is
 * still to be reported. Left out: its own time (behind the outbox's until the next event) and the policy.
 */
function abstractChild(context: Record<string, unknown>, parent: Record<string, unknown>): unknown {
  const now = parent.now as number;
  const durable = (parent.policy as Policy).durable;
  return {
    online: context.online,
    wrote: context.wrote,
    entry: abstractEntry(context.entry as OutboxEntrySummary, now, durable),
    commit: abstractCommit(context.commit as OutboxCommit | undefined, now),
  };
}

const inFlight = (e: OutboxEntrySummary) =>
  e.status === 'claiming' || e.status === 'sending' || e.status === 'committing';

/**
 * The goal of check (a) for a machine that never ends by itself: closed, or quiescent (the lease given back,
 * no entry in flight, no store call or send waiting).
 */
function quiescent(run: DrivenRun): boolean {
  if (run.actor.status === 'done') return true;
  const value = run.actor.value as { running?: { lease: string } };
  return (
    value.running?.lease === 'released' &&
    run.pending().length === 0 &&
    !(run.actor.context.entries as OutboxEntrySummary[]).some(inFlight)
  );
}

/** The entries of a search: one, two in one queue (`fifo`), or two with the same or different `orderKey`s. */
function entriesOf(bounds: OutboxBounds): EntryShape[] {
  if (bounds.entries === 1) return [{ id: 'e0' }];
  switch (bounds.keys ?? 'fifo') {
    case 'fifo':
      return [{ id: 'e0' }, { id: 'e1' }];
    case 'same':
      return [
        { id: 'e0', orderKey: 'k' },
        { id: 'e1', orderKey: 'k' },
      ];
    case 'different':
      return [
        { id: 'e0', orderKey: 'k0' },
        { id: 'e1', orderKey: 'k1' },
      ];
  }
}

/**
 * Check (e): an entry's send starts only once every entry before it in its group (the whole queue with
 * `fifo`, the same `orderKey` with `per-key`) is done or dead-lettered: entries of one group are sent one at a
 * time, in order.
 */
function keepsOrder(entries: readonly EntryShape[], order: 'fifo' | 'per-key'): Monitor<null> {
  // The groups as the model made the entries, not as the machine's context says: a machine that lost an
  // entry's orderKey must not escape the check.
  const groupOf = (id: string) => (order === 'fifo' ? '' : entries.find((e) => e.id === id)?.orderKey);
  return {
    check: 'e',
    initial: () => null,
    step(_state, { started, after }) {
      const queue = after.context.entries as OutboxEntrySummary[];
      for (const call of started.filter((c) => c.src === 'sendEntry')) {
        const { id } = call.input as SendEntryInput;
        const group = groupOf(id);
        if (group === undefined) continue;
        const before = queue.slice(
          0,
          queue.findIndex((e) => e.id === id),
        );
        const waiting = before.find((e) => groupOf(e.id) === group && e.status !== 'dead');
        if (waiting)
          return {
            next: null,
            violation: `${id} was sent while ${waiting.id}, before it in its group, was ${waiting.status}`,
          };
      }
      return { next: null };
    },
  };
}

export function outboxModel(bounds: OutboxBounds): MachineModel {
  const entries = entriesOf(bounds);
  const keyed = bounds.entries === 2 && (bounds.keys ?? 'fifo') !== 'fifo';
  const level = bounds.answers ?? 'every';
  const inputs = (bounds.online ?? [true, false]).map((online) => {
    const input: OutboxMachineInput = {
      policy: definePolicy({
        durable: {
          initialMs: 100,
          maxMs: 100,
          maxAttempts: 2,
          maxAgeMs: 250,
          ...(keyed ? { order: 'per-key', concurrency: 2 } : { order: 'fifo', concurrency: 1 }),
        },
      }),
      now: 0,
      online,
      leaseTtlMs: 300,
    };
    return { label: online ? 'online' : 'offline', input: () => input };
  });
  const name =
    bounds.entries === 1
      ? 'outbox (1 entry)'
      : `outbox (2 entries, ${keyed ? `${bounds.keys} key${bounds.keys === 'same' ? '' : 's'}` : 'fifo'})`;
  return {
    name,
    run: {
      table: outboxTable,
      logic: outboxLogic as unknown as MachineLogic<unknown, unknown>,
      invoked: ['loadEntries', 'acquireLease', 'releaseLease'],
      machines: { outboxEntry: childMachine(outboxEntryTable, outboxEntryLogic) },
      spawned: {
        commitEntry: (input: CommitEntryInput, outcome) =>
          commitEntryReply(input, outcome as Settled<CommitOutcome>),
        sendEntry: (input: SendEntryInput, outcome) =>
          sendEntryReply(input, outcome as Settled<SendResult | 'missing' | 'skipped'>),
      },
    },
    inputs,
    events: (type, run) => events(entries, bounds, type, run),
    answers: (call, run) => answers(entries, level, call, run),
    abstractContext,
    abstractChild,
    enterEveryState: level === 'every',
    abstractCall: (call) => [call.src, (call.input as { id?: string } | undefined)?.id],
    pathKey: (run) => [
      run.sent.filter((e) => e.type === 'outbox.enqueued').map((e) => (e.entry as { id: string }).id),
      bounds.callerEvents === undefined ? undefined : callerEventsOf(run),
    ],
    monitor: keepsOrder(entries, keyed ? 'per-key' : 'fifo'),
    // On its own: by timers and answers, with no event from the caller (a close ends anything).
    goal: {
      name: 'closed or quiescent on its own',
      holds: quiescent,
      via: (stimulus) => stimulus.kind !== 'event',
    },
  };
}
