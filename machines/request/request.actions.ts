import {
  cancelledFailure,
  classifyResult,
  networkChangeFailure,
  timeoutFailure,
  transportCrashFailure,
} from '../../src/policy/classify-failure.js';
import { nextBackoff } from '../../src/policy/backoff.js';
import { classifyWithVerdict } from '../../src/policy/classify-verdict.js';
import { planRetryWait, timeLeftMs } from '../../src/policy/budget.js';
import { holdReleaseAt } from '../../src/policy/hold-release.js';
import type { Failure, FailReason } from '../../src/policy/failure.js';
import type {
  AttemptOutput,
  ChooseOriginOutput,
  ReconcileOutput,
  RefreshAuthOutput,
  RequestMachineContext,
  RequestMachineEmitted,
  RequestMachineInput,
} from './request.types.js';

/**
 * The request machine's actions, as pure functions: its context changes, ({ context }, params) -> changes, and
 * what it tells its listeners, ({ context }) -> event. The machine registers each by name (request.logic.ts), so
 * the inspector shows `recordAttemptResult` or `announceRetry`, not `xstate.assign`; the lean executor calls them
 * directly.
 */
type Changes = Partial<RequestMachineContext>;
type Args = { context: RequestMachineContext };

/** No origin failed yet: shared by every context, as a request only ever replaces its list, never adds to it. */
const NO_FAILED_ORIGINS: readonly string[] = Object.freeze([]);

/** Every field is set from the start (some to undefined), so that every context has one shape. */
export function initialContext(input: RequestMachineInput): RequestMachineContext {
  return {
    requestId: input.requestId,
    method: input.method,
    origins: input.origins,
    write: input.write,
    hasIdempotencyKey: input.hasIdempotencyKey ?? false,
    policy: input.policy,
    budgetMs: input.budgetMs,
    startedAt: input.startedAt,
    canRefreshAuth: input.canRefreshAuth,
    canReconcile: input.canReconcile,
    deferrable: input.deferrable,
    random: input.random ?? Math.random,
    deviceOffline: input.deviceOffline ?? false,
    now: input.startedAt,
    attempts: 0,
    attemptStartedAt: input.startedAt,
    inFlight: false,
    changedInFlight: false,
    origin: undefined,
    pinned: false,
    retrying: false,
    failedOrigins: NO_FAILED_ORIGINS,
    holdsRetrySlot: false,
    failures: [],
    lastResponse: undefined,
    response: undefined,
    authRefreshed: false,
    authGeneration: undefined,
    replayCleared: false,
    reconciled: false,
    retries: 0,
    previousDelayMs: undefined,
    plan: undefined,
    reason: undefined,
    holdUntil: undefined,
    holdBy: undefined,
    alternative: undefined,
  };
}

/** The attempt timeout: the policy's, but never past the end of the budget. */
export function attemptTimeoutMs(context: RequestMachineContext): number {
  return Math.min(
    context.policy.timeouts.attemptMs,
    timeLeftMs(context.startedAt, context.budgetMs, context.now),
  );
}

/** What to do after this failure: wait (how long), or stop because of Retry-After or the budget. */
function planAfter(context: RequestMachineContext, failure: Failure, now: number): Changes {
  return { plan: planOf(context, failure, now) };
}

function planOf(context: RequestMachineContext, failure: Failure, now: number): Changes['plan'] {
  const { policy } = context;
  return planRetryWait({
    backoffMs: nextBackoff(policy.backoff, context.retries + 1, context.previousDelayMs, context.random),
    retryAfterMs: failure.retryAfterMs,
    retryAfterMaxMs: policy.retryAfter.maxMs,
    timeLeftMs: timeLeftMs(context.startedAt, context.budgetMs, now),
  });
}

function recordFailure(context: RequestMachineContext, failure: Failure, now: number): Changes {
  return {
    now,
    inFlight: false,
    failures: [...context.failures, failure],
    // reconcile's "not applied" cleared the attempt it was asked about, not this one (rule 2).
    replayCleared: false,
    // A write that may have reached this origin must not be sent anywhere else (rules 2 and 7).
    pinned: context.pinned || (context.write && failure.requestSent !== 'no'),
    // The plan itself, not a spread of planAfter's changes: no object made only to be copied.
    plan: planOf(context, failure, now),
  };
}

