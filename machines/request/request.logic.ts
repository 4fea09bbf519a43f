import type { AssignImpl, EmitImpl, MachineLogic } from '../../src/engine/machine-logic.js';
import * as actions from './request.actions.js';
import * as emitted from './request.emitted.js';
import { requestDelays } from './request.delays.js';
import { requestGuards } from './request.guards.js';
import { requestInputs, requestOutputs, requestParams } from './request.io.js';
import type { RequestMachineContext, RequestMachineInput } from './request.types.js';

type Context = RequestMachineContext;
type Args = { context: Context };
const change = <P>(run: (args: Args, params: P) => Partial<Context>): AssignImpl<Context> => ({
  kind: 'assign',
  run: run,
});
const announce = (run: (args: Args) => { type: string } | undefined): EmitImpl<Context> => ({
  kind: 'emit',
  run,
});

/**
 * Everything the request machine does, by name, as plain functions: request.machine.ts wraps these for
 * XState, and the lean executor calls them directly through the derived table (request.table.ts).
 */
export const requestLogic = {
  context: ({ input }: { input: RequestMachineInput }) => actions.initialContext(input),
  guards: requestGuards,
  delays: requestDelays,
  actions: {
    startAttempt: change(actions.startAttempt),
    recordFailedOrigin: change(actions.recordFailedOrigin),
    recordRetrySlot: change(actions.recordRetrySlot),
    recordOrigin: change(actions.recordOrigin),
    recordHold: change(actions.recordHold),
    takeAlternativeOrigin: change(actions.takeAlternativeOrigin),
    finishHold: change(actions.finishHold),
    recordAttemptResult: change(actions.recordAttemptResult),
    recordAttemptTimeout: change(actions.recordAttemptTimeout),
    recordTransportCrash: change(actions.recordTransportCrash),
    recordAuthRefreshed: change(actions.recordAuthRefreshed),
    recordReconcileResult: change(actions.recordReconcileResult),
    startBackoff: change(actions.startBackoff),
    finishBackoff: change(actions.finishBackoff),
    recordCancelled: change(actions.recordCancelled),
    recordDeviceOffline: change(actions.recordDeviceOffline),
    recordDeviceOnline: change(actions.recordDeviceOnline),
    recordChangeInFlight: change(actions.recordChangeInFlight),
    recordNetworkHandover: change(actions.recordNetworkHandover),
    recordBudgetExhausted: change(actions.recordBudgetExhausted),
    setReason: change(actions.setReason),
    announceAttempt: announce(emitted.announceAttempt),
    announceAttemptResult: announce(emitted.announceAttemptResult),
    announceTransportCrash: announce(emitted.announceTransportCrash),
    announceBudgetCut: announce(emitted.announceBudgetCut),
    announceRetry: announce(emitted.announceRetry),
    announceHoldWait: announce(emitted.announceHoldWait),
  },
  inputs: requestInputs,
  params: requestParams,
  outputs: requestOutputs,
} satisfies MachineLogic<RequestMachineContext, RequestMachineInput>;
