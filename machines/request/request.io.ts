import { MachineError } from '../../src/errors/machine-error.js';
import { isSafeMethod } from '../../src/policy/methods.js';
import { attemptTimeoutMs } from './request.actions.js';
import type {
  AttemptInput,
  ChooseOriginInput,
  ChooseOriginOutput,
  ClaimRetryInput,
  ClaimRetryOutput,
  ReconcileInput,
  ReconcileOutput,
  RefreshAuthInput,
  RequestMachineContext,
  RequestMachineOutput,
} from './request.types.js';

/**
 * What flows in and out of the request machine besides its events: the inputs of the actors it invokes, the
 * parameters its actions take from an event, the outputs of its final states, and what its actors do when whoever
 * runs it provides none. Named, so that both runners (XState and the lean executor) call the same functions and
 * the derived table can refer to them.
 */
type Args = { context: RequestMachineContext };
type EventArgs = { event: unknown };

const NONE: readonly string[] = Object.freeze([]);

export const requestInputs = {
  chooseOrigin: ({ context }: Args): ChooseOriginInput => ({
    requestId: context.requestId,
    origins: context.origins,
    write: context.write,
    attempt: context.attempts + 1,
    previousOrigin: context.origin,
    pinned: context.pinned,
    // Only a read's retry goes elsewhere; a write goes where the health machine names (or stays, if pinned).
    avoid: context.retrying && !context.write && isSafeMethod(context.method) ? context.failedOrigins : NONE,
    deadline: context.startedAt + context.budgetMs,
    // Read only when there is a failure: index -1 of an empty array is a missing property, costly on Hermes.
    retryAfterMs:
      context.attempts > 0 ? context.failures[context.failures.length - 1]?.retryAfterMs : undefined,
  }),
  transport: ({ context }: Args): AttemptInput => ({
    requestId: context.requestId,
    origin: context.origin ?? '',
    attempt: context.attempts,
    attemptsMax: context.policy.attempts.max,
    attemptsLeft: context.policy.attempts.max - context.attempts + 1,
    timeoutMs: attemptTimeoutMs(context),
  }),
  claimRetry: ({ context }: Args): ClaimRetryInput => ({
    requestId: context.requestId,
    attempt: context.attempts,
  }),
  refreshAuth: ({ context }: Args): RefreshAuthInput => ({
    requestId: context.requestId,
    origin: context.origin ?? '',
    authGeneration: context.authGeneration,
  }),
  reconcile: ({ context }: Args): ReconcileInput => ({
    requestId: context.requestId,
    failure: context.failures[context.failures.length - 1]!,
    attempts: context.attempts,
  }),
};

/**
 * What the request machine's actors do when whoever runs it provides none, as plain functions:
 * request.machine.ts wraps them for XState, and the lean runtime calls them directly.
 */
export const requestEffectDefaults = {
  /** The transport must be provided. */
  transport: (): never => {
    throw new MachineError(
      'requestMachine: provide a `transport` actor with requestMachine.provide({ actors })',
    );
  },
  /** Takes the first origin, passing over those a retried read avoids when another is left. */
  chooseOrigin: (input: ChooseOriginInput): ChooseOriginOutput => ({
    origin: input.origins.find((origin) => !(input.avoid ?? []).includes(origin)) ?? input.origins[0],
  }),
  /** Grants every retry. */
  claimRetry: (): ClaimRetryOutput => ({ granted: true }),
  /** Fails: no auth configured. */
  refreshAuth: (): never => {
    throw new MachineError('requestMachine: no `refreshAuth` actor provided');
  },
  /** Cannot tell. */
  reconcile: (): ReconcileOutput => ({ status: 'unknown' }),
};

export const requestParams = {
  /** The output of the invoked actor whose done event is being handled. */
  actorOutput: ({ event }: EventArgs) => (event as { output: never }).output,
  /** When the network changed, from a `connectivity.changed` event. */
  changedAt: ({ event }: EventArgs) => ({ at: (event as { at: number }).at }),
  /** The error of the invoked actor whose error event is being handled. */
  actorError: ({ event }: EventArgs) => ({ error: (event as { error: unknown }).error }),
};

export const requestOutputs = {
  // Each output is built with its defined keys only (`'failure' in outcome` means there is one): no object with
  // undefined values made only to be copied without them.
  succeeded: ({ context }: Args) => {
    const out: Record<string, unknown> = { status: 'succeeded' };
    if (context.response !== undefined) out.response = context.response;
    out.origin = context.origin ?? '';
    out.attempts = context.attempts;
    if (context.reconciled) out.reconciled = context.reconciled;
    return out as RequestMachineOutput;
  },
  failed: ({ context }: Args) => {
    const out: Record<string, unknown> = {
      status: 'failed',
      // Every path into `failed` sets a reason; `not-retryable` only guards the type.
      reason: context.reason === undefined || context.reason === 'durable' ? 'not-retryable' : context.reason,
    };
    const failure = context.failures[context.failures.length - 1];
    if (failure !== undefined) out.failure = failure;
    if (context.lastResponse !== undefined) out.response = context.lastResponse;
    if (context.origin !== undefined) out.origin = context.origin;
    out.attempts = context.attempts;
    if (
      (context.reason === 'retry-after-exceeds-budget' || context.reason === 'throttled') &&
      context.holdUntil !== undefined
    )
      out.holdUntil = context.holdUntil;
    return out as RequestMachineOutput;
  },
  deferred: ({ context }: Args) => {
    const out: Record<string, unknown> = { status: 'deferred', reason: context.reason ?? 'durable' };
    const failure = context.failures[context.failures.length - 1];
    if (failure !== undefined) out.failure = failure;
    out.failures = context.failures;
    if (context.origin !== undefined) out.origin = context.origin;
    out.attempts = context.attempts;
    return out as RequestMachineOutput;
  },
  /** The machine's output: that of whichever final state was reached. */
  machine: ({ event }: EventArgs) => (event as { output: RequestMachineOutput }).output,
};
