import { fromPromise, setup } from 'xstate';
import { replyingActor, xstateActions } from '../../src/engine/machine-logic.js';
import { outboxEntryMachine } from '../outbox-entry/outbox-entry.machine.js';
import { outboxLogic } from './outbox.logic.js';
import { commitEntryReply, replyOf, sendEntryReply, type Settled } from './outbox.replies.js';
import type {
  AcquireLeaseInput,
  AcquireLeaseOutput,
  CommitEntryInput,
  CommitOutcome,
  LoadEntriesOutput,
  OutboxMachineContext,
  OutboxMachineEmitted,
  OutboxMachineEvent,
  OutboxMachineInput,
  SendEntryInput,
  SendResult,
} from './outbox.types.js';

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
  // `run` starts a tick after the child does; a throw is reported like a rejection (replyOf).
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

/**
 * The invocation that asks the store for the lease, to take it or to renew it: when it is granted the lease
 * region goes on to `granted`; when another runner holds it, or the store did not answer, it waits.
 */
function askForLease(id: string, granted: 'rescanning' | 'held') {
  return {
    id,
    src: 'acquireLease',
    input: outboxLogic.inputs.lease,
    onDone: [
      {
        guard: 'isLeaseGranted',
        target: granted,
        actions: { type: 'recordTime', params: outboxLogic.params.actorOutput },
      },
      {
        target: 'waitingForLease',
        actions: { type: 'recordTime', params: outboxLogic.params.actorOutput },
      },
    ],
    onError: {
      target: 'waitingForLease',
      actions: { type: 'announceStoreFailure', params: { op: 'lease' } },
    },
  } as const;
}

/**
 * The outbox scheduler: ONE actor per store decides when each durable entry is sent and what becomes of it.
 * The store is the source of truth: every decision (count an attempt, remove, reschedule, dead-letter, revive)
 * is written by a `commitEntry` child and takes effect only once written. See docs/machines/outbox.md for the
 * generated diagram and src/policy/durable-backoff.ts for the waits and the dead-letter rules.
 *
 * An entry in flight has a lifecycle machine of its own (`outboxEntry`, machines/outbox-entry/, spawned as
 * `entry:<id>`): `claiming` (its attempt is counted in the store) -> `sending` -> `committing` (the decision is
 * written) -> sent and removed, rescheduled, dead-lettered, or back in the queue. This machine keeps the queue
 * (each entry's copy, updated from its machine's reports), chooses what starts (order, concurrency, the lease,
 * connectivity, the store's hold-off), and runs the store writes and sends the entries' machines wait for. A
 * crash at any point loses nothing (rule 10): before the claim is written the entry is as it was;
 * after it, the attempt counts and the entry is sent again after a restart (its idempotency key makes that
 * safe), as it is when the send succeeded but its removal was not written yet.
 *
 * `running` has two regions: `lease` (sending happens only while this runner holds the store's lease, and only
 * while online) and `timer` (one `nextDue` timer for the earliest entry that falls due or expires, set again
 * after every change to the queue). Entries' machines, sends and writes are spawned children, at most one
 * write or send per entry.
 */
