import type {
  ActionStep,
  AssignImpl,
  EmitImpl,
  MachineLogic,
  StepImpl,
} from '../../src/engine/machine-logic.js';
import { durableBackoffMs, MAX_TIMER_MS, wakesWhenOnline } from '../../src/policy/durable-backoff.js';
import type { OutboxEntryMachineInput } from '../outbox-entry/outbox-entry.types.js';
import {
  hasDecisionToWrite,
  hasWorkInFlight,
  isInFlight,
  nextWakeAt,
  planDispatch,
  queueFacts,
} from './outbox.queue.js';
import type {
  AcquireLeaseInput,
  AcquireLeaseOutput,
  LoadEntriesOutput,
  OutboxChild,
  OutboxCommit,
  OutboxEntryRecord,
  OutboxEntrySummary,
  OutboxMachineContext,
  OutboxMachineEmitted,
  OutboxMachineEvent,
  OutboxMachineInput,
  OutboxStep,
} from './outbox.types.js';

/**
 * Everything the outbox machine does, by name: its guards, delays, actions, invocation inputs and action
 * parameters, gathered in `outboxLogic` at the end of this file. Each is a plain function of the context (and
 * the event or params), so it is tested without an actor; outbox.machine.ts hands `outboxLogic` to `setup()`,
 * and the lean executor calls the same functions through the derived table. An action returns an `OutboxStep`
 * (the context changes, the children to start or stop, the events to send to entries' machines and to emit), or
 * only context changes; the machine registers each under its name, so the inspector shows `recordSettled`, not
 * `xstate.assign`. What the scheduler reads of its queue (what can start now, when it next wakes) is in
 * outbox.queue.ts.
 */
type Context = OutboxMachineContext;
type Changes = Partial<Context>;
type Args = { context: Context };
type EventOf<T extends OutboxMachineEvent['type']> = Extract<OutboxMachineEvent, { type: T }>;

/** The lease lasts this long unless the input says otherwise; see `OutboxMachineInput.leaseTtlMs`. */
export const DEFAULT_LEASE_TTL_MS = 30_000;

/**
 * Child ids: an entry in flight has its machine (`outboxEntry`), and at most one write or one send, never both
 * at once.
 */
export const entryChildId = (id: string) => `entry:${id}`;
export const commitChildId = (id: string) => `commit:${id}`;
export const sendChildId = (id: string) => `send:${id}`;

export function initialContext(input: OutboxMachineInput): OutboxMachineContext {
  return {
    policy: input.policy,
    leaseTtlMs: input.leaseTtlMs ?? DEFAULT_LEASE_TTL_MS,
    now: input.now,
    online: input.online,
    entries: [],
    storeFailures: 0,
  };
}

/** What the machine keeps of a stored entry: its counters, never its request. */
export function summarize(record: OutboxEntryRecord): OutboxEntrySummary {
  const last = record.failures?.[record.failures.length - 1];
  return {
    id: record.id,
    orderKey: record.orderKey,
    createdAt: record.createdAt,
    attempts: record.attempts,
    nextAttemptAt: record.nextAttemptAt,
    status: record.status === 'dead' ? 'dead' : 'pending',
    wakesWhenOnline: record.status !== 'dead' && last !== undefined && wakesWhenOnline(last),
    heldByServer: record.status !== 'dead' && last?.retryAfterMs !== undefined,
    deadReason: record.deadReason,
  };
}

/** The later of what the machine knew and the event's stamp: time never goes back. */
const later = (context: OutboxMachineContext, at: number | undefined) =>
  at !== undefined && at > context.now ? at : context.now;

/** Counts for `outbox-changed`. */
function changed(entries: readonly OutboxEntrySummary[], at: number): OutboxMachineEmitted {
  const dead = entries.filter((e) => e.status === 'dead').length;
  return { type: 'outbox-changed', size: entries.length, pending: entries.length - dead, dead, at };
}

const replace = (
  entries: readonly OutboxEntrySummary[],
  id: string,
  update: (entry: OutboxEntrySummary) => OutboxEntrySummary,
) => entries.map((e) => (e.id === id ? update(e) : e));

/** Stamps the machine's time from an event (lease answers, connectivity, anything with `at`). */
export function recordTime({ context }: Args, { at }: { at?: number | undefined }): Changes {
  return { now: later(context, at) };
}

/** A new entry the runtime has already written to the store; an id already known is ignored. */
export function recordEnqueued({ context }: Args, event: EventOf<'outbox.enqueued'>): OutboxStep {
  const now = later(context, event.at);
  if (context.entries.some((e) => e.id === event.entry.id)) return { changes: { now } };
  const entries = [...context.entries, summarize(event.entry)];
  return { changes: { now, entries }, emit: [changed(entries, now)] };
}