export function startAttempt({ context }: Args): Changes {
  return {
    attempts: context.attempts + 1,
    attemptStartedAt: context.now,
    inFlight: true,
    changedInFlight: false,
    retrying: false,
    response: undefined,
  };
}

/** `startAttempt`'s changes, written by name (`AssignImpl.write`): the same six fields every time. */
export function writeStartAttempt(context: RequestMachineContext, changes: Changes): void {
  const c = changes as RequestMachineContext;
  context.attempts = c.attempts;
  context.attemptStartedAt = c.attemptStartedAt;
  context.inFlight = c.inFlight;
  context.changedInFlight = c.changedInFlight;
  context.retrying = c.retrying;
  context.response = c.response;
}

/** A retry is planned after a failure on `origin`: the origin is one this request has seen fail. */
export function recordFailedOrigin({ context }: Args): Changes {
  const { origin, failedOrigins } = context;
  return {
    retrying: true,
    failedOrigins:
      origin === undefined || failedOrigins.includes(origin) ? failedOrigins : [...failedOrigins, origin],
  };
}

/** The retry budget gave this request a slot: it keeps it until it ends (retry-slots.ts). */
export function recordRetrySlot(): Changes {
  return { holdsRetrySlot: true };
}

/** `recordFailedOrigin`'s changes, written by name (`AssignImpl.write`). */
export function writeFailedOrigin(context: RequestMachineContext, changes: Changes): void {
  const c = changes as RequestMachineContext;
  context.retrying = c.retrying;
  context.failedOrigins = c.failedOrigins;
}

/** `recordRetrySlot`'s change, written by name (`AssignImpl.write`). */
export function writeRetrySlot(context: RequestMachineContext, changes: Changes): void {
  context.holdsRetrySlot = (changes as RequestMachineContext).holdsRetrySlot;
}

export function recordOrigin({ context }: Args, output: ChooseOriginOutput): Changes {
  return {
    origin: output.origin,
    now: output.at ?? context.now,
    holdUntil: output.holdUntil,
    holdBy: output.holdBy,
    alternative: output.alternative,
  };
}

/** `recordOrigin`'s changes, written by name (`AssignImpl.write`): the same five fields every time. */
export function writeOrigin(context: RequestMachineContext, changes: Changes): void {
  const c = changes as RequestMachineContext;
  context.origin = c.origin;
  context.now = c.now;
  context.holdUntil = c.holdUntil;
  context.holdBy = c.holdBy;
  context.alternative = c.alternative;
}

/** A pinned request's origin stays; only the hold on it is news. */
export function recordHold({ context }: Args, output: ChooseOriginOutput): Changes {
  return {
    now: output.at ?? context.now,
    holdUntil: output.holdUntil,
    holdBy: output.holdBy,
    alternative: undefined,
  };
}

/**
 * The request will wait for the hold: it is released at a jittered time after a hold others wait out too, so
 * that they do not all come back in one instant (hold-release.ts); a send slot of its own is kept as it is.
 */
export function spreadHoldRelease({ context }: Args): Changes {
  const { holdUntil } = context;
  if (holdUntil === undefined) return {};
  const deadline = context.startedAt + context.budgetMs;
  const { releaseSpreadMs } = context.policy.retryAfter;
  return { holdUntil: holdReleaseAt(holdUntil, context.holdBy, releaseSpreadMs, context.random, deadline) };
}

/** The origin is held longer than the budget allows: the attempt goes to the origin free of holds instead. */
export function takeAlternativeOrigin({ context }: Args): Changes {
  return { origin: context.alternative, holdUntil: undefined, holdBy: undefined, alternative: undefined };
}

/** The hold waited for has ended: the origin is chosen again (health or a new hold may have changed). */
export function finishHold({ context }: Args): Changes {
  return {
    now: Math.max(context.now, context.holdUntil ?? context.now),
    holdUntil: undefined,
    holdBy: undefined,
  };
}

