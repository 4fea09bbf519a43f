import { setup } from 'xstate';
import { xstateActions } from '../../src/engine/machine-logic.js';
import { outboxEntryLogic } from './outbox-entry.logic.js';
import type {
  OutboxEntryMachineContext,
  OutboxEntryMachineEvent,
  OutboxEntryMachineInput,
  OutboxEntryOutcome,
} from './outbox-entry.types.js';

/** A state where the lifecycle has ended: it tells the outbox, which takes the entry back and stops this actor. */
const settled = (outcome: OutboxEntryOutcome, description: string) => ({
  description,
  entry: [{ type: 'reportSettled' as const, params: { outcome } }, 'clearWrote' as const],
});

/** Tells the outbox this state was entered: it starts the store write or the send the state waits for. */
const progressed = ['reportProgress', 'clearWrote'] as const;

/**
 * One durable entry's lifecycle while it is in flight: the outbox machine starts one per entry it claims,
 * sends, dead-letters or revives (`outboxEntry`, id `entry:<id>`), and stops it once it has settled. Each state
 * is where the entry is: `claiming` (its next attempt is being counted in the store), `sending`, `committing`
 * (the decision is being written; it takes effect only once written), then how it ended. The outbox owns the
 * store writes and the sends (`commitEntry`, `sendEntry`, which an app provides to the outbox machine) and
 * forwards their answers here; this machine decides what each answer makes of the entry. Nothing is in effect
 * before the store has it (rule 10). See docs/machines/outbox-entry.md for the generated diagram.
 */
export const outboxEntryMachine = setup({
  types: {
    context: {} as OutboxEntryMachineContext,
    input: {} as OutboxEntryMachineInput,
    events: {} as OutboxEntryMachineEvent,
  },
  guards: outboxEntryLogic.guards,
  actions: xstateActions(outboxEntryLogic.actions),
}).createMachine({
  id: 'outboxEntry',
  context: outboxEntryLogic.context,
  initial: 'starting',
  states: {
    starting: {
      description: 'Goes where the work the scheduler chose begins.',
      always: [
        { guard: 'startsClaiming', target: 'claiming' },
        { guard: 'startsSending', target: 'sending' },
        { target: 'committing' },
      ],
    },
    claiming: {
      description:
        'Its next attempt is being counted in the store (a claim, written by commitEntry) before it is sent.',
      entry: progressed,
      on: {
        'commit.succeeded': [
          { guard: 'isTakenElsewhere', target: 'released', actions: 'recordTakenElsewhere' },
          { guard: 'isMovedOn', target: 'released', actions: 'recordStoredVersion' },
          { guard: 'isOffline', target: 'released', actions: 'recordClaimedOffline' },
          { target: 'sending', actions: 'recordClaimed' },
        ],
        'commit.failed': { target: 'writeFailed', actions: 'recordWriteFailed' },
        'entry.missing': { target: 'missing', actions: 'recordMissing' },
        'connectivity.changed': { actions: 'recordConnectivity' },
      },
    },
    sending: {
      description: 'The outbox’s sendEntry sends it (one run of the request lifecycle).',
      entry: progressed,
      on: {
        'send.ended': { target: 'committing', actions: 'decideOutcome' },
        'send.skipped': { target: 'released', actions: 'recordSkipped' },
        'entry.missing': { target: 'missing', actions: 'recordMissing' },
      },
    },
    committing: {
      description:
        'The decision (remove, reschedule, dead-letter, revive) is being written (commitEntry); it takes effect once written.',
      entry: progressed,
      on: {
        'commit.succeeded': [
          { guard: 'wroteRemoval', target: 'sent', actions: 'recordWritten' },
          { guard: 'wroteDeadLetter', target: 'deadLettered', actions: 'recordWritten' },
          { guard: 'wroteRevival', target: 'revived', actions: 'recordWritten' },
          { target: 'rescheduled', actions: 'recordWritten' },
        ],
        'commit.failed': { target: 'writeFailed', actions: 'recordWriteFailed' },
        'entry.missing': { target: 'missing', actions: 'recordMissing' },
      },
    },
    sent: settled('sent', 'Sent, and removed from the store: done.'),
    rescheduled: settled('rescheduled', 'Pending again, to be sent at its next attempt time.'),
    deadLettered: settled('deadLettered', 'Dead-lettered: kept in the store for the app.'),
    revived: settled('revived', 'A dead entry back in the queue, attempts reset.'),
    released: settled(
      'released',
      'Back in the queue without a send: another runner holds it or moved it on, or the device went offline.',
    ),
    writeFailed: settled(
      'writeFailed',
      'A store write failed: the store keeps the entry as it was; the outbox holds it off before writing again.',
    ),
    missing: settled(
      'missing',
      'The store no longer has it (another runner finished it, or the app removed it).',
    ),
  },
});