/** A store's records, each id once (the first): an entry has one lifecycle, and one machine while in flight. */
const uniqueRecords = (records: readonly OutboxEntryRecord[]) =>
  records.filter((record, i) => records.findIndex((r) => r.id === record.id) === i);

/** The store's entries, in its order, then those enqueued while they were being read. */
export function recordLoaded({ context }: Args, output: LoadEntriesOutput): OutboxStep {
  const now = later(context, output.at);
  const loaded = uniqueRecords(output.entries).map(summarize);
  const ids = new Set(loaded.map((e) => e.id));
  const entries = [...loaded, ...context.entries.filter((e) => !ids.has(e.id))];
  return { changes: { now, entries }, emit: [changed(entries, now)] };
}

/**
 * The store read again on taking the lease: entries other tabs or processes wrote (and may have left behind when
 * they closed) join the queue, in the store's order. Entries this runner knows keep its own record (it may be
 * sending them). When the read is `complete`, one the store no longer has (the app removed it, or another runner
 * finished it) is forgotten, unless its write or send is in flight (that finds out, `entry.missing`) or it was
 * written during the read (`output.keep`).
 */
export function recordRescanned({ context }: Args, output: LoadEntriesOutput): OutboxStep {
  const now = later(context, output.at);
  const records = uniqueRecords(output.entries);
  const known = new Map(context.entries.map((e) => [e.id, e]));
  const stored = new Set(records.map((record) => record.id));
  const keep = new Set(output.keep ?? []);
  const added = records.filter((record) => !known.has(record.id));
  const left = context.entries.filter(
    (e) => !stored.has(e.id) && (output.complete !== true || isInFlight(e) || keep.has(e.id)),
  );
  const gone = context.entries.length - (records.length - added.length) - left.length;
  if (added.length === 0 && gone === 0) return { changes: { now }, emit: [] };
  const entries = [...records.map((record) => known.get(record.id) ?? summarize(record)), ...left];
  return { changes: { now, entries }, emit: [changed(entries, now)] };
}

/**
 * Connectivity changed. Going online makes due at once every pending entry whose last send failed on the
 * device's network path (rule 6); entries that came due while offline are due already. An entry whose
 * attempt is being counted hears it too: once counted, it is sent only while online.
 */
export function recordConnectivity({ context }: Args, event: EventOf<'connectivity.changed'>): OutboxStep {
  const now = later(context, event.at);
  const send = context.entries
    .filter((e) => e.status === 'claiming')
    .map((e) => ({ to: entryChildId(e.id), event: { ...event, at: now } }));
  if (!event.online || context.online) return { changes: { now, online: event.online }, send };
  return {
    changes: {
      now,
      online: true,
      entries: context.entries.map((e) =>
        e.status === 'pending' && e.wakesWhenOnline
          ? { ...e, nextAttemptAt: Math.min(e.nextAttemptAt, now), wakesWhenOnline: false }
          : e,
      ),
    },
    send,
  };
}

/**
 * `outbox.flush`: every pending entry is due now (in memory; the store keeps its times), except one whose server
 * asked it to wait (Retry-After, rule 5).
 */
export function recordFlush({ context }: Args, event: EventOf<'outbox.flush'>): Changes {
  const now = later(context, event.at);
  return {
    now,
    entries: context.entries.map((e) =>
      e.status === 'pending' && !e.heldByServer ? { ...e, nextAttemptAt: Math.min(e.nextAttemptAt, now) } : e,
    ),
  };
}

/**
 * `outbox.pause` / `outbox.resume`: whether sends may start (`OutboxMachineContext.paused`). Sends in flight go
 * on either way.
 */
export function recordPause(
  { context }: Args,
  event: EventOf<'outbox.pause'> | EventOf<'outbox.resume'>,
): Changes {
  return { now: later(context, event.at), paused: event.type === 'outbox.pause' };
}

/**
 * The `timer` region is armed again: remembers the time it wakes at (at most the longest wait a host timer
 * allows; the machine then wakes early and arms again).
 */
export function setWakeTime({ context }: Args): Changes {
  return { wakeAt: Math.min(nextWakeAt(context), context.now + MAX_TIMER_MS) };
}

/** The `nextDue` timer fired: the time is the one it was armed for. */
export function recordWake({ context }: Args): Changes {
  const wakeAt = context.wakeAt ?? context.now;
  return { now: Math.max(context.now, wakeAt), wakeAt: undefined };
}

