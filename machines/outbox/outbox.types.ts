import type { DeadReason } from '../../src/policy/durable-backoff.js';
import type { Failure, FailureClass } from '../../src/policy/failure.js';
import type { Policy } from '../../src/policy/policy.js';
import type { OutboxEntryMachineInput, OutboxEntryReport } from '../outbox-entry/outbox-entry.types.js';

/**
 * The fields of a stored outbox entry that the scheduler reads. A store's `OutboxEntry` has all of them; the
 * runtime passes a copy of only these (`entryRecordOf`, machines/outbox/outbox.replies.ts) in `outbox.enqueued`,
 * `loadEntries`' output and `commit.succeeded`, so no path, query, header, body or idempotency key ever reaches
 * the machine's events, context, snapshots or the inspector.
 */
export interface OutboxEntryRecord {
  id: string;
  createdAt: number;
  orderKey?: string | undefined;
  attempts: number;
  nextAttemptAt: number;
  status: 'pending' | 'dead';
  deadReason?: string | undefined;
  /** Only the last failure is read: whether going online should end its wait. */
  failures?: readonly Failure[] | undefined;
}

/**
 * Where one entry is, as the scheduler sees it:
 * - `pending`: in the queue, waiting for its time, for connectivity, for the lease, or for the entries before it
 *   (the store's `pending`);
 * - `claiming`: its next attempt is being counted in the store, before it is sent;
 * - `sending`: the `sendEntry` actor is sending it;
 * - `committing`: a decision (remove, reschedule, dead-letter, revive) is being written to the store; it takes
 *   effect only once written;
 * - `dead`: dead-lettered, kept for the app (the store's `dead`).
 * A `done` entry is removed from the store and from the machine.
 */
export type OutboxEntryStatus = 'pending' | 'claiming' | 'sending' | 'committing' | 'dead';

/** What the machine keeps of each entry, in the store's order (the order they were added). */
export interface OutboxEntrySummary {
  id: string;
  orderKey?: string | undefined;
  createdAt: number;
  /** Attempts counted so far, as the store has them. */
  attempts: number;
  /**
   * Not sent before this time. As the store has it, except in memory: `outbox.flush` and going online bring it
   * forward.
   */
  nextAttemptAt: number;
  /**
   * In memory only: nothing is written for this entry before this time, after a failed store write or while
   * another runner holds it (`taken`).
   */
  heldUntil?: number | undefined;
  /** In memory only: `heldUntil` is set because another runner holds the entry or an earlier one of its group. */
  taken?: boolean | undefined;
  /**
   * In memory only: the store already counts the next attempt (`attempts`), which was not made because the
   * device went offline while it was being counted. The next send uses it instead of counting another.
   */
  counted?: boolean | undefined;
  status: OutboxEntryStatus;
  /** The write in flight while `claiming` or `committing`. */
  commit?: OutboxCommit | undefined;
  /**
   * In memory only: the decision made after a send (the removal, a reschedule, a dead-lettering) whose write
   * failed. Once the hold-off ends it is written again, with no other send: that send is over, and sending the
   * entry again would spend an attempt (or dead-letter an entry that was delivered). A crash forgets it: the store
   * then still has the entry as claimed, and it is sent again under its key (docs/durable.md).
   */
  decided?: OutboxDecision | undefined;
  /** The last send failed on the device's network path: going online makes the entry due at once. */
  wakesWhenOnline: boolean;
  /**
   * The last send's server asked for this wait (Retry-After): `outbox.flush` does not bring the entry forward
   * (rule 5: never sooner than the server said).
   */
  heldByServer?: boolean | undefined;
  deadReason?: string | undefined;
}

/** A write that settles an entry after its send, or dead-letters it: what `decided` keeps when it fails. */
export type OutboxDecision = Exclude<OutboxCommit, { op: 'claim' | 'revive' }>;

/**
 * One write of the scheduler's decision to the store, made by the `commitEntry` actor. Nothing is in effect
 * before the write resolves; a write that fails leaves the entry as the store had it.
 */
export type OutboxCommit =
  /**
   * Counts the next attempt before it is sent (so an attempt cut short by a crash still counts). `attempts` is
   * the new count; the store must hold `attempts - 1` for the claim to apply (another runner may have moved on).
   */
  | { op: 'claim'; attempts: number }
  /** The entry was sent: it is done. */
  | { op: 'remove'; attempts: number }
  /** Sent again at `nextAttemptAt`. `failures`, when given, are every failure of the send (`failure` the last). */
  | {
      op: 'reschedule';
      attempts: number;
      nextAttemptAt: number;
      delayMs: number;
      failure: Failure;
      failures?: readonly Failure[] | undefined;
      /** Going online ends the wait (the send stopped because the device went offline). Not stored. */
      wakesWhenOnline?: boolean | undefined;
    }
  /** Dead-lettered; kept for the app. */
  | {
      op: 'dead-letter';
      attempts: number;
      reason: DeadReason;
      failure?: Failure | undefined;
      failures?: readonly Failure[] | undefined;
    }
  /** A dead entry back in the queue (`outbox.retry`): attempts reset, its age counted from now. */
  | { op: 'revive'; createdAt: number; nextAttemptAt: number };