export function recordAttemptResult({ context }: Args, output: AttemptOutput): Changes {
  const now = output.at ?? context.now;
  const origin = context.origin ?? '';
  // Attempts the transport made itself count against attempts.max (rule 1).
  const attempts = context.attempts + Math.max(0, Math.floor(output.attempts ?? 1) - 1);
  const authGeneration = output.authGeneration ?? context.authGeneration;
  const { verdict } = output;
  const failure =
    verdict === undefined
      ? classifyResult(output, origin, { now })
      : classifyWithVerdict(output, verdict, origin, { now }, output.classifyError);
  if (failure === undefined) {
    // An error the app's classify calls a success has no response of its own: the app gets an empty 204.
    const response = output.kind === 'response' ? output.response : new Response(null, { status: 204 });
    return { now, attempts, authGeneration, inFlight: false, response };
  }
  // recordFailure reads no attempt count, so it takes the context as it is (no copy of it); the fresh changes
  // get theirs set in place.
  const changes = recordFailure(context, failure, now);
  changes.attempts = attempts;
  changes.authGeneration = authGeneration;
  changes.lastResponse = output.kind === 'response' ? output.response : context.lastResponse;
  return changes;
}

/**
 * `recordAttemptResult`'s changes, written by name (`AssignImpl.write`): a success's five fields, or a failure's
 * nine (`recordFailure`'s, with the attempt count, the credentials' generation and the last response).
 */
export function writeAttemptResult(context: RequestMachineContext, changes: Changes): void {
  const c = changes as RequestMachineContext;
  context.now = c.now;
  context.attempts = c.attempts;
  context.authGeneration = c.authGeneration;
  context.inFlight = c.inFlight;
  if (c.failures === undefined) {
    context.response = c.response;
    return;
  }
  context.failures = c.failures;
  context.replayCleared = c.replayCleared;
  context.pinned = c.pinned;
  context.plan = c.plan;
  context.lastResponse = c.lastResponse;
}

export function recordAttemptTimeout({ context }: Args): Changes {
  const timeoutMs = attemptTimeoutMs({ ...context, now: context.attemptStartedAt });
  const now = context.attemptStartedAt + timeoutMs;
  return recordFailure(context, timeoutFailure(context.origin ?? '', timeoutMs), now);
}

/** A transport that throws instead of answering may have sent anything, so a write is not replayed blindly. */
export function recordTransportCrash({ context }: Args, { error }: { error: unknown }): Changes {
  return recordFailure(context, transportCrashFailure(context.origin ?? '', error), context.now);
}

export function recordAuthRefreshed({ context }: Args, output: RefreshAuthOutput | undefined): Changes {
  return { authRefreshed: true, now: output?.at ?? context.now };
}

export function recordReconcileResult({ context }: Args, output: ReconcileOutput): Changes {
  const now = output.at ?? context.now;
  if (output.status === 'applied') {
    // The server has the write: its own answer if reconcile brought one, else an empty 204.
    return { now, reconciled: true, response: output.response ?? new Response(null, { status: 204 }) };
  }
  if (output.status === 'not-applied') {
    const failure = context.failures[context.failures.length - 1];
    return { now, replayCleared: true, ...(failure ? planAfter(context, failure, now) : {}) };
  }
  return { now };
}

export function startBackoff({ context }: Args): Changes {
  const delayMs = context.plan?.kind === 'wait' ? context.plan.delayMs : 0;
  return { retries: context.retries + 1, previousDelayMs: delayMs };
}

/** `startBackoff`'s changes, written by name (`AssignImpl.write`). */
export function writeBackoff(context: RequestMachineContext, changes: Changes): void {
  const c = changes as RequestMachineContext;
  context.retries = c.retries;
  context.previousDelayMs = c.previousDelayMs;
}

export function finishBackoff({ context }: Args): Changes {
  return { now: context.now + (context.previousDelayMs ?? 0) };
}

/** `finishBackoff`'s change, written by name (`AssignImpl.write`). */
export function writeNow(context: RequestMachineContext, changes: Changes): void {
  context.now = (changes as RequestMachineContext).now;
}

/**
 * The network changed while an attempt was in flight that goes on (a write): whatever it ends with is marked as
 * having crossed the change, so its origin is not blamed for it.
 */
export function recordChangeInFlight(): Changes {
  return { changedInFlight: true };
}

/**
 * The network changed while a read's attempt was in flight: the attempt is ended now, as lost with its
 * connection (`connection-lost`; a read is replayable, so what reached the server does not matter). It counts
 * as an attempt (rule 1) but plans no backoff: the next attempt starts at once, on the new network.
 */
