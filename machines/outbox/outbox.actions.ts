import {
  deadBeforeSend,
  durableBackoffMs,
  durableExpiresAt,
  durableVerdict,
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

/**
 * The outbox machine's decisions, as pure functions of its context. Each returns an `OutboxStep`: the context
 * changes, the children to start or stop, and the events to emit; the machine registers each as a named action
 * that performs the step, so the inspector shows `recordSendEnded`, not `xstate.assign`.
 */
type Changes = Partial<OutboxMachineContext>;
type Args = { context: OutboxMachineContext };
type EventOf<T extends OutboxMachineEvent['type']> = Extract<OutboxMachineEvent, { type: T }>;

/** One child to start: a store write or a send, for one entry. */
export type OutboxChild =
  | { src: 'commitEntry'; id: string; input: CommitEntryInput }
  | { src: 'sendEntry'; id: string; input: SendEntryInput };

export interface OutboxStep {
  changes: Changes;
  start?: OutboxChild[];
  /** Ids of children whose work is over (or must be). */
  stop?: string[];
  emit?: OutboxMachineEmitted[];
}

/** The lease lasts this long unless the input says otherwise; see `OutboxMachineInput.leaseTtlMs`. */
export const DEFAULT_LEASE_TTL_MS = 30_000;

/** Child ids: an entry has at most one write and one send, never both at once. */
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
  const last = record.failures?.at(-1);
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

const isInFlight = (entry: OutboxEntrySummary) =>
  entry.status === 'claiming' || entry.status === 'sending' || entry.status === 'committing';

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

/** The store's entries, in its order, then those enqueued while they were being read. */
export function recordLoaded({ context }: Args, output: LoadEntriesOutput): OutboxStep {
  const now = later(context, output.at);
  const loaded = output.entries.map(summarize);
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
  const known = new Map(context.entries.map((e) => [e.id, e]));
  const stored = new Set(output.entries.map((record) => record.id));
  const keep = new Set(output.keep ?? []);
  const added = output.entries.filter((record) => !known.has(record.id));
  const left = context.entries.filter(
    (e) => !stored.has(e.id) && (output.complete !== true || isInFlight(e) || keep.has(e.id)),
  );
  const gone = context.entries.length - (output.entries.length - added.length) - left.length;
  if (added.length === 0 && gone === 0) return { changes: { now }, emit: [] };
  const entries = [...output.entries.map((record) => known.get(record.id) ?? summarize(record)), ...left];
  return { changes: { now, entries }, emit: [changed(entries, now)] };
}

/**
 * Connectivity changed. Going online makes due at once every pending entry whose last send failed on the
 * device's network path (CONTRACT rule 6); entries that came due while offline are due already.
 */
export function recordConnectivity({ context }: Args, event: EventOf<'connectivity.changed'>): Changes {
  const now = later(context, event.at);
  if (!event.online || context.online) return { now, online: event.online };
  return {
    now,
    online: true,
    entries: context.entries.map((e) =>
      e.status === 'pending' && e.wakesWhenOnline
        ? { ...e, nextAttemptAt: Math.min(e.nextAttemptAt, now), wakesWhenOnline: false }
        : e,
    ),
  };
}

/**
 * `outbox.flush`: every pending entry is due now (in memory; the store keeps its times), except one whose server
 * asked it to wait (Retry-After, CONTRACT rule 5).
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
  let next = Infinity;
  const consider = (at: number) => {
    if (at > context.now && at < next) next = at;
  };
  for (const entry of context.entries) {
    if (entry.status !== 'pending') continue;
    const held = entry.heldUntil ?? -Infinity;
    consider(Math.max(held, durableExpiresAt(context.policy.durable, entry.createdAt)));
    if (context.online) consider(Math.max(held, entry.nextAttemptAt));
  }
  return next;
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
  let slots =
    durable.concurrency -
    context.entries.filter((e) => e.status === 'claiming' || e.status === 'sending').length;
  const blockedGroups = new Set<string>();
  const plans: PlannedWork[] = [];
  for (const entry of context.entries) {
    if (entry.status === 'dead') continue;
    const group = durable.order === 'fifo' ? '' : entry.orderKey;
    const blocked = group !== undefined && blockedGroups.has(group);
    if (group !== undefined) blockedGroups.add(group);
    // After a failed write, the entry waits out its hold-off: no write of any kind (it still blocks its group).
    if (entry.status !== 'pending' || (entry.heldUntil ?? -Infinity) > context.now) continue;
    // An attempt counted but not made is not one of those used.
    const made = entry.counted ? entry.attempts - 1 : entry.attempts;
    const reason = deadBeforeSend(durable, { attempts: made, createdAt: entry.createdAt }, context.now);
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

/**
 * Starts what `planDispatch` chose: each entry is `claiming` or `committing` until its write ends, or
 * `sending` when its attempt was counted already.
 */
export function dispatchDue({ context }: Args): OutboxStep {
  const plans = new Map(planDispatch(context).map((p) => [p.id, p]));
  return {
    changes: {
      entries: context.entries.map((e): OutboxEntrySummary => {
        const plan = plans.get(e.id);
        if (!plan) return e;
        if ('send' in plan) return { ...e, status: 'sending', counted: false };
        return { ...e, status: plan.commit.op === 'claim' ? 'claiming' : 'committing', commit: plan.commit };
      }),
    },
    start: [...plans.values()].map((p): OutboxChild =>
      'send' in p
        ? { src: 'sendEntry', id: sendChildId(p.id), input: p.send }
        : { src: 'commitEntry', id: commitChildId(p.id), input: p },
    ),
  };
}

/**
 * How long an entry is held off in memory after a failed store write: the durable backoff for the number of
 * writes that failed in a row, so that a failing store is backed off like a failing server.
 */
export const storeRetryMs = (context: OutboxMachineContext) =>
  durableBackoffMs(context.policy.durable, context.storeFailures);

/**
 * A send ended: decides done, retry at a time, or dead (src/policy/durable-backoff.ts), and starts writing the
 * decision. The entry stays `committing` (and keeps its place) until the write ends.
 */
export function recordSendEnded({ context }: Args, event: EventOf<'send.ended'>): OutboxStep {
  const now = later(context, event.at);
  const stop = [sendChildId(event.id)];
  const entry = context.entries.find((e) => e.id === event.id);
  if (entry?.status !== 'sending') return { changes: { now }, stop };
  const { result } = event;
  let commit: OutboxCommit;
  if (result.result === 'sent') {
    commit = { op: 'remove', attempts: entry.attempts };
  } else {
    // The claim counted this send's first attempt; attempts it made beyond that count too (rule 1).
    const attempts = entry.attempts + Math.max(1, Math.floor(result.attempts) || 1) - 1;
    const retryAfterMs = result.retryAfterMs ?? result.failure.retryAfterMs;
    const verdict = durableVerdict(context.policy.durable, { attempts, createdAt: entry.createdAt }, now, {
      retryable: result.retryable,
      retryAfterMs,
    });
    commit =
      verdict.verdict === 'retry'
        ? {
            op: 'reschedule',
            attempts,
            nextAttemptAt: verdict.nextAttemptAt,
            delayMs: verdict.delayMs,
            failure: result.failure,
            failures: result.failures,
            wakesWhenOnline: result.endedOffline,
          }
        : {
            op: 'dead-letter',
            attempts,
            reason: verdict.reason,
            failure: result.failure,
            failures: result.failures,
          };
  }
  return {
    changes: {
      now,
      entries: replace(context.entries, entry.id, (e) => ({ ...e, status: 'committing', commit })),
    },
    stop,
    start: [{ src: 'commitEntry', id: commitChildId(entry.id), input: { id: entry.id, commit } }],
  };
}

/** The send did not start: the entry is pending again, its attempt counted already for the next send. */
export function recordSendSkipped({ context }: Args, event: EventOf<'send.skipped'>): OutboxStep {
  const now = later(context, event.at);
  const stop = [sendChildId(event.id)];
  const entry = context.entries.find((e) => e.id === event.id);
  if (entry?.status !== 'sending') return { changes: { now }, stop };
  return {
    changes: {
      now,
      entries: replace(context.entries, entry.id, (e) => ({ ...e, status: 'pending', counted: true })),
    },
    stop,
  };
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
    start: [{ src: 'commitEntry', id: commitChildId(entry.id), input: { id: entry.id, commit } }],
  };
}

