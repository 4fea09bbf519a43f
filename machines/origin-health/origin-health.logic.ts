import type { AssignImpl, EmitImpl, MachineLogic } from '../../src/engine/machine-logic.js';
import * as actions from './origin-health.actions.js';
import { evidenceAfter, isCounted, primaryOf, tripped } from './origin-health.actions.js';
import type {
  OriginHealthContext,
  OriginHealthEvent,
  OriginHealthInput,
  ProbeInput,
  ProbeOutput,
} from './origin-health.types.js';

type Context = OriginHealthContext;
type Args = { context: Context; event: never };
/** `write`: how the lean executor writes the changes by name (`AssignImpl.write`), for every attempt's outcome. */
const change = <P>(
  run: (args: Args, params: P) => Partial<Context>,
  write?: (context: Context, changes: Partial<Context>) => void,
): AssignImpl<Context> => ({ kind: 'assign', run, write });
const announce = <P>(run: (args: Args, params: P) => { type: string }): EmitImpl<Context> => ({
  kind: 'emit',
  run: run,
});

type GuardArgs = { context: Context; event: OriginHealthEvent };
/** Guards, inputs and parameters that read the event or the done event of a probe. */
type EventArgs = { context: Context; event: unknown };
type DelayArgs = { context: Context };

/** The output of the probe whose done event is being handled. */
const probeOf = (event: unknown) => (event as { output: ProbeOutput }).output;

const onPrimary = (context: Context, event: OriginHealthEvent) =>
  'origin' in event && event.origin === primaryOf(context);

/**
 * Everything the origin-health machine does, by name, as plain functions: origin-health.machine.ts wraps
 * these for XState, and the lean executor calls them directly through the derived table. The context
 * updates and announcements are in origin-health.actions.ts; the one actor, the probe, which the runner
 * provides, in origin-health.actors.ts.
 */
export const originHealthLogic = {
  context: ({ input }: { input: OriginHealthInput }) => actions.initialContext(input),
  /** Each guard reads only context and the event. */
  guards: {
    /**
     * A counted failure of the primary trips a failover criterion (TLS, consecutive failures or the failure
     * ratio), and there is a backup to fail over to: with one origin there is nothing to switch to.
     */
    tripsFailover: ({ context, event }: GuardArgs) =>
      onPrimary(context, event) && context.origins.length > 1 && tripped(context, event) !== undefined,
    /** A counted failure of the primary makes `suspectAfter` in a row. */
    makesSuspect: ({ context, event }: GuardArgs) =>
      onPrimary(context, event) &&
      isCounted(context, event) &&
      context.evidence.consecutiveFailures + 1 >= context.policy.health.suspectAfter,
    /** A success of the primary makes `recoverAfter` in a row. */
    recovers: ({ context, event }: GuardArgs) =>
      onPrimary(context, event) &&
      event.type === 'attempt.succeeded' &&
      evidenceAfter(context, event).consecutiveSuccesses >= context.policy.health.recoverAfter,
    /** The probe told nothing: the device was offline (or connectivity says so). Neither success nor failure. */
    probeInconclusive: ({ context, event }: EventArgs) =>
      !context.online || probeOf(event).failureClass === 'offline',
    /** This successful probe makes `probeSuccesses` in a row: traffic may fail back. */
    probesSucceeded: ({ context, event }: EventArgs) =>
      probeOf(event).ok && context.probeSuccesses + 1 >= context.policy.health.probeSuccesses,
    probeSucceeded: ({ event }: EventArgs) => probeOf(event).ok,
    /** Connectivity says offline: a probe that failed then tells nothing about the origin. */
    isDeviceOffline: ({ context }: EventArgs) => !context.online,
  },
  /** The machine's waits, each from context and policy (never a literal in the config). */
  delays: {
    /** The failed-over time in force: the failover dwell (`minFailedOverMs`, doubled on flapping), or the wait after a failed probe. */
    failedOverTime: ({ context }: DelayArgs) => context.failedOverMs,
    probeInterval: ({ context }: DelayArgs) => context.policy.health.probeIntervalMs,
    probeTimeout: ({ context }: DelayArgs) => context.policy.health.probeTimeoutMs,
  },
  actions: {
    recordPrimaryOutcome: change(actions.recordPrimaryOutcome, actions.writePrimaryOutcome),
    recordBackupOutcome: change(actions.recordBackupOutcome, actions.writeBackupOutcome),
    recordConnectivity: change(actions.recordConnectivity),
    failOver: change(actions.failOver),
    lengthenFailover: change(actions.lengthenFailover),
    failBack: change(actions.failBack),
    startProbing: change(actions.startProbing),
    recordProbe: change(actions.recordProbe),
    passTime: change(actions.passTime),
    startTimer: change(actions.startTimer),
    markChanged: change(actions.markChanged),
    announceChange: announce(actions.announceChange),
    announceFailover: announce(actions.announceFailover),
  },
  /** Invocation inputs, named so that both runners call the same functions. */
  inputs: {
    probe: ({ context }: EventArgs): ProbeInput => ({ origin: primaryOf(context) }),
  },
  /** The parameters actions take from the event or the context, named so that the derived table can refer to them. */
  params: {
    /** The probe's result. */
    probeOutput: ({ event }: EventArgs): ProbeOutput => probeOf(event),
    /** The probe's result, counted as no success: it told nothing (the device was offline). */
    inconclusiveProbe: ({ event }: EventArgs): ProbeOutput => ({ ...probeOf(event), ok: false }),
    /** How long `failedOver` lasted when its timer fired. */
    failedOverTime: ({ context }: EventArgs) => ({ ms: context.failedOverMs }),
    probeTimeout: ({ context }: EventArgs) => ({ ms: context.policy.health.probeTimeoutMs }),
    probeInterval: ({ context }: EventArgs) => ({ ms: context.policy.health.probeIntervalMs }),
  },
  outputs: {},
} satisfies MachineLogic<OriginHealthContext, OriginHealthInput>;
