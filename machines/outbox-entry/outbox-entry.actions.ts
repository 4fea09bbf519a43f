import { durableVerdict, wakesWhenOnline } from '../../src/policy/durable-backoff.js';
import { summarize } from '../outbox/outbox.logic.js';
import type { OutboxCommit, OutboxDecision, OutboxEntrySummary } from '../outbox/outbox.types.js';
import type {
  OutboxEntryMachineContext,
  OutboxEntryMachineEvent,
  OutboxEntryMachineInput,
  OutboxEntryOutcome,
  OutboxEntryReport,
} from './outbox-entry.types.js';

/**
 * The actions of one entry's lifecycle, as pure functions of its context and the event: what a store write's
 * or a send's answer makes of the entry, and the reports to the outbox. The decisions about one entry are made
 * here, so that the outbox machine keeps only the queue (order, concurrency, the lease, the store's hold-off).
 */
type Context = OutboxEntryMachineContext;
type Changes = Partial<Context>;
type Args<T extends OutboxEntryMachineEvent['type']> = {
  context: Context;
  event: Extract<OutboxEntryMachineEvent, { type: T }>;
};

/** The entry's first state, from the work the scheduler chose. */
export function initialEntryContext(input: OutboxEntryMachineInput): Context {
  const { policy, now, online, work } = input;
  const context = { policy, now, online, wrote: false };
  if ('send' in work) return { ...context, entry: { ...input.entry, status: 'sending', counted: false } };
  const status = work.commit.op === 'claim' ? 'claiming' : 'committing';
  // A decision kept after a failed write is the write starting now: no longer kept.
  return {
    ...context,
    entry: { ...input.entry, status, commit: work.commit, decided: undefined },
    commit: work.commit,
  };
}

/** The later of what the machine knew and the event's stamp: time never goes back. */
const later = (context: Context, at: number | undefined) =>
  at !== undefined && at > context.now ? at : context.now;

/**
 * The entry once a write is in the store: nothing counted is left unmade, no write in flight, no hold-off
 * (whatever the write was, the store's count is now the entry's).
 */
const written = (
  context: Context,
  at: number | undefined,
  changes: Partial<OutboxEntrySummary>,
): Changes => ({
  now: later(context, at),
  wrote: true,
  entry: {
    ...context.entry,
    counted: false,
    commit: undefined,
    heldUntil: undefined,
    taken: undefined,
    ...changes,
  },
});

const claimed = (context: Context) => (context.commit as Extract<OutboxCommit, { op: 'claim' }>).attempts;

/** The claim did not apply: another runner holds the entry (or an earlier one of its group) until then. */
export const recordTakenElsewhere = ({ context, event }: Args<'commit.succeeded'>): Changes =>
  written(context, event.at, { status: 'pending', heldUntil: event.takenUntil, taken: true });

/** The claim did not apply: another runner moved the entry on. The store's version is taken, nothing sent. */
export const recordStoredVersion = ({ context, event }: Args<'commit.succeeded'>): Changes =>
  written(context, event.at, summarize(event.stored!));

/**
 * Offline since the claim began: nothing is sent while offline (rule 6). The store counts the attempt
 * already; the next send uses it rather than count another.
 */
export const recordClaimedOffline = ({ context, event }: Args<'commit.succeeded'>): Changes =>
  written(context, event.at, { status: 'pending', attempts: claimed(context), counted: true });

/** The attempt is counted in the store: the entry is sent. */
export const recordClaimed = ({ context, event }: Args<'commit.succeeded'>): Changes =>
  written(context, event.at, { status: 'sending', attempts: claimed(context) });

/**
 * A send ended: decides done, retry at a time, or dead (src/policy/durable-backoff.ts); the decision is written
 * next (`committing`), and takes effect only once written.
 */
export function decideOutcome({ context, event }: Args<'send.ended'>): Changes {
  const now = later(context, event.at);
  const { entry } = context;
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
      random: event.random,
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
  return { now, commit, entry: { ...entry, status: 'committing', commit } };
}

/** The send did not start (offline just before): pending again, its attempt counted already for the next send. */
export const recordSkipped = ({ context, event }: Args<'send.skipped'>): Changes => ({
  now: later(context, event.at),
  entry: { ...context.entry, status: 'pending', counted: true },
});

/** The decision is in the store: the entry is sent (and removed), dead-lettered, rescheduled or revived. */
export function recordWritten({ context, event }: Args<'commit.succeeded'>): Changes {
  const commit = context.commit!;
  switch (commit.op) {
    case 'reschedule':
      return written(context, event.at, {
        status: 'pending',
        attempts: commit.attempts,
        nextAttemptAt: commit.nextAttemptAt,
        wakesWhenOnline: commit.wakesWhenOnline === true || wakesWhenOnline(commit.failure),
        heldByServer: commit.failure.retryAfterMs !== undefined,
      });
    case 'dead-letter':
      return written(context, event.at, {
        status: 'dead',
        attempts: commit.attempts,
        deadReason: commit.reason,
      });
    case 'revive':
      return written(context, event.at, {
        status: 'pending',
        attempts: 0,
        createdAt: commit.createdAt,
        nextAttemptAt: commit.nextAttemptAt,
        wakesWhenOnline: false,
        heldByServer: false,
        deadReason: undefined,
      });
    default:
      // `remove`: the entry is gone from the store (a claim is `claiming`'s, never written here).
      return written(context, event.at, {});
  }
}

/**
 * A write failed: the store keeps the entry as it was. A failed revival leaves it dead; anything else leaves it
 * pending with the attempts the store counted (the outbox holds it off before it writes again).
 */
export const recordWriteFailed = ({ context, event }: Args<'commit.failed'>): Changes => ({
  now: later(context, event.at),
  entry: {
    ...context.entry,
    status: context.commit?.op === 'revive' ? 'dead' : 'pending',
    commit: undefined,
    taken: undefined,
    // A claim or a revival is asked again from the start; a decision is kept, to be written again unsent.
    decided: isDecision(context.commit) ? context.commit : undefined,
  },
});

const isDecision = (commit: OutboxCommit | undefined): commit is OutboxDecision =>
  commit !== undefined && commit.op !== 'claim' && commit.op !== 'revive';

/** The store no longer has the entry (another runner finished it, or the app removed it). */
export const recordMissing = ({ context, event }: Args<'entry.missing'>): Changes => ({
  now: later(context, event.at),
});

/** Connectivity changed while the attempt is being counted. */
export const recordConnectivity = ({ context, event }: Args<'connectivity.changed'>): Changes => ({
  now: later(context, event.at),
  online: event.online,
});

/** The outbox hears of each step of the lifecycle: it starts the write or the send this state waits for. */
export const reportProgress = ({ context }: { context: Context }): OutboxEntryReport => ({
  type: 'entry.progressed',
  id: context.entry.id,
  entry: context.entry,
  wrote: context.wrote,
  at: context.now,
});

/** The lifecycle ended: the outbox takes the entry back. */
export const reportSettled = (
  { context }: { context: Context },
  { outcome }: { outcome: OutboxEntryOutcome },
): OutboxEntryReport => ({
  type: 'entry.settled',
  id: context.entry.id,
  outcome,
  entry: context.entry,
  commit: context.commit,
  wrote: context.wrote,
  at: context.now,
});

/** After a report, `wrote` starts again from false. */
export const clearWrote = (): Changes => ({ wrote: false });