export const outboxMachine = setup({
  types: {
    context: {} as OutboxMachineContext,
    input: {} as OutboxMachineInput,
    events: {} as OutboxMachineEvent,
    emitted: {} as OutboxMachineEmitted,
  },
  actors: outboxActors,
  guards: outboxLogic.guards,
  delays: outboxLogic.delays,
  actions: xstateActions(outboxLogic.actions),
}).createMachine({
  id: 'outbox',
  context: outboxLogic.context,
  initial: 'loading',
  on: {
    'outbox.enqueued': {
      actions: [{ type: 'recordEnqueued', params: outboxLogic.params.event }, 'rearm'],
    },
    'connectivity.changed': {
      actions: [{ type: 'recordConnectivity', params: outboxLogic.params.event }, 'rearm'],
    },
    'outbox.pause': { actions: [{ type: 'recordPause', params: outboxLogic.params.event }, 'rearm'] },
    'outbox.resume': { actions: [{ type: 'recordPause', params: outboxLogic.params.event }, 'rearm'] },
    'outbox.close': { target: '.closed' },
  },
  states: {
    loading: {
      description: 'Reads every stored entry (loadEntries); entries enqueued meanwhile are kept.',
      invoke: {
        id: 'loadEntries',
        src: 'loadEntries',
        onDone: {
          target: 'running',
          actions: { type: 'recordLoaded', params: outboxLogic.params.actorOutput },
        },
        onError: { target: 'loadFailed', actions: { type: 'announceStoreFailure', params: { op: 'load' } } },
      },
    },
    loadFailed: {
      description: 'Reading the store failed: reads it again after loadRetry. Nothing is sent meanwhile.',
      after: { loadRetry: { target: 'loading' } },
    },
    running: {
      description:
        'Schedules the queue: the lease region sends, the timer region wakes it when an entry falls due.',
      type: 'parallel',
      entry: 'rearm',
      on: {
        'outbox.flush': { actions: [{ type: 'recordFlush', params: outboxLogic.params.event }, 'rearm'] },
        'outbox.retry': {
          actions: [{ type: 'requestRevive', params: outboxLogic.params.event }, 'rearm'],
        },
        // A write's or a send's answer goes to the entry's machine, which decides what it makes of the entry.
        'send.ended': { actions: { type: 'relayToEntry', params: outboxLogic.params.event } },
        'send.skipped': { actions: { type: 'relayToEntry', params: outboxLogic.params.event } },
        'commit.succeeded': { actions: { type: 'relayToEntry', params: outboxLogic.params.event } },
        'commit.failed': { actions: { type: 'relayToEntry', params: outboxLogic.params.event } },
        'entry.missing': {
          actions: [{ type: 'recordMissing', params: outboxLogic.params.event }, 'rearm'],
        },
        'entry.progressed': {
          actions: [{ type: 'recordProgress', params: outboxLogic.params.event }, 'rearm'],
        },
        'entry.settled': {
          actions: [{ type: 'recordSettled', params: outboxLogic.params.event }, 'rearm'],
        },
      },
      states: {
        lease: {
          description: 'Sends only while this runner holds the store lease; gives it back when idle.',
          initial: 'released',
          states: {
            released: {
              description: 'No lease held. Asks for it as soon as something can start.',
              always: { guard: 'hasDueWork', target: 'acquiring' },
            },
            acquiring: {
              description: 'Asks the store for the lease (acquireLease).',
              invoke: askForLease('acquireLease', 'rescanning'),
            },
            rescanning: {
              description:
                'Lease taken: reads the store again (loadEntries), so entries other tabs or processes wrote join the queue.',
              invoke: {
                id: 'rescanEntries',
                src: 'loadEntries',
                onDone: {
                  target: 'held',
                  actions: [{ type: 'recordRescanned', params: outboxLogic.params.actorOutput }, 'rearm'],
                },
                // What this runner knows is still right: it sends that.
                onError: {
                  target: 'held',
                  actions: { type: 'announceStoreFailure', params: { op: 'load' } },
                },
              },
            },
            waitingForLease: {
              description:
                'Another tab or process holds the lease (or the store did not answer): asks again after leaseRetry, or at once when flush() asks (outbox.askForLease). Decisions kept after failed writes are forgotten: their entries are no longer held.',
              entry: 'forgetDecisions',
              on: { 'outbox.askForLease': { target: 'released' } },
              after: { leaseRetry: { target: 'released' } },
            },
            held: {
              description:
                'Holds the lease: starts every due entry in order, up to concurrency; renews the lease while busy.',
              always: [
                { guard: 'hasDueWork', actions: ['dispatchDue', 'rearm'] },
                { guard: 'isSettled', target: 'releasing' },
              ],
              after: { leaseRenewal: { target: 'renewing' } },
            },
            renewing: {
              description: 'Renews the lease; sends in flight go on. Lost to another runner: waits for it.',
              invoke: askForLease('renewLease', 'held'),
            },
            releasing: {
              description: 'Nothing in flight and nothing due: gives the lease back (releaseLease).',
              invoke: {
                id: 'releaseLease',
                src: 'releaseLease',
                onDone: { target: 'released' },
                onError: { target: 'released' },
              },
            },
          },
        },
        timer: {
          description: 'One timer for the whole queue.',
          initial: 'idle',
          states: {
            idle: {
              description: 'No pending entry waits for a time.',
              on: { 'outbox.rearm': { guard: 'hasWakeTime', target: 'armed', actions: 'setWakeTime' } },
            },
            armed: {
              description: 'Sleeps until the earliest pending entry is due or expires (nextDue).',
              on: {
                'outbox.rearm': [
                  { guard: 'hasWakeTime', target: 'armed', reenter: true, actions: 'setWakeTime' },
                  { target: 'idle' },
                ],
              },
              after: { nextDue: { target: 'idle', actions: ['recordWake', 'rearm'] } },
            },
          },
        },
      },
    },
    closed: {
      type: 'final',
      description: 'Closed: every child stopped (sends in flight aborted), no timer left.',
    },
  },
});
