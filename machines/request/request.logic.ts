import type { AssignImpl, EmitImpl, MachineLogic } from '../../src/engine/machine-logic.js';
import { timeLeftMs } from '../../src/policy/budget.js';
import type { Failure } from '../../src/policy/failure.js';
import { isMendable } from '../../src/policy/mendable.js';
import { isSafeMethod, mayReplay } from '../../src/policy/methods.js';
import { isRetryableFailure } from '../../src/policy/retryable.js';
import { holdEndsWithinBudget } from '../../src/policy/server-hold.js';
import * as actions from './request.actions.js';
import { requestInputs, requestOutputs, requestParams } from './request.io.js';
import type {
  ChooseOriginOutput,
  ClaimRetryOutput,
  ReconcileOutput,
  RequestMachineContext,
  RequestMachineEmitted,
  RequestMachineInput,
} from './request.types.js';

/**
 * The request machine's logic: its guards and delays, defined here, and the one object that names everything
 * the machine does (`requestLogic`), which request.machine.ts gives setup() and the lean executor runs through
 * the derived table (request.table.ts). The actions are in request.actions.ts; the actors' inputs, the actions'
 * parameters, the outputs and the actors' defaults in request.io.ts.
 */
type Args = { context: RequestMachineContext };
/** These guards read the output of the invoked actor whose done event is being handled. */
const outputOf = <T>(event: unknown) => (event as { output: T }).output;

const lastFailure = (context: RequestMachineContext): Failure | undefined =>
  context.failures[context.failures.length - 1];

/**
 * The request machine's questions, as pure functions of its context, so that they can be tested
 * without an actor and read by name in the inspector and the generated diagram.
 */
