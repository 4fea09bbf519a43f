import type { Policy } from '../../src/policy/policy.js';
import type {
  OutboxCommit,
  OutboxEntrySummary,
  OutboxMachineEvent,
  SendEntryInput,
} from '../outbox/outbox.types.js';

/**
 * What the outbox machine starts an entry's lifecycle with: the entry as it knows it, and the first piece of
 * work its scheduler chose (`planDispatch`): a store write (a claim, a dead-lettering, a revival), or the send
 * of an attempt counted already.
 */
export interface OutboxEntryMachineInput {
  policy: Policy;
  now: number;
  online: boolean;
  entry: OutboxEntrySummary;
  work: { commit: OutboxCommit } | { send: SendEntryInput };
}

export interface OutboxEntryMachineContext {
  policy: Policy;
  /** The latest clock time the entry's machine knows of (the outbox's when it started, then event stamps). */
  now: number;
  /** Whether the device is online, as the outbox says (it forwards `connectivity.changed` while claiming). */
  online: boolean;
  /** The entry as this lifecycle has it so far: the outbox keeps a copy of it, updated from each report. */
  entry: OutboxEntrySummary;
  /** The last store write asked for: the one in flight, or the one whose answer ended the lifecycle. */
  commit?: OutboxCommit | undefined;
  /** A store write succeeded since the last report: the outbox counts the store as working again. */
  wrote: boolean;
}

/** How an entry's lifecycle ended, as its last state names it. */
export type OutboxEntryOutcome =
  'sent' | 'rescheduled' | 'deadLettered' | 'revived' | 'released' | 'writeFailed' | 'missing';

/**
 * Events the entry's machine accepts: the answers of the store write and the send the outbox runs for it
 * (forwarded by the outbox, which owns those children), and connectivity.
 */
export type OutboxEntryMachineEvent = Extract<
  OutboxMachineEvent,
  {
    type:
      | 'send.ended'
      | 'send.skipped'
      | 'commit.succeeded'
      | 'commit.failed'
      | 'entry.missing'
      | 'connectivity.changed';
  }
>;

/**
 * What the entry's machine tells the outbox (`sendParent`):
 * - `entry.progressed`: it entered `claiming`, `sending` or `committing`; the outbox starts the store write or
 *   the send that state waits for (`entry.commit`, or the send of `entry.attempts`);
 * - `entry.settled`: its lifecycle ended (`outcome`); the outbox takes the entry back (or forgets it), stops the
 *   entry's machine and announces the decision.
 * `entry` is the entry as the lifecycle left it; `wrote` says a store write succeeded since the last report.
 */
export type OutboxEntryReport =
  | { type: 'entry.progressed'; id: string; entry: OutboxEntrySummary; wrote: boolean; at: number }
  | {
      type: 'entry.settled';
      id: string;
      outcome: OutboxEntryOutcome;
      entry: OutboxEntrySummary;
      /** The write that ended the lifecycle (or failed). */
      commit?: OutboxCommit | undefined;
      wrote: boolean;
      at: number;
    };