/** A write is in the store: the decision takes effect, and is announced. */
export function recordCommitSucceeded({ context }: Args, event: EventOf<'commit.succeeded'>): OutboxStep {
  const now = later(context, event.at);
  // A write went through: the store works again.
  const storeFailures = 0;
  const stop = [commitChildId(event.id)];
  const entry = context.entries.find((e) => e.id === event.id);
  const commit = entry?.commit;
  if (!entry || !commit || (entry.status !== 'claiming' && entry.status !== 'committing'))
    return { changes: { now, storeFailures }, stop };
  const update = (changes: Partial<OutboxEntrySummary>) =>
    replace(context.entries, entry.id, (e) => ({
      ...e,
      // Whatever the write was, the store's count is now the summary's: nothing counted is left unmade.
      counted: false,
      commit: undefined,
      heldUntil: undefined,
      taken: undefined,
      ...changes,
    }));

  switch (commit.op) {
    case 'claim': {
      if (event.takenUntil !== undefined) {
        // Another runner sends it (or an earlier entry of its group) now: ask again then, sending nothing.
        return {
          changes: {
            now,
            storeFailures,
            entries: update({ status: 'pending', heldUntil: event.takenUntil, taken: true }),
          },
          stop,
        };
      }
      if (event.stored) {
        // Another runner moved the entry on: take the store's version, and send nothing now.
        return { changes: { now, storeFailures, entries: update(summarize(event.stored)) }, stop };
      }
      if (!context.online) {
        // Offline since the claim began: nothing is sent while offline (rule 6). The store counts the attempt
        // already; the next send uses it rather than count another.
        return {
          changes: {
            now,
            storeFailures,
            entries: update({ status: 'pending', attempts: commit.attempts, counted: true }),
          },
          stop,
        };
      }
      return {
        changes: { now, storeFailures, entries: update({ status: 'sending', attempts: commit.attempts }) },
        stop,
        start: [
          { src: 'sendEntry', id: sendChildId(entry.id), input: { id: entry.id, attempt: commit.attempts } },
        ],
      };
    }
    case 'remove': {
      const entries = context.entries.filter((e) => e.id !== entry.id);
      return {
        changes: { now, storeFailures, entries },
        stop,
        emit: [
          { type: 'entry-sent', id: entry.id, attempts: commit.attempts, at: now },
          changed(entries, now),
        ],
      };
    }
    case 'reschedule':
      return {
        changes: {
          now,
          storeFailures,
          entries: update({
            status: 'pending',
            attempts: commit.attempts,
            nextAttemptAt: commit.nextAttemptAt,
            wakesWhenOnline: commit.wakesWhenOnline === true || wakesWhenOnline(commit.failure),
            heldByServer: commit.failure.retryAfterMs !== undefined,
          }),
        },
        stop,
        emit: [
          {
            type: 'entry-retry-scheduled',
            id: entry.id,
            attempts: commit.attempts,
            delayMs: commit.delayMs,
            failureClass: commit.failure.class,
            at: now,
          },
        ],
      };
    case 'dead-letter': {
      const entries = update({ status: 'dead', attempts: commit.attempts, deadReason: commit.reason });
      return {
        changes: { now, storeFailures, entries },
        stop,
        emit: [
          {
            type: 'entry-dead-lettered',
            id: entry.id,
            attempts: commit.attempts,
            reason: commit.reason,
            ...(commit.failure ? { failureClass: commit.failure.class } : {}),
            at: now,
          },
          changed(entries, now),
        ],
      };
    }
    case 'revive': {
      const entries = update({
        status: 'pending',
        attempts: 0,
        createdAt: commit.createdAt,
        nextAttemptAt: commit.nextAttemptAt,
        wakesWhenOnline: false,
        heldByServer: false,
        deadReason: undefined,
      });
      return {
        changes: { now, storeFailures, entries },
        stop,
        emit: [{ type: 'entry-revived', id: entry.id, at: now }, changed(entries, now)],
      };
    }
  }
}

