import type { AssignImpl, MachineLogic, SendParentImpl } from '../../src/engine/machine-logic.js';
import * as actions from './outbox-entry.actions.js';
import { outboxEntryGuards } from './outbox-entry.guards.js';
import type { OutboxEntryMachineContext, OutboxEntryMachineInput } from './outbox-entry.types.js';

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

/**
 * Everything an entry's lifecycle does, by name, as plain functions: outbox-entry.machine.ts wraps these for
 * XState, and the lean executor calls them directly through the derived table.
 */
export const outboxEntryLogic = {
  context: ({ input }: { input: OutboxEntryMachineInput }) => actions.initialEntryContext(input),
  guards: outboxEntryGuards,
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
