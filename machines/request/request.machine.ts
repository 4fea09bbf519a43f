import { and, assign, emit, enqueueActions, not, setup } from 'xstate';
import * as actions from './request.actions.js';
import { requestActors } from './request.actors.js';
import { requestDelays } from './request.delays.js';
import { requestGuards } from './request.guards.js';
import type {
  RequestMachineContext,
  RequestMachineEmitted,
  RequestMachineEvent,
  RequestMachineInput,
  RequestMachineOutput,
} from './request.types.js';
import type { FailReason } from '../../src/policy/failure.js';

/** Ends the request with this reason: through `givingUp`, which defers durable work or fails. */
function giveUp<const R extends FailReason>(reason: R) {
  return { target: '#request.active.givingUp', actions: { type: 'setReason', params: { reason } } } as const;
}

/**
 * One request's lifecycle: choose an origin, attempt, classify the failure, then back off and retry,
 * refresh credentials, reconcile an unknown write, defer, or fail with a reason. Bounded by
 * `policy.attempts.max` (attempts counted across layers) and by the budget timer on `active`.
 * See docs/machines/request.md for the generated diagram.
 */
export const requestMachine = setup({
  types: {
    context: {} as RequestMachineContext,
    input: {} as RequestMachineInput,
    events: {} as RequestMachineEvent,
    emitted: {} as RequestMachineEmitted,
    output: {} as RequestMachineOutput,
  },
  actors: requestActors,
  guards: requestGuards,
  delays: requestDelays,
  actions: {
    startAttempt: assign(actions.startAttempt),
    recordOrigin: assign(actions.recordOrigin),
    recordAttemptResult: assign(actions.recordAttemptResult),
    recordAttemptTimeout: assign(actions.recordAttemptTimeout),
    recordTransportCrash: assign(actions.recordTransportCrash),
    recordAuthRefreshed: assign(actions.recordAuthRefreshed),
    recordReconcileResult: assign(actions.recordReconcileResult),
    startBackoff: assign(actions.startBackoff),
    finishBackoff: assign(actions.finishBackoff),
    recordCancelled: assign(actions.recordCancelled),
    recordDeviceOffline: assign(actions.recordDeviceOffline),
    recordDeviceOnline: assign(actions.recordDeviceOnline),
    recordBudgetExhausted: assign(actions.recordBudgetExhausted),
    setReason: assign(actions.setReason),
    announceAttempt: emit(({ context }) => ({
      type: 'attempt-started' as const,
      attempt: context.attempts,
      origin: context.origin ?? '',
      at: context.attemptStartedAt,
    })),
    announceAttemptResult: enqueueActions(({ context, enqueue }) => {
      const failure = context.failures.at(-1);
      if (context.response) {
        const latencyMs = context.now - context.attemptStartedAt;
        enqueue.emit({
          type: 'attempt-succeeded',
          attempt: context.attempts,
          origin: context.origin ?? '',
          latencyMs,
          at: context.now,
        });
      } else if (failure) {
        enqueue.emit({
          type: 'attempt-failed',
          attempt: context.attempts,
          origin: failure.origin,
          failure,
          at: context.now,
        });
      }
    }),
    // The budget ended the attempt in flight before its own timeout: its end is announced like any other, marked
    // so that it does not count against the origin (which was given less than `attemptMs`).
    announceBudgetCut: emit(({ context }) => ({
      type: 'attempt-failed' as const,
      attempt: context.attempts,
      origin: context.origin ?? '',
      failure: context.failures.at(-1)!,
      at: context.now,
      cutByBudget: true as const,
    })),
    announceRetry: emit(({ context }) => ({
      type: 'retry-scheduled' as const,
      attempt: context.attempts,
      origin: context.origin ?? '',
      delayMs: context.previousDelayMs ?? 0,
      failure: context.failures.at(-1)!,
      at: context.now,
    })),
  },
}).createMachine({
  id: 'request',
  context: ({ input }) => actions.initialContext(input),
  initial: 'active',
  states: {
    active: {
      description: 'In progress; the budget timer bounds every state inside.',
      initial: 'choosingOrigin',
      after: {
        requestBudget: [
          {
            guard: 'hasAttemptInFlight',
            target: '.givingUp',
            actions: [
              'recordBudgetExhausted',
              'announceBudgetCut',
              { type: 'setReason', params: { reason: 'budget-exhausted' } },
            ],
          },
          {
            target: '.givingUp',
            actions: ['recordBudgetExhausted', { type: 'setReason', params: { reason: 'budget-exhausted' } }],
          },
        ],
      },
      on: {
        'request.cancel': { target: 'failed', actions: 'recordCancelled' },
        'connectivity.offline': { actions: 'recordDeviceOffline' },
        'connectivity.online': { actions: 'recordDeviceOnline' },
      },
      states: {
        choosingOrigin: {
          description: 'Picks the origin of the next attempt; a write that may have reached one stays there.',
          invoke: {
            id: 'chooseOrigin',
            src: 'chooseOrigin',
            input: ({ context }) => ({
              requestId: context.requestId,
              origins: context.origins,
              write: context.write,
              attempt: context.attempts + 1,
              previousOrigin: context.origin,
            }),
            onDone: [
              { guard: 'isDeviceOffline', ...giveUp('offline') },
              { guard: 'isPinnedToOrigin', target: 'attempting' },
              {
                guard: 'hasChosenOrigin',
                target: 'attempting',
                actions: { type: 'recordOrigin', params: ({ event }) => event.output },
              },
              giveUp('no-healthy-origin'),
            ],
            onError: giveUp('no-healthy-origin'),
          },
        },
        attempting: {
          description: 'One attempt in flight, bounded by the attempt timeout; leaving aborts it.',
          entry: ['startAttempt', 'announceAttempt'],
          invoke: {
            id: 'transport',
            src: 'transport',
            input: ({ context }) => ({
              requestId: context.requestId,
              origin: context.origin ?? '',
              attempt: context.attempts,
              attemptsMax: context.policy.attempts.max,
              attemptsLeft: context.policy.attempts.max - context.attempts + 1,
              timeoutMs: requestDelays.attemptTimeout({ context }),
              idempotencyKey: context.idempotencyKey,
            }),
            onDone: {
              target: 'evaluating',
              actions: [
                { type: 'recordAttemptResult', params: ({ event }) => event.output },
                'announceAttemptResult',
              ],
            },
            onError: {
              target: 'evaluating',
              actions: [
                { type: 'recordTransportCrash', params: ({ event }) => ({ error: event.error }) },
                'announceAttemptResult',
              ],
            },
          },
          after: {
            attemptTimeout: {
              target: 'evaluating',
              actions: ['recordAttemptTimeout', 'announceAttemptResult'],
            },
          },
        },
        evaluating: {
          description:
            'Decides from the last attempt: done, refresh, reconcile, retry after a wait, or give up.',
          always: [
            { guard: 'isSuccess', target: '#request.succeeded' },
            { guard: and(['isUnauthorized', 'canRefreshAuth']), target: 'refreshingAuth' },
            { guard: 'isUnauthorized', ...giveUp('unauthorized') },
            { guard: 'isOffline', ...giveUp('offline') },
            { guard: not('isRetryableFailure'), ...giveUp('not-retryable') },
            { guard: and([not('isSafeToReplay'), 'canReconcile']), target: 'reconciling' },
            { guard: not('isSafeToReplay'), ...giveUp('unsafe-to-replay') },
            { guard: 'isDeviceOffline', ...giveUp('offline') },
            { guard: not('hasAttemptsLeft'), ...giveUp('attempts-exhausted') },
            { guard: 'retryAfterExceedsBudget', ...giveUp('retry-after-exceeds-budget') },
            { guard: 'fitsInBudget', target: 'claimingRetry' },
            giveUp('budget-exhausted'),
          ],
        },
        givingUp: {
          description: 'Defers durable work that time can mend; fails the rest.',
          always: [
            { guard: and(['isDeferrable', 'canWaitInOutbox']), target: '#request.deferred' },
            { target: '#request.failed' },
          ],
        },
        claimingRetry: {
          description: 'Asks the client-wide retry budget for a slot; without one the request ends at once.',
          invoke: {
            id: 'claimRetry',
            src: 'claimRetry',
            input: ({ context }) => ({ requestId: context.requestId, attempt: context.attempts }),
            onDone: [{ guard: 'isRetryGranted', target: 'backingOff' }, giveUp('retry-budget-exhausted')],
            onError: giveUp('retry-budget-exhausted'),
          },
        },
        backingOff: {
          description: 'Waits the backoff (at least the Retry-After) before the next attempt.',
          entry: ['startBackoff', 'announceRetry'],
          after: { backoffDelay: { target: 'choosingOrigin', actions: 'finishBackoff' } },
          on: {
            // Rule 6: no attempt will start while offline, so waiting on is pointless; end the request now.
            'connectivity.offline': {
              target: 'givingUp',
              actions: ['recordDeviceOffline', { type: 'setReason', params: { reason: 'offline' } }],
            },
          },
        },
        refreshingAuth: {
          description:
            'After a 401: one credential refresh, shared by concurrent requests, then one more attempt.',
          invoke: {
            id: 'refreshAuth',
            src: 'refreshAuth',
            input: ({ context }) => ({
              requestId: context.requestId,
              origin: context.origin ?? '',
              authGeneration: context.authGeneration,
            }),
            onDone: {
              target: 'choosingOrigin',
              actions: { type: 'recordAuthRefreshed', params: ({ event }) => event.output },
            },
            onError: {
              target: 'givingUp',
              actions: { type: 'setReason', params: { reason: 'unauthorized' } },
            },
          },
        },
        reconciling: {
          description: 'Asks the server what became of a keyless write whose outcome is unknown.',
          invoke: {
            id: 'reconcile',
            src: 'reconcile',
            input: ({ context }) => ({
              requestId: context.requestId,
              failure: context.failures.at(-1)!,
              attempts: context.attempts,
            }),
            onDone: [
              {
                guard: 'isApplied',
                target: '#request.succeeded',
                actions: { type: 'recordReconcileResult', params: ({ event }) => event.output },
              },
              {
                guard: 'isNotApplied',
                target: 'evaluating',
                actions: { type: 'recordReconcileResult', params: ({ event }) => event.output },
              },
              giveUp('unsafe-to-replay'),
            ],
            onError: giveUp('unsafe-to-replay'),
          },
        },
      },
    },
    succeeded: {
      type: 'final',
      description: 'A success status, or a write that reconcile found applied.',
      output: ({ context }) =>
        defined({
          status: 'succeeded',
          response: context.response!,
          origin: context.origin ?? '',
          attempts: context.attempts,
          reconciled: context.reconciled || undefined,
        }),
    },
    failed: {
      type: 'final',
      description: 'Ended with a reason; the last failure and response are kept.',
      output: ({ context }) =>
        defined({
          status: 'failed',
          // Every path into `failed` sets a reason; `not-retryable` only guards the type.
          reason:
            context.reason === undefined || context.reason === 'durable' ? 'not-retryable' : context.reason,
          failure: context.failures.at(-1),
          response: context.lastResponse,
          origin: context.origin,
          attempts: context.attempts,
        }),
    },
    deferred: {
      type: 'final',
      description: 'Durable work handed to the outbox.',
      output: ({ context }) =>
        defined({
          status: 'deferred',
          reason: context.reason ?? 'durable',
          failure: context.failures.at(-1),
          failures: context.failures,
          origin: context.origin,
          attempts: context.attempts,
        }),
    },
  },
  // The output of whichever final state was reached.
  output: ({ event }) => event.output as RequestMachineOutput,
});

/** An outcome carries no key whose value is undefined (`'failure' in outcome` means there is one). */
function defined(value: Record<string, unknown>): RequestMachineOutput {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as RequestMachineOutput;
}
