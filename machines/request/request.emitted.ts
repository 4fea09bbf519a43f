import type { RequestMachineContext, RequestMachineEmitted } from './request.types.js';

/**
 * What the request machine tells its listeners, as plain functions of its context: the machine registers each
 * as a named action (so the inspector shows `announceRetry`), and the lean executor calls them directly.
 */
type Args = { context: RequestMachineContext };

export function announceAttempt({ context }: Args): RequestMachineEmitted {
  return {
    type: 'attempt-started',
    attempt: context.attempts,
    origin: context.origin ?? '',
    at: context.attemptStartedAt,
  };
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
  const event: RequestMachineEmitted & { type: 'attempt-failed' } = {
    type: 'attempt-failed',
    attempt: context.attempts,
    origin: failure.origin,
    failure,
    at: context.now,
  };
  if (context.changedInFlight) event.acrossChange = true;
  return event;
}

/**
 * The transport threw rather than report a result: its end is announced like any other, marked so that it does not
 * count against the origin (the fault is in code on the device, not in the origin).
 */
export function announceTransportCrash({ context }: Args): RequestMachineEmitted {
  const failure = context.failures[context.failures.length - 1]!;
  return {
    type: 'attempt-failed',
    attempt: context.attempts,
    origin: failure.origin,
    failure,
    at: context.now,
    crashed: true,
  };
}

/**
 * The budget ended the attempt in flight before its own timeout: its end is announced like any other, marked
 * so that it does not count against the origin (which was given less than `attemptMs`).
 */
export function announceBudgetCut({ context }: Args): RequestMachineEmitted {
  return {
    type: 'attempt-failed',
    attempt: context.attempts,
    origin: context.origin ?? '',
    failure: context.failures[context.failures.length - 1]!,
    at: context.now,
    cutByBudget: true,
  };
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