/** What starts the outbox machine. */
export interface OutboxMachineInput {
  policy: Policy;
  /** The clock's `now()` when the machine starts. */
  now: number;
  /** Whether the connectivity source says online (`unknown` counts as online). */
  online: boolean;
  /**
   * How long a lease lasts once acquired. The machine renews it every third of this while it holds it, and
   * asks again after half of this when another runner holds it. @default 30000
   */
  leaseTtlMs?: number | undefined;
}

export interface OutboxMachineContext {
  policy: Policy;
  leaseTtlMs: number;
  /** The latest clock time the machine knows of (from event stamps and its own timers). */
  now: number;
  online: boolean;
  /** Every entry, dead ones included, in the order they were added (the store's order). */
  entries: OutboxEntrySummary[];
  /** Store writes that failed in a row; the hold-off after a failed write grows with it. */
  storeFailures: number;
  /** When the `nextDue` timer fires, while it is armed. */
  wakeAt?: number | undefined;
  /**
   * No send starts (`outbox.pause`, until `outbox.resume`): a drain whose time is spent waits for the sends it
   * started without starting more. Store writes that send nothing (a dead-lettering, a decision written again)
   * still go on.
   */
  paused?: boolean | undefined;
}

/** The result of one send of an entry (one run of the request lifecycle). */
export type SendResult =
  | { result: 'sent' }
  | {
      result: 'failed';
      /** The last failure of the send. */
      failure: Failure;
      /** Every failure of the send, oldest first (the entry's failure history keeps them all). */
      failures?: readonly Failure[] | undefined;
      /** The server's Retry-After in ms; `failure.retryAfterMs` is read when this is absent. */
      retryAfterMs?: number | undefined;
      /** Attempts this send made (at least 1), counted across layers like `policy.attempts.max`. */
      attempts: number;
      /** Whether the same request may be sent again (a retryable failure of a request safe to replay). */
      retryable: boolean;
      /** The send stopped because the device went offline (rule 6): going online sends it again at once. */
      endedOffline?: boolean | undefined;
    };

/** What the `sendEntry` actor gets: which entry, and the attempt number counted for it in the store. */
export interface SendEntryInput {
  id: string;
  attempt: number;
}

/** What the `commitEntry` actor gets. */
export interface CommitEntryInput {
  id: string;
  commit: OutboxCommit;
}

/** What a commit function reports: written, not applied because the store had moved on, or gone. */
export type CommitOutcome =
  | { status: 'committed' }
  /** A claim did not apply: the store's entry is not the one the machine knew (another runner moved it on). */
  | { status: 'stale'; stored: OutboxEntryRecord }
  /** The store has no such entry any more. */
  | { status: 'missing' }
  /**
   * A claim did not apply because another runner holds the entry, or an earlier entry of its order group, in a
   * store with per-entry claims (`OutboxStore.claims`): ask again at `until`.
   */
  | { status: 'taken'; until: number };

/** `loadEntries`' output: every stored entry, in the store's order. */
export interface LoadEntriesOutput {
  entries: readonly OutboxEntryRecord[];
  /**
   * `entries` is all the store holds, so a rescan forgets an entry that is not among them (the app removed it,
   * or another runner finished it). The default actor, which has no store, leaves it out.
   */
  complete?: boolean | undefined;
  /**
   * Ids written to the store while it was being read: the read may have missed them, so a rescan does not take
   * their absence for a removal.
   */
  keep?: readonly string[] | undefined;
  at?: number | undefined;
}

export interface AcquireLeaseInput {
  ttlMs: number;
}

/** `held: false` means another runner holds an unexpired lease. */
export interface AcquireLeaseOutput {
  held: boolean;
  at?: number | undefined;
}