export function recordNetworkHandover({ context }: Args, { at }: { at: number }): Changes {
  const now = Math.max(context.now, at);
  const failure = networkChangeFailure(context.origin ?? '', now - context.attemptStartedAt);
  return {
    now,
    inFlight: false,
    changedInFlight: true,
    failures: [...context.failures, failure],
    replayCleared: false,
    plan: undefined,
  };
}

export function recordDeviceOffline(): Changes {
  return { deviceOffline: true };
}

export function recordDeviceOnline(): Changes {
  return { deviceOffline: false };
}

export function recordCancelled({ context }: Args): Changes {
  return { reason: 'cancelled', failures: [...context.failures, cancelledFailure(context.origin ?? '')] };
}

export function recordBudgetExhausted({ context }: Args): Changes {
  const now = context.startedAt + context.budgetMs;
  if (!context.inFlight) return { now };
  // The budget ended an attempt in flight: say so, since a write it carried may have been applied.
  const inFlightFor = now - context.attemptStartedAt;
  return Object.assign(recordFailure(context, timeoutFailure(context.origin ?? '', inFlightFor), now), {
    plan: undefined,
  });
}

export function setReason(_: Args, { reason }: { reason: FailReason | 'durable' }): Changes {
  return { reason };
}

// What the machine tells its listeners: each returns the event it emits (or none).

export function announceAttempt({ context }: Args): RequestMachineEmitted {
  return {
    type: 'attempt-started',
    attempt: context.attempts,
    origin: context.origin ?? '',
    at: context.attemptStartedAt,
  };
}

type AttemptFailed = RequestMachineEmitted & { type: 'attempt-failed' };

/**
 * The end of the attempt that just reported, with its failure: every `attempt-failed` is built here. `mark` says
 * why the origin is not to blame for it, when it is not.
 */
function attemptFailed(
  context: RequestMachineContext,
  failure: Failure,
  origin: string,
  mark: 'acrossChange' | 'crashed' | 'cutByBudget' | undefined,
): AttemptFailed {
  const event: AttemptFailed = {
    type: 'attempt-failed',
    attempt: context.attempts,
    origin,
    failure,
    at: context.now,
  };
  if (mark !== undefined) event[mark] = true;
  return event;
}

/** The end of the attempt that just reported: a success, or its failure. */
export function announceAttemptResult({ context }: Args): RequestMachineEmitted | undefined {
  if (context.response) {
    return {
      type: 'attempt-succeeded',
      attempt: context.attempts,
      origin: context.origin ?? '',
      latencyMs: context.now - context.attemptStartedAt,
      at: context.now,
    };
  }
  const failure = context.failures[context.failures.length - 1];
  if (!failure) return undefined;
  return attemptFailed(
    context,
    failure,
    failure.origin,
    context.changedInFlight ? 'acrossChange' : undefined,
  );
}

/**
 * The transport threw rather than report a result: its end is announced like any other, marked so that it does not
 * count against the origin (the fault is in code on the device, not in the origin).
 */
export function announceTransportCrash({ context }: Args): RequestMachineEmitted {
  const failure = context.failures[context.failures.length - 1]!;
  return attemptFailed(context, failure, failure.origin, 'crashed');
}

/**
 * The budget ended the attempt in flight before its own timeout: its end is announced like any other, marked
 * so that it does not count against the origin (which was given less than `attemptMs`).
 */
export function announceBudgetCut({ context }: Args): RequestMachineEmitted {
  return attemptFailed(
    context,
    context.failures[context.failures.length - 1]!,
    context.origin ?? '',
    'cutByBudget',
  );
}

export function announceRetry({ context }: Args): RequestMachineEmitted {
  return {
    type: 'retry-scheduled',
    attempt: context.attempts,
    origin: context.origin ?? '',
    delayMs: context.previousDelayMs ?? 0,
    failure: context.failures[context.failures.length - 1]!,
    at: context.now,
  };
}

/** The next attempt waits for a server's hold on its origin. */
export function announceHoldWait({ context }: Args): RequestMachineEmitted {
  const holdUntil = context.holdUntil ?? context.now;
  return {
    type: 'waiting-for-hold',
    attempt: context.attempts + 1,
    origin: context.origin ?? '',
    delayMs: holdUntil - context.now,
    holdUntil,
    at: context.now,
  };
}
