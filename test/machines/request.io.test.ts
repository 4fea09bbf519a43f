import { describe, expect, it } from 'vitest';
import { initialContext } from '../../machines/request/request.actions.js';
import {
  requestEffectDefaults,
  requestInputs,
  requestOutputs,
  requestParams,
} from '../../machines/request/request.io.js';
import type { RequestMachineContext, RequestMachineInput } from '../../machines/request/request.types.js';
import { definePolicy } from '../../src/policy/define-policy.js';
import type { Failure } from '../../src/policy/failure.js';

// What flows in and out of the request machine besides its events (the actors' inputs, the actions' parameters,
// the final states' outputs) and what its actors do when none is provided, on contexts written out here.
// Expected values are worked out by hand from the comments and the types' docs.

const input: RequestMachineInput = {
  requestId: 'r1',
  method: 'POST',
  origins: ['primary', 'backup'],
  write: true,
  // No jitter: the backoff before retry n is 100 * 2^(n - 1) ms.
  policy: definePolicy({
    attempts: { max: 4 },
    timeouts: { attemptMs: 2_000 },
    backoff: { jitter: 'none', initialMs: 100, multiplier: 2, maxMs: 5_000 },
    retryAfter: { maxMs: 3_000 },
  }),
  budgetMs: 10_000,
  startedAt: 1_000,
  canRefreshAuth: false,
  canReconcile: true,
  deferrable: false,
};

const context = (changes: Partial<RequestMachineContext> = {}): RequestMachineContext => ({
  ...initialContext(input),
  ...changes,
});
const on = (changes: Partial<RequestMachineContext> = {}) => ({ context: context(changes) });
const failure = (changes: Partial<Failure> = {}): Failure => ({
  class: 'connect',
  requestSent: 'no',
  origin: 'primary',
  message: 'refused',
  ...changes,
});

describe('what flows in and out of the request machine', () => {
  it('the actors’ inputs', () => {
    const c = on({
      attempts: 1,
      origin: 'primary',
      pinned: true,
      authGeneration: 3,
      now: 10_000,
      failures: [failure()],
    });
    expect(requestInputs.chooseOrigin(c)).toEqual({
      requestId: 'r1',
      origins: ['primary', 'backup'],
      write: true,
      attempt: 2,
      previousOrigin: 'primary',
      pinned: true,
      avoid: [],
      // startedAt 1000 + budgetMs 10000.
      deadline: 11_000,
    });
    // A read being retried passes over the origins that failed it; a write, or a read not retrying, avoids none.
    const read = { method: 'GET', write: false, failedOrigins: ['primary'] };
    expect(requestInputs.chooseOrigin(on({ ...read, retrying: true })).avoid).toEqual(['primary']);
    expect(requestInputs.chooseOrigin(on({ ...read, retrying: false })).avoid).toEqual([]);
    expect(requestInputs.chooseOrigin(on({ ...read, method: 'POST', retrying: true })).avoid).toEqual([]);
    expect(
      requestInputs.chooseOrigin(on({ ...read, method: 'POST', write: true, retrying: true })).avoid,
    ).toEqual([]);
    // Attempt 1 of 4: this call may make 4 in all; 1,000 ms of the budget left clips the 2,000 ms timeout.
    expect(requestInputs.transport(c)).toEqual({
      requestId: 'r1',
      origin: 'primary',
      attempt: 1,
      attemptsMax: 4,
      attemptsLeft: 4,
      timeoutMs: 1_000,
    });
    expect(requestInputs.transport(on({ attempts: 3 }))).toMatchObject({ origin: '', attemptsLeft: 2 });
    expect(requestInputs.claimRetry(c)).toEqual({ requestId: 'r1', attempt: 1 });
    expect(requestInputs.refreshAuth(c)).toEqual({ requestId: 'r1', origin: 'primary', authGeneration: 3 });
    expect(requestInputs.refreshAuth(on())).toMatchObject({ origin: '' });
    expect(requestInputs.reconcile(c)).toEqual({ requestId: 'r1', failure: failure(), attempts: 1 });
  });

  it('the actions’ parameters from events', () => {
    const error = new Error('x');
    expect(requestParams.actorOutput({ event: { output: 5 } })).toBe(5);
    expect(requestParams.changedAt({ event: { type: 'connectivity.changed', at: 7 } })).toEqual({ at: 7 });
    expect(requestParams.actorError({ event: { error } })).toEqual({ error });
  });

  it('the outputs of the final states carry no undefined key', () => {
    const response = new Response('ok');
    expect(requestOutputs.succeeded(on({ response, origin: 'backup', attempts: 2 }))).toEqual({
      status: 'succeeded',
      response,
      origin: 'backup',
      attempts: 2,
    });
    expect(requestOutputs.succeeded(on({ response, reconciled: true }))).toEqual({
      status: 'succeeded',
      response,
      origin: '',
      attempts: 0,
      reconciled: true,
    });
    const last = failure();
    expect(
      requestOutputs.failed(on({ reason: 'attempts-exhausted', failures: [last], attempts: 4 })),
    ).toEqual({
      status: 'failed',
      reason: 'attempts-exhausted',
      failure: last,
      attempts: 4,
    });
    expect(requestOutputs.failed(on())).toEqual({ status: 'failed', reason: 'not-retryable', attempts: 0 });
    expect(requestOutputs.failed(on({ reason: 'durable' }))).toMatchObject({ reason: 'not-retryable' });
    // The hold is told only when it is why the request ended.
    expect(
      requestOutputs.failed(
        on({ reason: 'retry-after-exceeds-budget', holdUntil: 20_000, origin: 'primary' }),
      ),
    ).toMatchObject({ holdUntil: 20_000, origin: 'primary' });
    expect(requestOutputs.failed(on({ reason: 'budget-exhausted', holdUntil: 20_000 }))).not.toHaveProperty(
      'holdUntil',
    );
    const lastResponse = new Response('busy', { status: 503 });
    expect(requestOutputs.failed(on({ reason: 'attempts-exhausted', lastResponse }))).toMatchObject({
      response: lastResponse,
    });
    expect(requestOutputs.deferred(on({ failures: [last], attempts: 1, origin: 'primary' }))).toEqual({
      status: 'deferred',
      reason: 'durable',
      failure: last,
      failures: [last],
      origin: 'primary',
      attempts: 1,
    });
    expect(requestOutputs.deferred(on({ reason: 'budget-exhausted' }))).toMatchObject({
      reason: 'budget-exhausted',
    });
    expect(requestOutputs.machine({ event: { output: { status: 'failed' } } })).toEqual({ status: 'failed' });
  });
});

describe('what the request machine’s actors do when none is provided', () => {
  it('the transport and refreshAuth throw, saying what to provide; the others take the first origin, grant, cannot tell', () => {
    expect(() => requestEffectDefaults.transport()).toThrow(
      'requestMachine: provide a `transport` actor with requestMachine.provide({ actors })',
    );
    expect(() => requestEffectDefaults.refreshAuth()).toThrow(
      'requestMachine: no `refreshAuth` actor provided',
    );
    expect(
      requestEffectDefaults.chooseOrigin({ requestId: 'r1', origins: ['b', 'a'], write: false, attempt: 1 }),
    ).toEqual({ origin: 'b' });
    expect(requestEffectDefaults.claimRetry()).toEqual({ granted: true });
    expect(requestEffectDefaults.reconcile()).toEqual({ status: 'unknown' });
  });
});
