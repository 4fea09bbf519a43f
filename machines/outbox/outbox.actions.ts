import {
  deadBeforeSend,
  durableBackoffMs,
  durableExpiresAt,
  MAX_TIMER_MS,
  wakesWhenOnline,
} from '../../src/policy/durable-backoff.js';
import type {
  CommitEntryInput,
  LoadEntriesOutput,
  OutboxCommit,
  OutboxEntryRecord,
  OutboxEntrySummary,
  OutboxMachineContext,
  OutboxMachineEmitted,
  OutboxMachineEvent,
  OutboxMachineInput,
  SendEntryInput,
} from './outbox.types.js';
import type { OutboxEntryMachineInput } from '../outbox-entry/outbox-entry.types.js';
import { attemptsMade, earliestAfter, isInFlight, queueFacts } from './queue-facts.js';

/**
 * The outbox machine's decisions, as pure functions of its context. Each returns an `OutboxStep`: the context
 * changes, the children to start or stop, and the events to emit; the machine registers each as a named action
 * that performs the step, so the inspector shows `recordSendEnded`, not `xstate.assign`.
 */
type Changes = Partial<OutboxMachineContext>;
type Args = { context: OutboxMachineContext };
type EventOf<T extends OutboxMachineEvent['type']> = Extract<OutboxMachineEvent, { type: T }>;

/** One child to start: an entry's lifecycle (a child machine), or a store write or a send for one entry. */
export type OutboxChild =
  | { src: 'outboxEntry'; id: string; input: OutboxEntryMachineInput }
  | { src: 'commitEntry'; id: string; input: CommitEntryInput }
  | { src: 'sendEntry'; id: string; input: SendEntryInput };

export interface OutboxStep {
  changes: Changes;
  start?: OutboxChild[];
  /** Ids of children whose work is over (or must be). */
  stop?: string[];
  /** Events for entries' machines, by child id. */
  send?: { to: string; event: { type: string; at?: number | undefined } }[];
  emit?: OutboxMachineEmitted[];
}

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
 * The next time something falls due: the earliest future `nextAttemptAt` of a pending entry (while online) or
 * expiry (online or not), neither before the end of a store hold-off. `Infinity` when nothing waits for a time.
 */
export function nextWakeAt(context: OutboxMachineContext): number {
  const limits = context.policy.durable;
  return earliestAfter(context.entries, { online: context.online, limits, now: context.now }, () => {
    let next = Infinity;
    const consider = (at: number) => {
      if (at > context.now && at < next) next = at;
    };
    for (const entry of context.entries) {
      if (entry.status !== 'pending') continue;
      const held = entry.heldUntil ?? -Infinity;
      // A decision to write again waits for its hold-off only: a store write needs no network.
      if (entry.decided !== undefined) {
        consider(held);
        continue;
      }
      consider(Math.max(held, durableExpiresAt(limits, entry.createdAt)));
      if (context.online) consider(Math.max(held, entry.nextAttemptAt));
    }
    return next;
  });
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

/** What the scheduler starts now for one entry: a store write, or (for an attempt already counted) the send. */
export type PlannedWork = { id: string; commit: OutboxCommit } | { id: string; send: SendEntryInput };

/**
 * What to start now, in queue order:
 * - a decision whose write failed (`decided`: a removal, a reschedule, a dead-lettering) is written again, whatever
 *   its place and connectivity (no request is sent);
 * - a pending entry that is expired or has used its attempts is dead-lettered, whatever its place and
 *   connectivity (no request is sent);
 * - an entry held off after a failed store write starts nothing until its hold-off ends;
 * - a pending entry is claimed for sending (its attempt counted in the store) when online, due, and not
 *   blocked, while fewer than `concurrency` entries are claiming or sending. Blocked means an earlier entry of
 *   its group is not done or dead: with `order: 'fifo'` every entry is in one group, so the head of the queue
 *   blocks the rest, even while it waits for its backoff (as WorkManager's chained work and Workbox's queue
 *   replay do); with `per-key`, entries with the same `orderKey` form a group and an entry without one waits for
 *   nobody. An entry whose attempt is counted already is sent without another claim.
 */
export function planDispatch(context: OutboxMachineContext): PlannedWork[] {
  const { durable } = context.policy;
  const facts = queueFacts(context.entries, durable);
  let slots = durable.concurrency - facts.sending;
  // Nothing to write without a send (a dead-lettering, a decision) and no slot to fill: the rest of the queue
  // cannot start anything, so it is not walked (a long queue behind a full set of sends costs nothing per step).
  // (The age test is deadBeforeSend's, for the oldest entry: if any pending entry has expired, that one has.)
  const mayWriteUnsent =
    facts.exhausted || facts.decided > 0 || context.now - facts.oldestCreatedAt >= durable.maxAgeMs;
  const canClaim = () => context.online && slots > 0;
  const plans: PlannedWork[] = [];
  if (!mayWriteUnsent && !canClaim()) return plans;
  const blockedGroups = new Set<string>();
  for (const entry of context.entries) {
    if (!mayWriteUnsent && !canClaim()) break;
    if (entry.status === 'dead') continue;
    const group = durable.order === 'fifo' ? '' : entry.orderKey;
    const blocked = group !== undefined && blockedGroups.has(group);
    if (group !== undefined) blockedGroups.add(group);
    // After a failed write, the entry waits out its hold-off: no write of any kind (it still blocks its group).
    if (entry.status !== 'pending' || (entry.heldUntil ?? -Infinity) > context.now) continue;
    // A decision whose write failed is written again, whatever the slots and connectivity: its send is over.
    if (entry.decided !== undefined) {
      plans.push({ id: entry.id, commit: entry.decided });
      continue;
    }
    const reason = deadBeforeSend(
      durable,
      { attempts: attemptsMade(entry), createdAt: entry.createdAt },
      context.now,
    );
    if (reason) {
      plans.push({ id: entry.id, commit: { op: 'dead-letter', attempts: entry.attempts, reason } });
    } else if (!blocked && context.online && slots > 0 && entry.nextAttemptAt <= context.now) {
      plans.push(
        entry.counted
          ? { id: entry.id, send: { id: entry.id, attempt: entry.attempts } }
          : { id: entry.id, commit: { op: 'claim', attempts: entry.attempts + 1 } },
      );
      slots -= 1;
    }
  }
  return plans;
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

/** Whether any entry has a write or a send in flight. */
export const hasWorkInFlight = (context: OutboxMachineContext) =>
  queueFacts(context.entries, context.policy.durable).inFlight > 0;

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

/** Whether a decision whose write failed waits to be written again (`decided`). */
export const hasDecisionToWrite = (context: OutboxMachineContext) =>
  queueFacts(context.entries, context.policy.durable).decided > 0;