/** What an entry's machine (`outboxEntry`) starts with, for the work the scheduler chose for it. */
const lifecycleOf = (
  context: OutboxMachineContext,
  entry: OutboxEntrySummary,
  work: OutboxEntryMachineInput['work'],
): OutboxChild => ({
  src: 'outboxEntry',
  id: entryChildId(entry.id),
  input: { policy: context.policy, now: context.now, online: context.online, entry, work },
});

/**
 * Starts what `planDispatch` chose: an entry's machine (`outboxEntry`) for each, which lives while the entry is
 * in flight. The queue's copy of the entry is `claiming` or `committing` until its write ends, or `sending`
 * when its attempt was counted already; the entry's machine reports each step (`entry.progressed`).
 */
export function dispatchDue({ context }: Args): OutboxStep {
  const plans = new Map(planDispatch(context).map((p) => [p.id, p]));
  const start: OutboxChild[] = [];
  const entries = context.entries.map((e): OutboxEntrySummary => {
    const plan = plans.get(e.id);
    if (!plan) return e;
    const work = 'send' in plan ? { send: plan.send } : { commit: plan.commit };
    start.push(lifecycleOf(context, e, work));
    if ('send' in plan) return { ...e, status: 'sending', counted: false };
    return {
      ...e,
      status: plan.commit.op === 'claim' ? 'claiming' : 'committing',
      commit: plan.commit,
      decided: undefined,
    };
  });
  return { changes: { entries }, start };
}

/**
 * How long an entry is held off in memory after a failed store write: the durable backoff for the number of
 * writes that failed in a row, so that a failing store is backed off like a failing server.
 */
export const storeRetryMs = (context: OutboxMachineContext) =>
  durableBackoffMs(context.policy.durable, context.storeFailures);

type IoAnswer = EventOf<'send.ended' | 'send.skipped' | 'commit.succeeded' | 'commit.failed'>;

/**
 * A store write or a send the outbox ran for an entry answered: the answer goes to the entry's machine, which
 * decides what it makes of the entry, stamped with the outbox's time (the latest it knows of, as for every event
 * it forwards). An answer for an entry that is not in flight is ignored.
 */
export function relayToEntry({ context }: Args, event: IoAnswer): OutboxStep {
  const now = later(context, event.at);
  const stop = [event.type.startsWith('send.') ? sendChildId(event.id) : commitChildId(event.id)];
  const entry = context.entries.find((e) => e.id === event.id);
  if (!entry || !isInFlight(entry)) return { changes: { now }, stop };
  return { changes: { now }, stop, send: [{ to: entryChildId(entry.id), event: { ...event, at: now } }] };
}

/**
 * An entry's machine entered `claiming`, `sending` or `committing`: the queue takes its copy of the entry, and
 * the outbox starts the store write (`commitEntry`) or the send (`sendEntry`) that state waits for.
 */
export function recordProgress({ context }: Args, event: EventOf<'entry.progressed'>): OutboxStep {
  const now = later(context, event.at);
  const entry = context.entries.find((e) => e.id === event.id);
  if (!entry || !isInFlight(entry)) return { changes: { now } };
  const next = event.entry;
  const child: OutboxChild =
    next.status === 'sending'
      ? { src: 'sendEntry', id: sendChildId(next.id), input: { id: next.id, attempt: next.attempts } }
      : { src: 'commitEntry', id: commitChildId(next.id), input: { id: next.id, commit: next.commit! } };
  return {
    changes: {
      now,
      // A write went through: the store works again.
      storeFailures: event.wrote ? 0 : context.storeFailures,
      entries: replace(context.entries, next.id, () => next),
    },
    start: [child],
  };
}

/**
 * An entry's lifecycle ended (its machine is stopped): the decision is in the store, so it takes effect and is
 * announced; or the entry goes back to the queue as the store has it; or, after a failed write, it is held off
 * for `storeRetryMs` (in memory only), so that a failing store is not hammered; or it is forgotten.
 */
