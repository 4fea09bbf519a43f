import { fromPromise } from 'xstate';
import { requestEffectDefaults } from './request.effects.js';
import type {
  AttemptInput,
  AttemptOutput,
  ChooseOriginInput,
  ClaimRetryInput,
  ClaimRetryOutput,
  ChooseOriginOutput,
  ReconcileInput,
  ReconcileOutput,
  RefreshAuthInput,
  RefreshAuthOutput,
} from './request.types.js';

/**
 * The request machine's effects. The machine never does I/O itself: whoever runs it provides these
 * with `requestMachine.provide({ actors: { ... } })` (the failwise runtime does, and so can an app).
 * Each gets an AbortSignal that fires when the state that invoked it is left.
 */
export const requestActors = {
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
