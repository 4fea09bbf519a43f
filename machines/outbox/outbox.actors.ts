import { fromPromise } from 'xstate';
import { replyingActor } from '../../src/engine/machine-logic.js';
import { outboxEntryMachine } from '../outbox-entry/outbox-entry.machine.js';
import { commitEntryReply, replyOf, sendEntryReply, type Settled } from './outbox.replies.js';
import type {
  AcquireLeaseInput,
  AcquireLeaseOutput,
  CommitEntryInput,
  LoadEntriesOutput,
  OutboxEntryRecord,
  OutboxMachineEvent,
  SendEntryInput,
  SendResult,
} from './outbox.types.js';

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

export interface OutboxActorOptions {
  /** Stamps each reported event with this clock time (the runtime passes `clock.now`). */
  now?: (() => number) | undefined;
}

/**
 * Wraps an async function as the callback actor an entry's work runs in: it reports exactly one event when the
 * function settles, passes an AbortSignal that fires when the machine stops the child (closing the outbox),
 * and reports nothing once stopped.
 */
function reportOnce<TInput, TOutput>(
  run: (input: TInput, signal: AbortSignal) => Promise<TOutput>,
  toEvent: (input: TInput, outcome: Settled<TOutput>) => OutboxMachineEvent,
  options: OutboxActorOptions,
) {
  // `run` starts a tick after the child does, as it always has; a throw is reported like a rejection (replyOf).
  return replyingActor<TInput>((input, signal) =>
    Promise.resolve().then(() => replyOf(run, toEvent, input, signal, options.now)),
  );
}

/**
 * The `sendEntry` actor from an async function that sends the stored entry once (one run of the request
 * lifecycle) and resolves with its `SendResult`, `'missing'` when the store no longer has the entry, or
 * `'skipped'` when it sent nothing because the device went offline meanwhile. It should never reject; a
 * rejection counts as a failed attempt whose outcome is unknown (retryable, so the idempotency key decides).
 */
export function sendEntryActor(
  send: (input: SendEntryInput, signal: AbortSignal) => Promise<SendResult | 'missing' | 'skipped'>,
  options: OutboxActorOptions = {},
) {
  return reportOnce(send, sendEntryReply, options);
}

/**
 * The `commitEntry` actor from an async function that writes one decision (`OutboxCommit`) to the store.
 * A rejection means the store kept the entry as it was.
 */
export function commitEntryActor(
  commit: (input: CommitEntryInput, signal: AbortSignal) => Promise<CommitOutcome>,
  options: OutboxActorOptions = {},
) {
  return reportOnce(commit, commitEntryReply, options);
}

/**
 * The outbox machine's effects. The machine never does I/O itself: whoever runs it provides these with
 * `outboxMachine.provide({ actors: { ... } })` (src/runtime/outbox-runner.ts does). The defaults make an
 * in-memory outbox that holds the lease alone and persists nothing, with no way to send: provide `sendEntry`.
 */
export const outboxActors = {
  /** An entry's lifecycle while it is in flight (machines/outbox-entry/): not an effect, nothing to provide. */
  outboxEntry: outboxEntryMachine,
  /** Every stored entry, in the store's order. The default has no store: nothing to load. */
  loadEntries: fromPromise<LoadEntriesOutput>(() => Promise.resolve({ entries: [] })),
  /** Claims or renews the right to send. The default runs alone: always held. */
  acquireLease: fromPromise<AcquireLeaseOutput, AcquireLeaseInput>(() => Promise.resolve({ held: true })),
  /** Gives the lease up. */
  releaseLease: fromPromise<void>(() => Promise.resolve()),
  /** Writes one decision for one entry (see `commitEntryActor`). The default persists nothing. */
  commitEntry: commitEntryActor(() => Promise.resolve({ status: 'committed' })),
  /**
   * Sends one entry (see `sendEntryActor`). The default fails visibly: each entry is dead-lettered
   * `not-retryable` with a message saying what to provide, rather than waiting forever.
   */
  sendEntry: sendEntryActor(() =>
    Promise.resolve<SendResult>({
      result: 'failed',
      failure: {
        class: 'unexpected',
        requestSent: 'no',
        origin: '',
        message: 'outboxMachine: provide a `sendEntry` actor with outboxMachine.provide({ actors })',
      },
      attempts: 1,
      retryable: false,
    }),
  ),
};
