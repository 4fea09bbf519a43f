import { describe, expect, it } from 'vitest';
import { initialContext } from '../../machines/request/request.actions.js';
import { requestDelays, requestGuards as g } from '../../machines/request/request.logic.js';
import type { RequestMachineContext, RequestMachineInput } from '../../machines/request/request.types.js';
import { definePolicy } from '../../src/policy/define-policy.js';
import type { Failure } from '../../src/policy/failure.js';

// The request machine's guards and delays, called as the machine calls them, on contexts written out here.
// Each expected value is what the guard's comment and the rule it cites say, at the edges: the last
// attempt, the last millisecond of the budget, the instant a hold ends.

const input: RequestMachineInput = {
  requestId: 'r1',
  method: 'GET',
  origins: ['primary', 'backup'],
  write: false,
  policy: definePolicy({ attempts: { max: 3 }, timeouts: { attemptMs: 2_000 } }),
  budgetMs: 10_000,
  startedAt: 1_000,
  canRefreshAuth: false,
  canReconcile: false,
  deferrable: false,
};

const context = (changes: Partial<RequestMachineContext> = {}): RequestMachineContext => ({
  ...initialContext(input),
  ...changes,
});
const on = (changes: Partial<RequestMachineContext> = {}) => ({ context: context(changes) });
const failure = (changes: Partial<Failure>): Failure => ({
  class: 'connect',
  requestSent: 'no',
  origin: 'primary',
  message: 'refused',
  ...changes,
});
const output = (value: unknown) => ({ event: { type: 'xstate.done.actor.x', output: value } });