export function recordSettled({ context }: Args, event: EventOf<'entry.settled'>): OutboxStep {
  const now = later(context, event.at);
  const stop = [entryChildId(event.id), commitChildId(event.id), sendChildId(event.id)];
  const entry = context.entries.find((e) => e.id === event.id);
  if (!entry || !isInFlight(entry)) return { changes: { now }, stop };
  const storeFailures = event.wrote ? 0 : context.storeFailures;
  const commit = event.commit;
  const back = replace(context.entries, entry.id, () => event.entry);
  const gone = context.entries.filter((e) => e.id !== entry.id);
  switch (event.outcome) {
    case 'sent':
      return {
        changes: { now, storeFailures, entries: gone },
        stop,
        emit: [
          {
            type: 'entry-sent',
            id: entry.id,
            attempts: (commit as Extract<OutboxCommit, { op: 'remove' }>).attempts,
            at: now,
          },
          changed(gone, now),
        ],
      };
    case 'rescheduled': {
      const c = commit as Extract<OutboxCommit, { op: 'reschedule' }>;
      return {
        changes: { now, storeFailures, entries: back },
        stop,
        emit: [
          {
            type: 'entry-retry-scheduled',
            id: entry.id,
            attempts: c.attempts,
            delayMs: c.delayMs,
            failureClass: c.failure.class,
            at: now,
          },
        ],
      };
    }
    case 'deadLettered': {
      const c = commit as Extract<OutboxCommit, { op: 'dead-letter' }>;
      return {
        changes: { now, storeFailures, entries: back },
        stop,
        emit: [
          {
            type: 'entry-dead-lettered',
            id: entry.id,
            attempts: c.attempts,
            reason: c.reason,
            ...(c.failure ? { failureClass: c.failure.class } : {}),
            at: now,
          },
          changed(back, now),
        ],
      };
    }
    case 'revived':
      return {
        changes: { now, storeFailures, entries: back },
        stop,
        emit: [{ type: 'entry-revived', id: entry.id, at: now }, changed(back, now)],
      };
    case 'released':
      return { changes: { now, storeFailures, entries: back }, stop };
    case 'writeFailed': {
      const failures = context.storeFailures + 1;
      const holdOffMs = storeRetryMs({ ...context, storeFailures: failures });
      const held =
        event.entry.status === 'dead' ? event.entry : { ...event.entry, heldUntil: now + holdOffMs };
      return {
        changes: {
          now,
          storeFailures: failures,
          entries: replace(context.entries, entry.id, () => held),
        },
        stop,
        emit: [{ type: 'outbox-store-failed', id: entry.id, op: commit!.op, at: now }],
      };
    }
    case 'missing':
      return { changes: { now, storeFailures, entries: gone }, stop, emit: [changed(gone, now)] };
  }
}

/** `outbox.retry`: a dead entry goes back to the queue once the store says so. Anything else is ignored. */
export function requestRevive({ context }: Args, event: EventOf<'outbox.retry'>): OutboxStep {
  const now = later(context, event.at);
  const entry = context.entries.find((e) => e.id === event.id);
  if (entry?.status !== 'dead') return { changes: { now } };
  const commit: OutboxCommit = { op: 'revive', createdAt: now, nextAttemptAt: now };
  return {
    changes: {
      now,
      entries: replace(context.entries, entry.id, (e) => ({ ...e, status: 'committing', commit })),
    },
    start: [lifecycleOf({ ...context, now }, entry, { commit })],
  };
}

/**
 * The store no longer has the entry (the app removed it, or a write or send found it gone): an entry in flight
 * hears it in its machine (which settles `missing`); any other is forgotten at once. Its write or send stops.
 */
export function recordMissing({ context }: Args, event: EventOf<'entry.missing'>): OutboxStep {
  const now = later(context, event.at);
  const stop = [commitChildId(event.id), sendChildId(event.id)];
  const entry = context.entries.find((e) => e.id === event.id);
  if (!entry) return { changes: { now }, stop };
  if (isInFlight(entry))
    return { changes: { now }, stop, send: [{ to: entryChildId(entry.id), event: { ...event, at: now } }] };
  const entries = context.entries.filter((e) => e.id !== event.id);
  return { changes: { now, entries }, stop, emit: [changed(entries, now)] };
}

/**
 * The lease (or, with per-entry claims, the claims' renewal) was lost: decisions kept after failed writes are
 * forgotten, and their entries go back to the queue as the store has them (claimed, their attempt counted). Another
 * runner may take them from now on; a late decision written after that could undo what it wrote. Such an entry is
 * sent again under its key, as after a crash.
 */
export function forgetDecisions({ context }: Args): Changes {
  if (queueFacts(context.entries, context.policy.durable).decided === 0) return {};
  return {
    entries: context.entries.map((e) => (e.decided === undefined ? e : { ...e, decided: undefined })),
  };
}

/** A store call of the machine's own (reading the entries, the lease) failed. */
export function announceStoreFailure(
  { context }: Args,
  { op }: { op: 'load' | 'lease' },
): OutboxMachineEmitted {
  return { type: 'outbox-store-failed', op, at: context.now };
}

