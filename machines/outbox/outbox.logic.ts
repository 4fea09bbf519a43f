import type {
  ActionStep,
  AssignImpl,
  EmitImpl,
  MachineLogic,
  StepImpl,
} from '../../src/engine/machine-logic.js';
import * as actions from './outbox.actions.js';
import { outboxDelays } from './outbox.delays.js';
import { outboxGuards } from './outbox.guards.js';
import { announceStoreFailure, outboxInputs, outboxParams } from './outbox.io.js';
import type { OutboxMachineContext, OutboxMachineInput } from './outbox.types.js';

type Context = OutboxMachineContext;
type Args = { context: Context };
const change = <P>(run: (args: Args, params: P) => Partial<Context>): AssignImpl<Context> => ({
  kind: 'assign',
  run: run,
});
const step = <P>(run: (args: Args, params: P) => ActionStep<Context>): StepImpl<Context> => ({
  kind: 'step',
  run: run,
});
const announce = <P>(run: (args: Args, params: P) => { type: string }): EmitImpl<Context> => ({
  kind: 'emit',
  run: run,
});

/**
 * Everything the outbox machine does, by name, as plain functions: outbox.machine.ts wraps these for XState,
 * and the lean executor calls them directly through the derived table. Each `step` returns the context
 * changes, the children to start and stop (entries' machines, writes, sends), the events to send to entries'
 * machines, and the events to emit (outbox.actions.ts).
 */
export const outboxLogic = {
  context: ({ input }: { input: OutboxMachineInput }) => actions.initialContext(input),
  guards: outboxGuards,
  delays: outboxDelays,
  actions: {
    recordEnqueued: step(actions.recordEnqueued),
    recordLoaded: step(actions.recordLoaded),
    recordRescanned: step(actions.recordRescanned),
    dispatchDue: step(actions.dispatchDue),
    relayToEntry: step(actions.relayToEntry),
    recordProgress: step(actions.recordProgress),
    recordSettled: step(actions.recordSettled),
    requestRevive: step(actions.requestRevive),
    recordMissing: step(actions.recordMissing),
    recordTime: change(actions.recordTime),
    recordConnectivity: step(actions.recordConnectivity),
    recordFlush: change(actions.recordFlush),
    setWakeTime: change(actions.setWakeTime),
    recordWake: change(actions.recordWake),
    forgetDecisions: change(actions.forgetDecisions),
    /** The queue changed: the `timer` region sets `nextDue` again. */
    rearm: { kind: 'raise', event: { type: 'outbox.rearm' } },
    announceStoreFailure: announce(announceStoreFailure),
  },
  inputs: outboxInputs,
  params: outboxParams,
  outputs: {},
} satisfies MachineLogic<OutboxMachineContext, OutboxMachineInput>;