export const requestGuards = {
  /** The last attempt got a success status. */
  isSuccess: ({ context }: Args) => context.response !== undefined,
  /** The last attempt was answered 401. */
  isUnauthorized: ({ context }: Args) => lastFailure(context)?.class === 'unauthorized',
  /** An auth refresh exists, has not run for this request yet, and an attempt is left after it (rule 3). */
  canRefreshAuth: ({ context }: Args) =>
    context.canRefreshAuth && !context.authRefreshed && context.attempts < context.policy.attempts.max,
  /** The device reported no network: nothing was sent and retrying now is pointless (rule 6). */
  isOffline: ({ context }: Args) => lastFailure(context)?.class === 'offline',
  /** The connectivity source's latest hint is offline: no new attempt starts until it is online (rule 6). */
  isDeviceOffline: ({ context }: Args) => context.deviceOffline,
  /**
   * The failure's class or status is one the policy retries (rule 4). A TLS failure is retried only when there
   * is another origin: it fails traffic over at once, so the next attempt goes elsewhere.
   */
  isRetryableFailure: ({ context }: Args) => {
    const failure = lastFailure(context);
    return (
      failure !== undefined &&
      (isRetryableFailure(failure, context.policy, {
        hasIdempotencyKey: context.hasIdempotencyKey,
      }) ||
        (failure.class === 'tls' && context.origins.length > 1))
    );
  },
  /** Sending again cannot apply a write twice: not a write, nothing sent, a key, or reconcile said so (rule 2). */
  isSafeToReplay: ({ context }: Args) => {
    const failure = lastFailure(context);
    return (
      failure === undefined ||
      context.replayCleared ||
      mayReplay(failure, { write: context.write, hasIdempotencyKey: context.hasIdempotencyKey })
    );
  },
  canReconcile: ({ context }: Args) => context.canReconcile,
  /**
   * The request only reads: a safe method (GET, HEAD, OPTIONS, TRACE) that the request did not declare a write.
   * A PUT or DELETE may be replayed (rule 2), but it changes state: one cut mid-flight has an unknown outcome.
   */
  isRead: ({ context }: Args) => !context.write && isSafeMethod(context.method),
  /**
   * The retry may go to another origin instead of the one that failed it (rule 7, Envoy's `previous_hosts`): a
   * read, with more than one origin. Its next choice of origin passes over those that failed it when another
   * may take it, so it claims from the retry budget only if it goes back to one of them (`needsRetrySlot`).
   */
  mayRetryElsewhere: ({ context }: Args) =>
    !context.write && isSafeMethod(context.method) && context.origins.length > 1,
  /**
   * The attempt about to start is a retry to an origin that already failed this request, and the request holds
   * no slot of the retry budget yet: the budget bounds retries against a failing origin, and only those.
   */
  needsRetrySlot: ({ context }: Args) =>
    context.retrying &&
    !context.holdsRetrySlot &&
    context.origin !== undefined &&
    context.failedOrigins.includes(context.origin),
  /** An attempt has started and not reported yet. */
  hasAttemptInFlight: ({ context }: Args) => context.inFlight,
  /** The client-wide retry budget has a slot for this retry (`policy.retryBudget`). */
  isRetryGranted: ({ event }: { event: unknown }) => outputOf<ClaimRetryOutput>(event).granted,
  hasAttemptsLeft: ({ context }: Args) => context.attempts < context.policy.attempts.max,
  /** The server's Retry-After is longer than the policy will wait or than the budget has left (rule 5). */
  retryAfterExceedsBudget: ({ context }: Args) => context.plan?.kind === 'retry-after-exceeds-budget',
  /** The next wait ends with time left for an attempt. */
  fitsInBudget: ({ context }: Args) => context.plan?.kind === 'wait',
  /**
   * The server's Retry-After is past the budget, but the request may take its next attempt elsewhere: it is not
   * pinned to the origin (rules 2 and 7), there is another, and time is left. Its next choice of
   * origin meets the hold and takes another origin if one is free, else ends `retry-after-exceeds-budget`.
   */
  mayTryAnotherOrigin: ({ context }: Args) =>
    !context.pinned &&
    context.origins.length > 1 &&
    timeLeftMs(context.startedAt, context.budgetMs, context.now) > 0,
  /** A server hold (429/503 with Retry-After) is in force on the origin of the next attempt. */
  isOriginHeld: ({ context }: Args) => context.holdUntil !== undefined && context.holdUntil > context.now,
  /** The hold ends with time left in the budget for the attempt, so the request waits for it. */
  holdEndsInBudget: ({ context }: Args) =>
    context.holdUntil !== undefined &&
    holdEndsWithinBudget(context.holdUntil, context.startedAt, context.budgetMs),
  /**
   * The wait is for a send slot (the origin's `RateLimit` quota, or the client's send rate to it), not a
   * server's Retry-After: a request that cannot wait for it ends `throttled`.
   */
  isThrottled: ({ context }: Args) => context.holdBy !== undefined,
  /** Another origin, free of holds, may take the attempt, and the request is not pinned to its origin. */
  hasAlternativeOrigin: ({ context }: Args) => !context.pinned && context.alternative !== undefined,
  /** Durable work goes to the outbox where interactive work would fail. */
  isDeferrable: ({ context }: Args) => context.deferrable,
  /** The reason is one that time or connectivity can mend, so the outbox may try again later. */
  canWaitInOutbox: ({ context }: Args) => isMendable(context.reason),
  /** A write that may have reached its origin stays on it (rules 2 and 7). */
  isPinnedToOrigin: ({ context }: Args) => context.pinned && context.origin !== undefined,
  /** `chooseOrigin` named an origin. */
  hasChosenOrigin: ({ event }: { event: unknown }) =>
    outputOf<ChooseOriginOutput>(event).origin !== undefined,
  /** `reconcile` found the write applied. */
  isApplied: ({ event }: { event: unknown }) => outputOf<ReconcileOutput>(event).status === 'applied',
  /** `reconcile` found the write not applied: sending it again is safe. */
  isNotApplied: ({ event }: { event: unknown }) => outputOf<ReconcileOutput>(event).status === 'not-applied',
};