/**
 * A write failed: the store keeps the entry as it was, and so does the machine. A failed claim sent nothing;
 * after a failed remove, reschedule or dead-letter the entry is pending again with the attempts the store
 * counted, and will be sent again (its idempotency key makes that safe); a failed revive leaves it dead. Either
 * way a pending entry is held off for `storeRetryMs` (in memory only), so a failing store is not hammered.
 */
export function recordCommitFailed({ context }: Args, event: EventOf<'commit.failed'>): OutboxStep {
  const now = later(context, event.at);
  const stop = [commitChildId(event.id)];
  const entry = context.entries.find((e) => e.id === event.id);
  const commit = entry?.commit;
  if (!entry || !commit || (entry.status !== 'claiming' && entry.status !== 'committing'))
    return { changes: { now }, stop };
  const storeFailures = context.storeFailures + 1;
  const holdOffMs = storeRetryMs({ ...context, storeFailures });
  const reverted: OutboxEntrySummary =
    commit.op === 'revive'
      ? { ...entry, status: 'dead', commit: undefined }
      : { ...entry, status: 'pending', commit: undefined, heldUntil: now + holdOffMs, taken: undefined };
  return {
    changes: { now, storeFailures, entries: replace(context.entries, entry.id, () => reverted) },
    stop,
    emit: [{ type: 'outbox-store-failed', id: entry.id, op: commit.op, at: now }],
  };
}

/** The store no longer has the entry (another runner finished it, or the app removed it): forget it. */
export function recordMissing({ context }: Args, event: EventOf<'entry.missing'>): OutboxStep {
  const now = later(context, event.at);
  const stop = [commitChildId(event.id), sendChildId(event.id)];
  if (!context.entries.some((e) => e.id === event.id)) return { changes: { now }, stop };
  const entries = context.entries.filter((e) => e.id !== event.id);
  return { changes: { now, entries }, stop, emit: [changed(entries, now)] };
}

/** Whether any entry has a write or a send in flight. */
export const hasWorkInFlight = (context: OutboxMachineContext) => context.entries.some(isInFlight);