describe('the request machine’s guards', () => {
  it('isSuccess: a success status was kept as the response', () => {
    expect(g.isSuccess(on({ response: new Response('ok') }))).toBe(true);
    expect(g.isSuccess(on())).toBe(false);
  });

  it('isUnauthorized and isOffline read the last failure only', () => {
    const earlier = failure({ class: 'unauthorized', status: 401 });
    expect(g.isUnauthorized(on({ failures: [earlier] }))).toBe(true);
    expect(g.isUnauthorized(on({ failures: [earlier, failure({ class: 'connect' })] }))).toBe(false);
    expect(g.isUnauthorized(on())).toBe(false);
    expect(g.isOffline(on({ failures: [failure({ class: 'offline' })] }))).toBe(true);
    expect(g.isOffline(on({ failures: [failure({ class: 'offline' }), failure({})] }))).toBe(false);
    expect(g.isOffline(on())).toBe(false);
  });

  it('canRefreshAuth: a refresh exists, has not run, and an attempt is left after it (rule 3)', () => {
    expect(g.canRefreshAuth(on({ canRefreshAuth: true, attempts: 2 }))).toBe(true);
    expect(g.canRefreshAuth(on({ canRefreshAuth: true, attempts: 3 }))).toBe(false);
    expect(g.canRefreshAuth(on({ canRefreshAuth: true, attempts: 1, authRefreshed: true }))).toBe(false);
    expect(g.canRefreshAuth(on({ canRefreshAuth: false, attempts: 1 }))).toBe(false);
  });

  it('hasAttemptsLeft: fewer attempts made than attempts.max', () => {
    expect(g.hasAttemptsLeft(on({ attempts: 2 }))).toBe(true);
    expect(g.hasAttemptsLeft(on({ attempts: 3 }))).toBe(false);
  });

  it('isDeviceOffline, canReconcile, hasAttemptInFlight, isDeferrable read their flags', () => {
    expect(g.isDeviceOffline(on({ deviceOffline: true }))).toBe(true);
    expect(g.isDeviceOffline(on())).toBe(false);
    expect(g.canReconcile(on({ canReconcile: true }))).toBe(true);
    expect(g.canReconcile(on())).toBe(false);
    expect(g.hasAttemptInFlight(on({ inFlight: true }))).toBe(true);
    expect(g.hasAttemptInFlight(on())).toBe(false);
    expect(g.isDeferrable(on({ deferrable: true }))).toBe(true);
    expect(g.isDeferrable(on())).toBe(false);
  });

  it('isRetryableFailure: the policy retries it, or it is TLS and another origin can take the next attempt', () => {
    expect(g.isRetryableFailure(on())).toBe(false);
    expect(g.isRetryableFailure(on({ failures: [failure({ class: 'connect' })] }))).toBe(true);
    expect(g.isRetryableFailure(on({ failures: [failure({ class: 'offline' })] }))).toBe(false);
    expect(g.isRetryableFailure(on({ failures: [failure({ class: 'tls' })] }))).toBe(true);
    expect(g.isRetryableFailure(on({ failures: [failure({ class: 'tls' })], origins: ['primary'] }))).toBe(
      false,
    );
    // A 409 is retried only with an idempotency key (the key's request is still being processed).
    const conflict = failure({ class: 'client-error', status: 409, requestSent: 'yes' });
    expect(g.isRetryableFailure(on({ failures: [conflict] }))).toBe(false);
    expect(g.isRetryableFailure(on({ failures: [conflict], hasIdempotencyKey: true }))).toBe(true);
  });

  it('isSafeToReplay: not a write, nothing sent, a key, or reconcile said not applied (rule 2)', () => {
    const reached = failure({ class: 'response-timeout', requestSent: 'unknown' });
    expect(g.isSafeToReplay(on())).toBe(true);
    expect(g.isSafeToReplay(on({ failures: [reached] }))).toBe(true);
    expect(g.isSafeToReplay(on({ write: true, failures: [reached] }))).toBe(false);
    expect(g.isSafeToReplay(on({ write: true, failures: [failure({ requestSent: 'no' })] }))).toBe(true);
    expect(g.isSafeToReplay(on({ write: true, failures: [reached], hasIdempotencyKey: true }))).toBe(true);
    expect(g.isSafeToReplay(on({ write: true, failures: [reached], replayCleared: true }))).toBe(true);
    // No attempt has failed yet: nothing was sent, so even a write without a key may be sent.
    expect(g.isSafeToReplay(on({ write: true }))).toBe(true);
  });

  it('isRead: a safe method the request did not declare a write', () => {
    expect(g.isRead(on({ method: 'GET' }))).toBe(true);
    expect(g.isRead(on({ method: 'HEAD' }))).toBe(true);
    expect(g.isRead(on({ method: 'GET', write: true }))).toBe(false);
    expect(g.isRead(on({ method: 'PUT' }))).toBe(false);
  });

  it('mayRetryElsewhere: a read, with another origin to go to (rule 7)', () => {
    expect(g.mayRetryElsewhere(on())).toBe(true);
    expect(g.mayRetryElsewhere(on({ origins: ['primary'] }))).toBe(false);
    expect(g.mayRetryElsewhere(on({ method: 'PUT' }))).toBe(false);
    expect(g.mayRetryElsewhere(on({ method: 'GET', write: true }))).toBe(false);
  });

  it('needsRetrySlot: a retry back to an origin that failed the request, holding no slot yet', () => {
    const back = { retrying: true, origin: 'primary', failedOrigins: ['primary'] };
    expect(g.needsRetrySlot(on(back))).toBe(true);
    expect(g.needsRetrySlot(on({ ...back, origin: 'backup' }))).toBe(false);
    expect(g.needsRetrySlot(on({ ...back, holdsRetrySlot: true }))).toBe(false);
    // A first attempt, or one resent after a network change or a refresh, is no retry.
    expect(g.needsRetrySlot(on({ ...back, retrying: false }))).toBe(false);
    expect(g.needsRetrySlot(on({ ...back, origin: undefined }))).toBe(false);
  });

  it('isRetryGranted, hasChosenOrigin, isApplied, isNotApplied read the actor’s output', () => {
    expect(g.isRetryGranted(output({ granted: true }))).toBe(true);
    expect(g.isRetryGranted(output({ granted: false }))).toBe(false);
    expect(g.hasChosenOrigin(output({ origin: 'backup' }))).toBe(true);
    expect(g.hasChosenOrigin(output({ origin: undefined }))).toBe(false);
    expect(g.isApplied(output({ status: 'applied' }))).toBe(true);
    expect(g.isApplied(output({ status: 'not-applied' }))).toBe(false);
    expect(g.isNotApplied(output({ status: 'not-applied' }))).toBe(true);
    expect(g.isNotApplied(output({ status: 'unknown' }))).toBe(false);
  });

  it('retryAfterExceedsBudget and fitsInBudget read the plan', () => {
    expect(g.retryAfterExceedsBudget(on({ plan: { kind: 'retry-after-exceeds-budget' } }))).toBe(true);
    expect(g.retryAfterExceedsBudget(on({ plan: { kind: 'budget-exhausted' } }))).toBe(false);
    expect(g.retryAfterExceedsBudget(on())).toBe(false);
    expect(g.fitsInBudget(on({ plan: { kind: 'wait', delayMs: 5 } }))).toBe(true);
    expect(g.fitsInBudget(on({ plan: { kind: 'budget-exhausted' } }))).toBe(false);
    expect(g.fitsInBudget(on())).toBe(false);
  });

  it('mayTryAnotherOrigin: not pinned, another origin, and time left', () => {
    // The budget runs from 1,000 to 11,000.
    expect(g.mayTryAnotherOrigin(on({ now: 10_999 }))).toBe(true);
    expect(g.mayTryAnotherOrigin(on({ now: 11_000 }))).toBe(false);
    expect(g.mayTryAnotherOrigin(on({ now: 5_000, pinned: true }))).toBe(false);
    expect(g.mayTryAnotherOrigin(on({ now: 5_000, origins: ['primary'] }))).toBe(false);
  });

  it('isOriginHeld: a hold ends at holdUntil, so it holds only before then', () => {
    expect(g.isOriginHeld(on({ now: 4_999, holdUntil: 5_000 }))).toBe(true);
    expect(g.isOriginHeld(on({ now: 5_000, holdUntil: 5_000 }))).toBe(false);
    expect(g.isOriginHeld(on({ now: 5_000 }))).toBe(false);
  });

  it('holdEndsInBudget: the hold ends strictly before the budget does', () => {
    expect(g.holdEndsInBudget(on({ holdUntil: 10_999 }))).toBe(true);
    expect(g.holdEndsInBudget(on({ holdUntil: 11_000 }))).toBe(false);
    expect(g.holdEndsInBudget(on())).toBe(false);
  });

  it('hasAlternativeOrigin and isPinnedToOrigin', () => {
    expect(g.hasAlternativeOrigin(on({ alternative: 'backup' }))).toBe(true);
    expect(g.hasAlternativeOrigin(on({ alternative: 'backup', pinned: true }))).toBe(false);
    expect(g.hasAlternativeOrigin(on())).toBe(false);
    expect(g.isPinnedToOrigin(on({ pinned: true, origin: 'primary' }))).toBe(true);
    expect(g.isPinnedToOrigin(on({ pinned: true }))).toBe(false);
    expect(g.isPinnedToOrigin(on({ origin: 'primary' }))).toBe(false);
  });

  it('canWaitInOutbox: what time or connectivity can mend', () => {
    expect(g.canWaitInOutbox(on({ reason: 'budget-exhausted' }))).toBe(true);
    expect(g.canWaitInOutbox(on({ reason: 'not-retryable' }))).toBe(false);
  });
});

describe('the request machine’s delays', () => {
  it('requestBudget: what is left of the budget', () => {
    expect(requestDelays.requestBudget(on())).toBe(10_000);
    expect(requestDelays.requestBudget(on({ now: 4_000 }))).toBe(7_000);
  });

  it('attemptTimeout: the policy’s, clipped to the budget left', () => {
    expect(requestDelays.attemptTimeout(on({ now: 4_000 }))).toBe(2_000);
    expect(requestDelays.attemptTimeout(on({ now: 9_500 }))).toBe(1_500);
  });

  it('backoffDelay: the planned wait, 0 when none', () => {
    expect(requestDelays.backoffDelay(on({ previousDelayMs: 250 }))).toBe(250);
    expect(requestDelays.backoffDelay(on())).toBe(0);
  });

  it('holdDelay: the rest of the hold, never negative', () => {
    expect(requestDelays.holdDelay(on({ now: 4_000, holdUntil: 4_300 }))).toBe(300);
    expect(requestDelays.holdDelay(on({ now: 4_000, holdUntil: 3_000 }))).toBe(0);
    expect(requestDelays.holdDelay(on({ now: 4_000 }))).toBe(0);
  });
});
