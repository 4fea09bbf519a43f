import type { OutboxEntryMachineContext, OutboxEntryMachineEvent } from './outbox-entry.types.js';

/** The entry lifecycle's questions, as pure functions, named for the inspector and the diagram. */
type Args = { context: OutboxEntryMachineContext; event: OutboxEntryMachineEvent };
type Answer = Extract<OutboxEntryMachineEvent, { type: 'commit.succeeded' }>;

const op = ({ context }: Args) => context.commit?.op;

export const outboxEntryGuards = {
  /** The scheduler chose to count an attempt first. */
  startsClaiming: ({ context }: Args) => context.entry.status === 'claiming',
  /** The scheduler chose to send an attempt the store counts already. */
  startsSending: ({ context }: Args) => context.entry.status === 'sending',
  /** The claim did not apply: another runner holds the entry, or an earlier one of its group. */
  isTakenElsewhere: ({ event }: Args) => (event as Answer).takenUntil !== undefined,
  /** The claim did not apply: the store's entry is not the one this runner knew (another runner moved it on). */
  isMovedOn: ({ event }: Args) => (event as Answer).stored !== undefined,
  /** The device went offline while the attempt was being counted. */
  isOffline: ({ context }: Args) => !context.online,
  /** The write in the store was the entry's removal: it was sent. */
  wroteRemoval: (args: Args) => op(args) === 'remove',
  wroteDeadLetter: (args: Args) => op(args) === 'dead-letter',
  wroteRevival: (args: Args) => op(args) === 'revive',
};
