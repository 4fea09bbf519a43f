import { assign, emit, enqueueActions, raise, setup } from 'xstate';
import * as actions from './outbox.actions.js';
import { outboxActors } from './outbox.actors.js';
import { outboxDelays } from './outbox.delays.js';
import { outboxGuards } from './outbox.guards.js';
import type {
  AcquireLeaseOutput,
  CommitEntryInput,
  LoadEntriesOutput,
  OutboxMachineContext,
  OutboxMachineEmitted,
  OutboxMachineEvent,
  OutboxMachineInput,
  SendEntryInput,
} from './outbox.types.js';

/**
 * The invocation that asks the store for the lease, to take it or to renew it: when it is granted the lease
 * region goes on to `granted`; when another runner holds it, or the store did not answer, it waits.
 */
function askForLease(id: string, granted: 'rescanning' | 'held') {
  return {
    id,
    src: 'acquireLease',
    input: ({ context }: { context: OutboxMachineContext }) => ({ ttlMs: context.leaseTtlMs }),
    onDone: [
      {
        guard: 'isLeaseGranted',
        target: granted,
        actions: {
          type: 'recordTime',
          params: ({ event }: { event: { output: AcquireLeaseOutput } }) => event.output,
        },
      },
      {
        target: 'waitingForLease',
        actions: {
          type: 'recordTime',
          params: ({ event }: { event: { output: AcquireLeaseOutput } }) => event.output,
        },
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
 * Each entry goes `pending` -> `claiming` (its attempt is counted in the store) -> `sending` -> `committing`
 * (the decision is written) -> removed, `pending` again at a later time, or `dead`. A crash at any point loses
 * nothing (CONTRACT rule 10): before the claim is written the entry is as it was; after it, the attempt counts
 * and the entry is sent again after a restart (its idempotency key makes that safe), as it is when the send
 * succeeded but its removal was not written yet.
 *
 * `running` has two regions: `lease` (sending happens only while this runner holds the store's lease, and only
 * while online) and `timer` (one `nextDue` timer for the earliest entry that falls due or expires, set again
 * after every change to the queue). Sends and writes are spawned children, one per entry at most.
 */
export const outboxMachine = setup({
  types: {
    context: {} as OutboxMachineContext,
    input: {} as OutboxMachineInput,
    events: {} as OutboxMachineEvent,
    emitted: {} as OutboxMachineEmitted,
  },
  actors: outboxActors,
  guards: outboxGuards,
  delays: outboxDelays,
  actions: {
    recordEnqueued: enqueueActions(({ context, enqueue }, params: EventOf<'outbox.enqueued'>) =>
      perform(enqueue, actions.recordEnqueued({ context }, params)),
    ),
    recordLoaded: enqueueActions(({ context, enqueue }, params: LoadEntriesOutput) =>
      perform(enqueue, actions.recordLoaded({ context }, params)),
    ),
    recordRescanned: enqueueActions(({ context, enqueue }, params: LoadEntriesOutput) =>
      perform(enqueue, actions.recordRescanned({ context }, params)),
    ),
    dispatchDue: enqueueActions(({ context, enqueue }) => perform(enqueue, actions.dispatchDue({ context }))),
    recordSendEnded: enqueueActions(({ context, enqueue }, params: EventOf<'send.ended'>) =>
      perform(enqueue, actions.recordSendEnded({ context }, params)),
    ),
    recordSendSkipped: enqueueActions(({ context, enqueue }, params: EventOf<'send.skipped'>) =>
      perform(enqueue, actions.recordSendSkipped({ context }, params)),
    ),
    requestRevive: enqueueActions(({ context, enqueue }, params: EventOf<'outbox.retry'>) =>
      perform(enqueue, actions.requestRevive({ context }, params)),
    ),
    recordCommitSucceeded: enqueueActions(({ context, enqueue }, params: EventOf<'commit.succeeded'>) =>
      perform(enqueue, actions.recordCommitSucceeded({ context }, params)),
    ),
    recordCommitFailed: enqueueActions(({ context, enqueue }, params: EventOf<'commit.failed'>) =>
      perform(enqueue, actions.recordCommitFailed({ context }, params)),
    ),
    recordMissing: enqueueActions(({ context, enqueue }, params: EventOf<'entry.missing'>) =>
      perform(enqueue, actions.recordMissing({ context }, params)),
    ),
    recordTime: assign(actions.recordTime),
    recordConnectivity: assign(actions.recordConnectivity),
    recordFlush: assign(actions.recordFlush),
    setWakeTime: assign(actions.setWakeTime),
    recordWake: assign(actions.recordWake),
    /** The queue changed: the `timer` region sets `nextDue` again. */
    rearm: raise({ type: 'outbox.rearm' }),
    announceStoreFailure: emit(
      ({ context }, { op }: { op: 'load' | 'lease' }) =>
        ({ type: 'outbox-store-failed', op, at: context.now }) as const,
    ),
  },
}).createMachine({
  id: 'outbox',
  context: ({ input }) => actions.initialContext(input),
  initial: 'loading',
  on: {
    'outbox.enqueued': {
      actions: [{ type: 'recordEnqueued', params: ({ event }) => event }, 'rearm'],
    },
    'connectivity.changed': {
      actions: [{ type: 'recordConnectivity', params: ({ event }) => event }, 'rearm'],
    },
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
          actions: { type: 'recordLoaded', params: ({ event }) => event.output },
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
        'outbox.flush': { actions: [{ type: 'recordFlush', params: ({ event }) => event }, 'rearm'] },
        'outbox.retry': {
          actions: [{ type: 'requestRevive', params: ({ event }) => event }, 'rearm'],
        },
        'send.ended': {
          actions: [{ type: 'recordSendEnded', params: ({ event }) => event }, 'rearm'],
        },
        'send.skipped': {
          actions: [{ type: 'recordSendSkipped', params: ({ event }) => event }, 'rearm'],
        },
        'commit.succeeded': {
          actions: [{ type: 'recordCommitSucceeded', params: ({ event }) => event }, 'rearm'],
        },
        'commit.failed': {
          actions: [{ type: 'recordCommitFailed', params: ({ event }) => event }, 'rearm'],
        },
        'entry.missing': {
          actions: [{ type: 'recordMissing', params: ({ event }) => event }, 'rearm'],
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
                  actions: [{ type: 'recordRescanned', params: ({ event }) => event.output }, 'rearm'],
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
                'Another tab or process holds the lease (or the store did not answer): asks again after leaseRetry.',
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

type EventOf<T extends OutboxMachineEvent['type']> = Extract<OutboxMachineEvent, { type: T }>;

/** The part of xstate's `enqueue` a step needs. */
interface StepEnqueuer {
  assign(changes: Partial<OutboxMachineContext>): void;
  stopChild(id: string): void;
  spawnChild(src: 'commitEntry', options: { id: string; input: CommitEntryInput }): void;
  spawnChild(src: 'sendEntry', options: { id: string; input: SendEntryInput }): void;
  emit(event: OutboxMachineEmitted): void;
}

/** Performs one pure step (outbox.actions.ts): context changes, children stopped and started, events emitted. */
function perform(
  enqueue: StepEnqueuer,
  { changes, start = [], stop = [], emit: emitted = [] }: actions.OutboxStep,
) {
  enqueue.assign(changes);
  for (const id of stop) enqueue.stopChild(id);
  for (const child of start) {
    if (child.src === 'commitEntry') enqueue.spawnChild('commitEntry', { id: child.id, input: child.input });
    else enqueue.spawnChild('sendEntry', { id: child.id, input: child.input });
  }
  for (const event of emitted) enqueue.emit(event);
}
