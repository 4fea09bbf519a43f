import { and, fromPromise, not, setup } from 'xstate';
import { xstateActions } from '../../src/engine/machine-logic.js';
import { requestEffectDefaults, requestInputs, requestOutputs, requestParams } from './request.io.js';
import { requestLogic } from './request.logic.js';
import type {
  AttemptInput,
  AttemptOutput,
  ChooseOriginInput,
  ChooseOriginOutput,
  ClaimRetryInput,
  ClaimRetryOutput,
  ReconcileInput,
  ReconcileOutput,
  RefreshAuthInput,
  RefreshAuthOutput,
  RequestMachineContext,
  RequestMachineEmitted,
  RequestMachineEvent,
  RequestMachineInput,
  RequestMachineOutput,
} from './request.types.js';
import type { FailReason } from '../../src/policy/failure.js';

/**
 * The request machine's effects. The machine never does I/O itself: whoever runs it provides these
 * with `requestMachine.provide({ actors: { ... } })` (the failwise runtime does, and so can an app).
 * Each gets an AbortSignal that fires when the state that invoked it is left. These are XState's wrappers of
 * the defaults in request.io.ts, kept here so that the lean executor's bundle never loads XState.
 */
const requestActors = {
  /** One attempt. Must resolve with a `TransportResult` (plus optional `at` stamp); never reject for a network failure. */
  transport: fromPromise<AttemptOutput, AttemptInput>(() =>
    Promise.resolve().then(requestEffectDefaults.transport),
  ),
  /** Names the origin of the next attempt; the default takes the first origin. */
  chooseOrigin: fromPromise<ChooseOriginOutput, ChooseOriginInput>(({ input }) =>
    Promise.resolve(requestEffectDefaults.chooseOrigin(input)),
  ),
  /** Asks the client-wide retry budget for a slot before a retry (`policy.retryBudget`). The default grants it. */
  claimRetry: fromPromise<ClaimRetryOutput, ClaimRetryInput>(() =>
    Promise.resolve(requestEffectDefaults.claimRetry()),
  ),
  /** Refreshes credentials after a 401 (rule 3). The default fails: no auth configured. */
  refreshAuth: fromPromise<RefreshAuthOutput, RefreshAuthInput>(() =>
    Promise.resolve().then(requestEffectDefaults.refreshAuth),
  ),
  /** Asks the server what became of a write whose outcome is unknown. The default cannot tell. */
  reconcile: fromPromise<ReconcileOutput, ReconcileInput>(() =>
    Promise.resolve(requestEffectDefaults.reconcile()),
  ),
};

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
  guards: requestLogic.guards,
  delays: requestLogic.delays,
  actions: xstateActions(requestLogic.actions),
}).createMachine({
  id: 'request',
  context: requestLogic.context,
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
            input: requestInputs.chooseOrigin,
            onDone: [
              { guard: 'isDeviceOffline', ...giveUp('offline') },
              {
                guard: 'isPinnedToOrigin',
                target: 'checkingHold',
                actions: { type: 'recordHold', params: requestParams.actorOutput },
              },
              {
                guard: 'hasChosenOrigin',
                target: 'checkingHold',
                actions: { type: 'recordOrigin', params: requestParams.actorOutput },
              },
              giveUp('no-healthy-origin'),
            ],
            onError: giveUp('no-healthy-origin'),
          },
        },
        checkingHold: {
          description:
            "Honours a hold on the origin (a server's 429/503 Retry-After, heard by the whole client, or a send slot of its RateLimit quota or the client's send rate): wait for it, take another origin, or end.",
          always: [
            { guard: not('isOriginHeld'), target: 'checkingRetrySlot' },
            { guard: 'holdEndsInBudget', target: 'holding', actions: 'spreadHoldRelease' },
            { guard: 'hasAlternativeOrigin', target: 'checkingRetrySlot', actions: 'takeAlternativeOrigin' },
            { guard: 'isThrottled', ...giveUp('throttled') },
            giveUp('retry-after-exceeds-budget'),
          ],
        },
        checkingRetrySlot: {
          description:
            'A retry that goes back to an origin that already failed the request first needs a slot of the retry budget; any other attempt starts now.',
          always: [{ guard: 'needsRetrySlot', target: 'claimingRetrySlot' }, { target: 'attempting' }],
        },
        claimingRetrySlot: {
          description:
            'Asks the client-wide retry budget for a slot for a retry to an origin that already failed the request; without one the request ends.',
          invoke: {
            id: 'claimRetry',
            src: 'claimRetry',
            input: requestInputs.claimRetry,
            onDone: [
              { guard: 'isRetryGranted', target: 'attempting', actions: 'recordRetrySlot' },
              giveUp('retry-budget-exhausted'),
            ],
            onError: giveUp('retry-budget-exhausted'),
          },
        },
        holding: {
          description: 'Waits for the hold on the origin to end, then chooses the origin again.',
          entry: 'announceHoldWait',
          after: { holdDelay: { target: 'choosingOrigin', actions: 'finishHold' } },
          on: {
            // Rule 6, as in backingOff: no attempt will start while offline.
            'connectivity.offline': {
              target: 'givingUp',
              actions: ['recordDeviceOffline', { type: 'setReason', params: { reason: 'offline' } }],
            },
          },
        },
        attempting: {
          description: 'One attempt in flight, bounded by the attempt timeout; leaving aborts it.',
          entry: ['startAttempt', 'announceAttempt'],
          invoke: {
            id: 'transport',
            src: 'transport',
            input: requestInputs.transport,
            onDone: {
              target: 'evaluating',
              actions: [
                { type: 'recordAttemptResult', params: requestParams.actorOutput },
                'announceAttemptResult',
              ],
            },
            onError: {
              target: 'evaluating',
              actions: [
                { type: 'recordTransportCrash', params: requestParams.actorError },
                'announceTransportCrash',
              ],
            },
          },
          after: {
            attemptTimeout: {
              target: 'evaluating',
              actions: ['recordAttemptTimeout', 'announceAttemptResult'],
            },
          },
          on: {
            'connectivity.changed': [
              {
                // The read's socket belongs to the old network: waiting out its timeout gains nothing.
                guard: 'isRead',
                target: 'handingOver',
                actions: [
                  { type: 'recordNetworkHandover', params: requestParams.changedAt },
                  'announceAttemptResult',
                ],
              },
              // A write may already have reached the server: cutting it would make its outcome unknown.
              { actions: 'recordChangeInFlight' },
            ],
          },
        },
        handingOver: {
          description:
            'A read ended by a network change: sent again at once (no backoff), if an attempt is left.',
          always: [
            { guard: 'isDeviceOffline', ...giveUp('offline') },
            { guard: not('hasAttemptsLeft'), ...giveUp('attempts-exhausted') },
            { target: 'choosingOrigin' },
          ],
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
            // A Retry-After past the budget holds the origin; another origin may still take the request.
            {
              guard: and(['retryAfterExceedsBudget', 'mayTryAnotherOrigin']),
              target: 'planningRetry',
              actions: 'recordFailedOrigin',
            },
            { guard: 'retryAfterExceedsBudget', ...giveUp('retry-after-exceeds-budget') },
            { guard: 'fitsInBudget', target: 'planningRetry', actions: 'recordFailedOrigin' },
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
        planningRetry: {
          description:
            'A read with another origin to go to waits at once (its retry claims from the retry budget only if it goes back to an origin that failed it); any other retry claims first.',
          always: [{ guard: 'mayRetryElsewhere', target: 'backingOff' }, { target: 'claimingRetry' }],
        },
        claimingRetry: {
          description: 'Asks the client-wide retry budget for a slot; without one the request ends at once.',
          invoke: {
            id: 'claimRetry',
            src: 'claimRetry',
            input: requestInputs.claimRetry,
            onDone: [
              { guard: 'isRetryGranted', target: 'backingOff', actions: 'recordRetrySlot' },
              giveUp('retry-budget-exhausted'),
            ],
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
            input: requestInputs.refreshAuth,
            onDone: {
              target: 'choosingOrigin',
              actions: { type: 'recordAuthRefreshed', params: requestParams.actorOutput },
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
            input: requestInputs.reconcile,
            onDone: [
              {
                guard: 'isApplied',
                target: '#request.succeeded',
                actions: { type: 'recordReconcileResult', params: requestParams.actorOutput },
              },
              {
                guard: 'isNotApplied',
                target: 'evaluating',
                actions: { type: 'recordReconcileResult', params: requestParams.actorOutput },
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
      output: requestOutputs.succeeded,
    },
    failed: {
      type: 'final',
      description: 'Ended with a reason; the last failure and response are kept.',
      output: requestOutputs.failed,
    },
    deferred: {
      type: 'final',
      description: 'Durable work handed to the outbox.',
      output: requestOutputs.deferred,
    },
  },
  // The output of whichever final state was reached.
  output: requestOutputs.machine,
});
