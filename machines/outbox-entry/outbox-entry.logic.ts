import type { AssignImpl, MachineLogic, SendParentImpl } from '../../src/engine/machine-logic.js';
import * as actions from './outbox-entry.actions.js';
import type {
  OutboxEntryMachineContext,
  OutboxEntryMachineEvent,
  OutboxEntryMachineInput,
} from './outbox-entry.types.js';

type Context = OutboxEntryMachineContext;
type Args = { context: Context; event: never };
const change = <P>(run: (args: Args, params: P) => Partial<Context>): AssignImpl<Context> => ({
  kind: 'assign',
  run: run,
});
const report = <P>(run: (args: Args, params: P) => { type: string }): SendParentImpl<Context> => ({
  kind: 'sendParent',
  run: run,
});

type GuardArgs = { context: Context; event: OutboxEntryMachineEvent };
type Answer = Extract<OutboxEntryMachineEvent, { type: 'commit.succeeded' }>;
const op = ({ context }: GuardArgs) => context.commit?.op;

/**
 * Everything an entry's lifecycle does, by name, as plain functions: outbox-entry.machine.ts wraps these for
 * XState, and the lean executor calls them directly through the derived table. The actions it names are in
 * outbox-entry.actions.ts.
 */
export const outboxEntryLogic = {
  context: ({ input }: { input: OutboxEntryMachineInput }) => actions.initialEntryContext(input),
  /** The lifecycle's questions, named for the inspector and the diagram. */
  guards: {
    /** The scheduler chose to count an attempt first. */
    startsClaiming: ({ context }: GuardArgs) => context.entry.status === 'claiming',
    /** The scheduler chose to send an attempt the store counts already. */
    startsSending: ({ context }: GuardArgs) => context.entry.status === 'sending',
    /** The claim did not apply: another runner holds the entry, or an earlier one of its group. */
    isTakenElsewhere: ({ event }: GuardArgs) => (event as Answer).takenUntil !== undefined,
    /** The claim did not apply: the store's entry is not the one this runner knew (another runner moved it on). */
    isMovedOn: ({ event }: GuardArgs) => (event as Answer).stored !== undefined,
    /** The device went offline while the attempt was being counted. */
    isOffline: ({ context }: GuardArgs) => !context.online,
    /** The write in the store was the entry's removal: it was sent. */
    wroteRemoval: (args: GuardArgs) => op(args) === 'remove',
    wroteDeadLetter: (args: GuardArgs) => op(args) === 'dead-letter',
    wroteRevival: (args: GuardArgs) => op(args) === 'revive',
  },
  delays: {},
  actions: {
    recordTakenElsewhere: change(actions.recordTakenElsewhere),
    recordStoredVersion: change(actions.recordStoredVersion),
    recordClaimedOffline: change(actions.recordClaimedOffline),
    recordClaimed: change(actions.recordClaimed),
    decideOutcome: change(actions.decideOutcome),
    recordSkipped: change(actions.recordSkipped),
    recordWritten: change(actions.recordWritten),
    recordWriteFailed: change(actions.recordWriteFailed),
    recordMissing: change(actions.recordMissing),
    recordConnectivity: change(actions.recordConnectivity),
    clearWrote: change(actions.clearWrote),
    reportProgress: report(actions.reportProgress),
    reportSettled: report(actions.reportSettled),
  },
  inputs: {},
  params: {},
  outputs: {},
} satisfies MachineLogic<OutboxEntryMachineContext, OutboxEntryMachineInput>;
