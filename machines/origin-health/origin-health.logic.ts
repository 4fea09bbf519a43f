import type { AssignImpl, EmitImpl, MachineLogic } from '../../src/engine/machine-logic.js';
import * as actions from './origin-health.actions.js';
import * as emitted from './origin-health.emitted.js';
import { originHealthDelays } from './origin-health.delays.js';
import { originHealthGuards } from './origin-health.guards.js';
import { originHealthInputs, originHealthParams } from './origin-health.io.js';
import type { OriginHealthContext, OriginHealthInput } from './origin-health.types.js';

type Context = OriginHealthContext;
type Args = { context: Context; event: never };
const change = <P>(run: (args: Args, params: P) => Partial<Context>): AssignImpl<Context> => ({
  kind: 'assign',
  run: run,
});
const announce = <P>(run: (args: Args, params: P) => { type: string }): EmitImpl<Context> => ({
  kind: 'emit',
  run: run,
});

/**
 * Everything the origin-health machine does, by name, as plain functions: origin-health.machine.ts wraps
 * these for XState, and the lean executor calls them directly through the derived table.
 */
export const originHealthLogic = {
  context: ({ input }: { input: OriginHealthInput }) => actions.initialContext(input),
  guards: originHealthGuards,
  delays: originHealthDelays,
  actions: {
    recordPrimaryOutcome: change(actions.recordPrimaryOutcome),
    recordBackupOutcome: change(actions.recordBackupOutcome),
    recordConnectivity: change(actions.recordConnectivity),
    failOver: change(actions.failOver),
    lengthenFailover: change(actions.lengthenFailover),
    failBack: change(actions.failBack),
    startProbing: change(actions.startProbing),
    recordProbe: change(actions.recordProbe),
    passTime: change(actions.passTime),
    startTimer: change(actions.startTimer),
    markChanged: change(actions.markChanged),
    announceChange: announce(emitted.announceChange),
    announceFailover: announce(emitted.announceFailover),
  },
  inputs: originHealthInputs,
  params: originHealthParams,
  outputs: {},
} satisfies MachineLogic<OriginHealthContext, OriginHealthInput>;