/** Events the outbox machine accepts. Every `at` is the runtime's `clock.now()`; optional for embedders. */
export type OutboxMachineEvent =
  /** A new entry, already written to the store by the runtime. */
  | { type: 'outbox.enqueued'; entry: OutboxEntryRecord; at?: number | undefined }
  /** Sends every pending entry now, ignoring backoff but not connectivity, order or concurrency. */
  | { type: 'outbox.flush'; at?: number | undefined }
  /** Puts a dead entry back in the queue, attempts reset. */
  | { type: 'outbox.retry'; id: string; at?: number | undefined }
  | { type: 'connectivity.changed'; online: boolean; at?: number | undefined }
  /**
   * Asks for the lease again now, without waiting out `leaseRetry`: `flush()` waiting for a lease that another
   * live runner holds (it gives it back when idle; a dead holder's lease is free at once).
   */
  | { type: 'outbox.askForLease'; at?: number | undefined }
  | { type: 'outbox.close' }
  /** Starts no more sends until `outbox.resume`; sends in flight go on. */
  | { type: 'outbox.pause'; at?: number | undefined }
  /** Sends start again as usual. */
  | { type: 'outbox.resume'; at?: number | undefined }
  /** From `sendEntry`: the send ended. */
  /** `random`: a draw of the runtime's Random in [0, 1), stamped with `at`, for the backoff's jitter. */
  | {
      type: 'send.ended';
      id: string;
      result: SendResult;
      at?: number | undefined;
      random?: number | undefined;
    }
  /**
   * From `commitEntry`: the write is in the store. `stored` is given when a claim did not apply because the
   * store's entry was not what the machine expected (another runner moved it on): the machine takes it.
   * `takenUntil` is given when a claim did not apply because another runner holds the entry (or an earlier one
   * of its group): the machine asks again then.
   */
  | {
      type: 'commit.succeeded';
      id: string;
      stored?: OutboxEntryRecord | undefined;
      takenUntil?: number | undefined;
      at?: number | undefined;
    }
  /**
   * From `commitEntry`: the write failed; the store keeps the entry as it was. The error by name only: a store's
   * message or fields may quote the row it was writing.
   */
  | { type: 'commit.failed'; id: string; error: { name: string }; at?: number | undefined }
  /**
   * From `sendEntry`: the send did not start (the device went offline just before). The store counts the attempt
   * already; the next send uses it.
   */
  | { type: 'send.skipped'; id: string; at?: number | undefined }
  /** From `sendEntry` or `commitEntry`: the store no longer has this entry (removed by another runner or the app). */
  | { type: 'entry.missing'; id: string; at?: number | undefined }
  /** From an entry's machine (`outboxEntry`): a step of its lifecycle, or its end. */
  | OutboxEntryReport
  /** Internal: the queue changed, so the wake-up timer is set again. */
  | { type: 'outbox.rearm' };

/**
 * Emitted as the outbox goes, once each decision is in the store: the runtime turns these into redacted
 * decision events. Ids and counts only: never a path, header or body.
 */
export type OutboxMachineEmitted =
  | { type: 'entry-sent'; id: string; attempts: number; at: number }
  | {
      type: 'entry-retry-scheduled';
      id: string;
      attempts: number;
      delayMs: number;
      failureClass: FailureClass;
      at: number;
    }
  | {
      type: 'entry-dead-lettered';
      id: string;
      attempts: number;
      reason: DeadReason;
      failureClass?: FailureClass | undefined;
      at: number;
    }
  | { type: 'entry-revived'; id: string; at: number }
  /**
   * A newer entry with its `replaceKey` replaced it, unsent, in the store write that added that one (`by`). Told
   * by the runner, which makes that write; the machine then forgets the entry as it does a removed one.
   */
  | { type: 'entry-replaced'; id: string; by: string; at: number }
  /** `size` counts every entry, dead ones included; `pending` and `dead` split it. */
  | { type: 'outbox-changed'; size: number; pending: number; dead: number; at: number }
  /** A store read or write failed; the entry stays as the store had it. */
  | {
      type: 'outbox-store-failed';
      id?: string | undefined;
      op: OutboxCommit['op'] | 'load' | 'lease';
      at: number;
    };

/** What the scheduler starts now for one entry: a store write, or (for an attempt already counted) the send. */
export type PlannedWork = { id: string; commit: OutboxCommit } | { id: string; send: SendEntryInput };

/** One child to start: an entry's lifecycle (a child machine), or a store write or a send for one entry. */
export type OutboxChild =
  | { src: 'outboxEntry'; id: string; input: OutboxEntryMachineInput }
  | { src: 'commitEntry'; id: string; input: CommitEntryInput }
  | { src: 'sendEntry'; id: string; input: SendEntryInput };

/**
 * What one of the outbox machine's actions does: the context changes, the children to start or stop, the events
 * to send to entries' machines, and the events to emit.
 */
export interface OutboxStep {
  changes: Partial<OutboxMachineContext>;
  start?: OutboxChild[];
  /** Ids of children whose work is over (or must be). */
  stop?: string[];
  /** Events for entries' machines, by child id. */
  send?: { to: string; event: { type: string; at?: number | undefined } }[];
  emit?: OutboxMachineEmitted[];
}