const change = <P>(run: (args: Args, params: P) => Partial<Context>): AssignImpl<Context> => ({
  kind: 'assign',
  run: run,
});
const step = <P>(run: (args: Args, params: P) => ActionStep<Context>): StepImpl<Context> => ({
  kind: 'step',
  run: run,
});
const announce = <P>(run: (args: Args, params: P) => { type: string }): EmitImpl<Context> => ({
  kind: 'emit',
  run: run,
});

type GuardArgs = { context: Context };
type DelayArgs = { context: Context };
/** What an invocation input or an action parameter is computed from. */
type EventArgs = { context: Context; event: unknown };

/**
 * The parameters actions take from the event being handled, by name (`outboxLogic.params`). Each returns
 * `never`, so that the machine's config takes it as any action's params.
 */
const outboxParams = {
  /** The event being handled, whole. */
  event: ({ event }: EventArgs) => event as never,
  /** The output of the invoked actor whose done event is being handled. */
  actorOutput: ({ event }: EventArgs) => (event as { output: never }).output,
};

/** The one object `setup()` takes (outbox.machine.ts) and the lean executor runs: every name the machine uses. */
export const outboxLogic = {
  context: ({ input }: { input: OutboxMachineInput }) => initialContext(input),
  /** The machine's questions, read by name in the inspector and the generated diagram. */
  guards: {
    /** Something can start now: a send (online, due, not blocked, a free slot) or a dead-lettering. */
    hasDueWork: ({ context }: GuardArgs) => planDispatch(context).length > 0,
    /**
     * Nothing is in flight, no decision waits to be written again, and nothing can start: the lease can be given
     * back. (A decision kept after a failed write holds the lease, and with it the entry, until it is written:
     * another runner taking the entry meanwhile would send it again, and the late decision would then undo its
     * write.)
     */
    isSettled: ({ context }: GuardArgs) =>
      !hasWorkInFlight(context) && !hasDecisionToWrite(context) && planDispatch(context).length === 0,
    /** Some pending entry waits for a time (its next attempt, or its expiry). */
    hasWakeTime: ({ context }: GuardArgs) => Number.isFinite(nextWakeAt(context)),
    /** `acquireLease` says this runner holds the lease. */
    isLeaseGranted: ({ event }: { event: unknown }) => (event as { output: AcquireLeaseOutput }).output.held,
  },
  /** The machine's waits, each computed from context (never a literal in the config). */
  delays: {
    /**
     * Until the earliest pending entry is due or expires (`wakeAt`, set as the timer is armed); at most the
     * longest wait a host timer allows (the machine then wakes early and waits again).
     */
    nextDue: ({ context }: DelayArgs) =>
      Math.min(MAX_TIMER_MS, Math.max(0, (context.wakeAt ?? nextWakeAt(context)) - context.now)),
    /** The lease is renewed every third of its time to live while it is held (while sending). */
    leaseRenewal: ({ context }: DelayArgs) => Math.floor(context.leaseTtlMs / 3),
    /** Another runner holds the lease (or the store did not answer): ask again after half its time to live. */
    leaseRetry: ({ context }: DelayArgs) => Math.floor(context.leaseTtlMs / 2),
    /** Reading the store failed: read it again after the policy's first durable wait. */
    loadRetry: ({ context }: DelayArgs) => context.policy.durable.initialMs,
  },
  actions: {
    recordEnqueued: step(recordEnqueued),
    recordLoaded: step(recordLoaded),
    recordRescanned: step(recordRescanned),
    dispatchDue: step(dispatchDue),
    relayToEntry: step(relayToEntry),
    recordProgress: step(recordProgress),
    recordSettled: step(recordSettled),
    requestRevive: step(requestRevive),
    recordMissing: step(recordMissing),
    recordTime: change(recordTime),
    recordConnectivity: step(recordConnectivity),
    recordFlush: change(recordFlush),
    recordPause: change(recordPause),
    setWakeTime: change(setWakeTime),
    recordWake: change(recordWake),
    forgetDecisions: change(forgetDecisions),
    /** The queue changed: the `timer` region sets `nextDue` again. */
    rearm: { kind: 'raise', event: { type: 'outbox.rearm' } },
    announceStoreFailure: announce(announceStoreFailure),
  },
  /** What each invoked actor is given, by name. */
  inputs: {
    lease: ({ context }: EventArgs): AcquireLeaseInput => ({ ttlMs: context.leaseTtlMs }),
  },
  params: outboxParams,
  outputs: {},
} satisfies MachineLogic<OutboxMachineContext, OutboxMachineInput>;