/** The request machine's waits, each computed from context (never a literal in the config). */
export const requestDelays = {
  /** The whole request's budget, armed once when the request starts: the hard time bound (rule 1). */
  requestBudget: ({ context }: Args) => timeLeftMs(context.startedAt, context.budgetMs, context.now),
  /** One attempt's timeout, clipped to the budget left. */
  attemptTimeout: ({ context }: Args) => actions.attemptTimeoutMs(context),
  /** The planned wait before the next attempt: jittered backoff, at least the server's Retry-After. */
  backoffDelay: ({ context }: Args) => context.previousDelayMs ?? 0,
  /** The rest of a server's hold on the origin of the next attempt. */
  holdDelay: ({ context }: Args) => Math.max(0, (context.holdUntil ?? context.now) - context.now),
};

type Context = RequestMachineContext;
/**
 * A context change, registered as a named `assign`; `write`: how the lean executor writes its changes by name
 * (`AssignImpl.write`), for the actions on every request's path.
 */
const change = <P>(
  run: (args: Args, params: P) => Partial<Context>,
  write?: (context: Context, changes: Partial<Context>) => void,
): AssignImpl<Context> => ({ kind: 'assign', run, write });
/**
 * An event for the machine's listeners (or none), registered as a named action that emits it; `type`: the one type
 * it always emits, so that a run nobody hears it from skips it (`EmitImpl.type`).
 */
const announce = (
  run: (args: Args) => { type: string } | undefined,
  type?: RequestMachineEmitted['type'],
): EmitImpl<Context> => ({ kind: 'emit', run, type });

/**
 * Everything the request machine does, by name, as plain functions: request.machine.ts wraps these for
 * XState, and the lean executor calls them directly through the derived table (request.table.ts).
 */
export const requestLogic = {
  context: ({ input }: { input: RequestMachineInput }) => actions.initialContext(input),
  guards: requestGuards,
  delays: requestDelays,
  actions: {
    startAttempt: change(actions.startAttempt, actions.writeStartAttempt),
    recordFailedOrigin: change(actions.recordFailedOrigin, actions.writeFailedOrigin),
    recordRetrySlot: change(actions.recordRetrySlot, actions.writeRetrySlot),
    recordOrigin: change(actions.recordOrigin, actions.writeOrigin),
    recordHold: change(actions.recordHold),
    takeAlternativeOrigin: change(actions.takeAlternativeOrigin),
    spreadHoldRelease: change(actions.spreadHoldRelease),
    finishHold: change(actions.finishHold),
    recordAttemptResult: change(actions.recordAttemptResult, actions.writeAttemptResult),
    recordAttemptTimeout: change(actions.recordAttemptTimeout),
    recordTransportCrash: change(actions.recordTransportCrash),
    recordAuthRefreshed: change(actions.recordAuthRefreshed),
    recordReconcileResult: change(actions.recordReconcileResult),
    startBackoff: change(actions.startBackoff, actions.writeBackoff),
    finishBackoff: change(actions.finishBackoff, actions.writeNow),
    recordCancelled: change(actions.recordCancelled),
    recordDeviceOffline: change(actions.recordDeviceOffline),
    recordDeviceOnline: change(actions.recordDeviceOnline),
    recordChangeInFlight: change(actions.recordChangeInFlight),
    recordNetworkHandover: change(actions.recordNetworkHandover),
    recordBudgetExhausted: change(actions.recordBudgetExhausted),
    setReason: change(actions.setReason),
    announceAttempt: announce(actions.announceAttempt, 'attempt-started'),
    announceAttemptResult: announce(actions.announceAttemptResult),
    announceTransportCrash: announce(actions.announceTransportCrash),
    announceBudgetCut: announce(actions.announceBudgetCut),
    announceRetry: announce(actions.announceRetry, 'retry-scheduled'),
    announceHoldWait: announce(actions.announceHoldWait, 'waiting-for-hold'),
  },
  inputs: requestInputs,
  params: requestParams,
  outputs: requestOutputs,
} satisfies MachineLogic<RequestMachineContext, RequestMachineInput>;
