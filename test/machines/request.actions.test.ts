import { describe, expect, it } from 'vitest';
import * as actions from '../../machines/request/request.actions.js';
import type { RequestMachineContext, RequestMachineInput } from '../../machines/request/request.types.js';
import { definePolicy } from '../../src/policy/define-policy.js';
import type { Failure } from '../../src/policy/failure.js';

// The request machine's actions (its context changes and announcements), called as the machine calls them, on
// contexts written out here. Expected values are worked out by hand from the comments, the types' docs and the
// rules: an attempt's times, what a write that may have reached its origin pins, what a transport's own
// attempts count.

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
  ...actions.initialContext(input),
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

describe('the request machine’s context changes', () => {
  it('starts with every field set, its own clock at startedAt and nothing tried', () => {
    const start = actions.initialContext({ ...input, random: undefined });
    expect(start).toMatchObject({
      now: 1_000,
      attemptStartedAt: 1_000,
      attempts: 0,
      retries: 0,
      hasIdempotencyKey: false,
      deviceOffline: false,
      inFlight: false,
      pinned: false,
      failures: [],
    });
    expect(start.random).toBe(Math.random);
    expect(actions.initialContext({ ...input, hasIdempotencyKey: true, deviceOffline: true })).toMatchObject({
      hasIdempotencyKey: true,
      deviceOffline: true,
    });
  });

  it('startAttempt counts the attempt and starts its time now', () => {
    const response = new Response('old');
    expect(
      actions.startAttempt(on({ attempts: 1, now: 3_000, changedInFlight: true, retrying: true, response })),
    ).toEqual({
      attempts: 2,
      attemptStartedAt: 3_000,
      inFlight: true,
      changedInFlight: false,
      retrying: false,
      response: undefined,
    });
  });

  it('recordFailedOrigin marks a retry and lists the origin that failed it, once', () => {
    expect(actions.recordFailedOrigin(on({ origin: 'primary' }))).toEqual({
      retrying: true,
      failedOrigins: ['primary'],
    });
    expect(actions.recordFailedOrigin(on({ origin: 'backup', failedOrigins: ['primary'] }))).toEqual({
      retrying: true,
      failedOrigins: ['primary', 'backup'],
    });
    const failedOrigins = ['primary', 'backup'];
    expect(actions.recordFailedOrigin(on({ origin: 'primary', failedOrigins })).failedOrigins).toBe(
      failedOrigins,
    );
    expect(actions.recordRetrySlot()).toEqual({ holdsRetrySlot: true });
  });

  it('recordOrigin and recordHold take the chooser’s time, or keep the machine’s', () => {
    const chosen = { origin: 'backup', at: 1_500, holdUntil: 2_000, alternative: 'primary' };
    expect(actions.recordOrigin(on(), chosen)).toEqual({
      origin: 'backup',
      now: 1_500,
      holdUntil: 2_000,
      alternative: 'primary',
    });
    expect(actions.recordOrigin(on({ now: 1_200 }), { origin: 'primary' })).toMatchObject({ now: 1_200 });
    expect(actions.recordHold(on({ alternative: 'backup' }), chosen)).toEqual({
      now: 1_500,
      holdUntil: 2_000,
      alternative: undefined,
    });
    expect(actions.recordHold(on({ now: 1_300 }), { origin: 'primary' })).toMatchObject({ now: 1_300 });
  });

  it('takeAlternativeOrigin and finishHold', () => {
    expect(actions.takeAlternativeOrigin(on({ alternative: 'backup', holdUntil: 9_000 }))).toEqual({
      origin: 'backup',
      holdUntil: undefined,
      alternative: undefined,
    });
    expect(actions.finishHold(on({ now: 2_000, holdUntil: 2_500 }))).toEqual({
      now: 2_500,
      holdUntil: undefined,
    });
    expect(actions.finishHold(on({ now: 2_000, holdUntil: 1_500 }))).toEqual({
      now: 2_000,
      holdUntil: undefined,
    });
    expect(actions.finishHold(on({ now: 2_000 }))).toEqual({ now: 2_000, holdUntil: undefined });
  });

  it('recordAttemptResult keeps a success, counting the transport’s own attempts (rule 1)', () => {
    const response = new Response('ok', { status: 200 });
    const changes = actions.recordAttemptResult(on({ attempts: 1, inFlight: true, origin: 'primary' }), {
      kind: 'response',
      response,
      at: 1_400,
      attempts: 3,
      authGeneration: 7,
    });
    expect(changes).toEqual({ now: 1_400, attempts: 3, authGeneration: 7, inFlight: false, response });
    expect(changes.response).toBe(response);
    // No count from the transport: one attempt; no stamp: the machine's time; no generation: the one it had.
    expect(
      actions.recordAttemptResult(on({ attempts: 2, now: 1_100, authGeneration: 4 }), {
        kind: 'response',
        response,
      }),
    ).toEqual({ now: 1_100, attempts: 2, authGeneration: 4, inFlight: false, response });
    // A count below one is not a negative number of attempts.
    expect(
      actions.recordAttemptResult(on({ attempts: 2 }), { kind: 'response', response, attempts: 0 }),
    ).toMatchObject({ attempts: 2 });
  });

  it('recordAttemptResult records a failure, pins a write that may have reached its origin, and plans the wait', () => {
    const unavailable = new Response('busy', { status: 503 });
    const changes = actions.recordAttemptResult(on({ attempts: 1, inFlight: true, origin: 'primary' }), {
      kind: 'response',
      response: unavailable,
      at: 1_400,
    });
    expect(changes).toMatchObject({
      now: 1_400,
      attempts: 1,
      inFlight: false,
      replayCleared: false,
      pinned: true,
      lastResponse: unavailable,
      // The first retry: 100 ms, with 9,600 ms of the budget left.
      plan: { kind: 'wait', delayMs: 100 },
    });
    expect(changes.failures).toEqual([expect.objectContaining({ status: 503, origin: 'primary' })]);
    expect(changes.response).toBeUndefined();
    expect(changes.lastResponse).toBe(unavailable);
    // Nothing sent: not pinned; a read is never pinned; once pinned, it stays pinned.
    const refused = { kind: 'error', phase: 'connect', message: 'refused' } as const;
    expect(actions.recordAttemptResult(on({ origin: 'primary' }), refused)).toMatchObject({ pinned: false });
    const reached = { kind: 'error', phase: 'connection-lost', message: 'reset' } as const;
    expect(actions.recordAttemptResult(on({ origin: 'primary', write: false }), reached)).toMatchObject({
      pinned: false,
    });
    expect(actions.recordAttemptResult(on({ origin: 'primary', pinned: true }), refused)).toMatchObject({
      pinned: true,
    });
    // An error keeps the last response there was; the transport's attempts count here too.
    const last = new Response('earlier', { status: 502 });
    expect(
      actions.recordAttemptResult(on({ origin: 'primary', attempts: 1, lastResponse: last }), {
        ...refused,
        attempts: 2,
      }),
    ).toMatchObject({ attempts: 2 });
    // Responses are compared by identity: toEqual sees no fields on a Response.
    expect(
      actions.recordAttemptResult(on({ origin: 'primary', lastResponse: last }), refused).lastResponse,
    ).toBe(last);
    // The second retry doubles the first's wait.
    expect(actions.recordAttemptResult(on({ origin: 'primary', retries: 1 }), refused)).toMatchObject({
      plan: { kind: 'wait', delayMs: 200 },
    });
  });

  it('recordAttemptResult reads a Retry-After date against the attempt’s time, not the host clock', () => {
    const at = Date.UTC(2026, 0, 1);
    const held = new Response('later', {
      status: 503,
      headers: { 'retry-after': 'Thu, 01 Jan 2026 00:00:02 GMT' },
    });
    expect(
      actions.recordAttemptResult(on({ origin: 'primary' }), { kind: 'response', response: held, at })
        .failures,
    ).toEqual([expect.objectContaining({ status: 503, retryAfterMs: 2_000 })]);
  });

  it('recordAttemptResult blames no origin when none was chosen', () => {
    const refused = { kind: 'error', phase: 'connect', message: 'refused' } as const;
    expect(actions.recordAttemptResult(on(), refused).failures).toEqual([
      expect.objectContaining({ class: 'connect', origin: '' }),
    ]);
  });

  it('recordAttemptResult stops at a Retry-After the policy will not wait for (rule 5)', () => {
    const held = new Response('later', { status: 503, headers: { 'retry-after': '4' } });
    expect(
      actions.recordAttemptResult(on({ origin: 'primary' }), { kind: 'response', response: held }),
    ).toMatchObject({ plan: { kind: 'retry-after-exceeds-budget' } });
  });

  it('recordAttemptTimeout ends the attempt at its own timeout, clipped to the budget', () => {
    const changes = actions.recordAttemptTimeout(
      on({ origin: 'primary', attemptStartedAt: 3_000, now: 3_000, inFlight: true }),
    );
    expect(changes).toMatchObject({ now: 5_000, inFlight: false, pinned: true });
    expect(changes.failures).toEqual([
      {
        class: 'response-timeout',
        requestSent: 'unknown',
        origin: 'primary',
        message: 'no response within 2000 ms',
      },
    ]);
    // 500 ms of the budget left when the attempt started: it times out at the budget's end.
    expect(
      actions.recordAttemptTimeout(on({ origin: 'primary', attemptStartedAt: 10_500, now: 10_700 })),
    ).toMatchObject({
      now: 11_000,
      failures: [expect.objectContaining({ message: 'no response within 500 ms' })],
    });
    expect(actions.recordAttemptTimeout(on({ attemptStartedAt: 3_000 })).failures).toEqual([
      expect.objectContaining({ origin: '' }),
    ]);
  });

  it('recordTransportCrash: an unexpected failure of unknown outcome, by the error’s name only', () => {
    const changes = actions.recordTransportCrash(on({ origin: 'backup', now: 2_000 }), {
      error: new RangeError('secret'),
    });
    expect(changes.failures).toEqual([
      {
        class: 'unexpected',
        requestSent: 'unknown',
        origin: 'backup',
        message: 'transport threw RangeError instead of reporting a result',
      },
    ]);
    expect(changes).toMatchObject({ now: 2_000, pinned: true });
    expect(actions.recordTransportCrash(on(), { error: 1 }).failures![0]!.origin).toBe('');
  });

  it('recordAuthRefreshed', () => {
    expect(actions.recordAuthRefreshed(on({ now: 5 }), { at: 9 })).toEqual({ authRefreshed: true, now: 9 });
    expect(actions.recordAuthRefreshed(on({ now: 5 }), undefined)).toEqual({ authRefreshed: true, now: 5 });
  });

  it('recordReconcileResult: applied keeps the answer (else an empty 204), not applied clears a replay', async () => {
    const answer = new Response('done', { status: 201 });
    expect(actions.recordReconcileResult(on(), { status: 'applied', response: answer, at: 1_200 })).toEqual({
      now: 1_200,
      reconciled: true,
      response: answer,
    });
    const empty = actions.recordReconcileResult(on({ now: 1_300 }), { status: 'applied' });
    expect(empty).toMatchObject({ now: 1_300, reconciled: true });
    expect(empty.response!.status).toBe(204);
    expect(await empty.response!.text()).toBe('');
    // Not applied: safe to send again, after the wait planned for the failure reconcile was asked about.
    expect(
      actions.recordReconcileResult(on({ failures: [failure()] }), { status: 'not-applied', at: 1_500 }),
    ).toEqual({ now: 1_500, replayCleared: true, plan: { kind: 'wait', delayMs: 100 } });
    expect(actions.recordReconcileResult(on(), { status: 'not-applied' })).toEqual({
      now: 1_000,
      replayCleared: true,
    });
    expect(actions.recordReconcileResult(on(), { status: 'unknown', at: 1_700 })).toEqual({ now: 1_700 });
    expect(actions.recordReconcileResult(on({ now: 1_800 }), { status: 'unknown' })).toEqual({ now: 1_800 });
  });

  it('startBackoff and finishBackoff: the planned wait, then the time after it', () => {
    expect(actions.startBackoff(on({ retries: 1, plan: { kind: 'wait', delayMs: 250 } }))).toEqual({
      retries: 2,
      previousDelayMs: 250,
    });
    expect(actions.startBackoff(on({ plan: { kind: 'budget-exhausted' } }))).toEqual({
      retries: 1,
      previousDelayMs: 0,
    });
    expect(actions.startBackoff(on())).toEqual({ retries: 1, previousDelayMs: 0 });
    expect(actions.finishBackoff(on({ now: 2_000, previousDelayMs: 250 }))).toEqual({ now: 2_250 });
    expect(actions.finishBackoff(on({ now: 2_000 }))).toEqual({ now: 2_000 });
  });

  it('recordNetworkHandover ends a read’s attempt as lost with its connection, with no wait planned', () => {
    const changes = actions.recordNetworkHandover(
      on({
        origin: 'primary',
        attemptStartedAt: 2_000,
        now: 2_100,
        inFlight: true,
        plan: { kind: 'wait', delayMs: 1 },
      }),
      { at: 2_400 },
    );
    expect(changes).toEqual({
      now: 2_400,
      inFlight: false,
      changedInFlight: true,
      failures: [
        {
          class: 'connection-lost',
          requestSent: 'unknown',
          origin: 'primary',
          message: 'the network changed 400 ms into the attempt; the read is sent again at once',
        },
      ],
      replayCleared: false,
      plan: undefined,
    });
    // An event stamped before the machine's time does not move it back.
    expect(
      actions.recordNetworkHandover(on({ now: 2_100, attemptStartedAt: 2_000 }), { at: 2_050 }),
    ).toMatchObject({
      now: 2_100,
      failures: [
        expect.objectContaining({ origin: '', message: expect.stringContaining('changed 100 ms into') }),
      ],
    });
  });

  it('recordChangeInFlight, recordDeviceOffline, recordDeviceOnline, setReason', () => {
    expect(actions.recordChangeInFlight()).toEqual({ changedInFlight: true });
    expect(actions.recordDeviceOffline()).toEqual({ deviceOffline: true });
    expect(actions.recordDeviceOnline()).toEqual({ deviceOffline: false });
    expect(actions.setReason(on(), { reason: 'attempts-exhausted' })).toEqual({
      reason: 'attempts-exhausted',
    });
  });

  it('recordCancelled adds the caller’s cancel as the last failure', () => {
    expect(actions.recordCancelled(on({ origin: 'backup', failures: [failure()] }))).toEqual({
      reason: 'cancelled',
      failures: [
        failure(),
        { class: 'cancelled', requestSent: 'unknown', origin: 'backup', message: 'cancelled by the caller' },
      ],
    });
    expect(actions.recordCancelled(on()).failures![0]!.origin).toBe('');
  });

  it('recordBudgetExhausted: the time is the budget’s end; an attempt in flight ends there, with no wait planned', () => {
    expect(actions.recordBudgetExhausted(on({ now: 5_000 }))).toEqual({ now: 11_000 });
    const changes = actions.recordBudgetExhausted(
      on({ origin: 'primary', inFlight: true, attemptStartedAt: 9_500, plan: { kind: 'wait', delayMs: 1 } }),
    );
    expect(changes).toMatchObject({ now: 11_000, inFlight: false, pinned: true, plan: undefined });
    expect(changes.failures).toEqual([
      {
        class: 'response-timeout',
        requestSent: 'unknown',
        origin: 'primary',
        message: 'no response within 1500 ms',
      },
    ]);
    expect(
      actions.recordBudgetExhausted(on({ inFlight: true, attemptStartedAt: 9_500 })).failures![0]!.origin,
    ).toBe('');
  });
});

describe('what the request machine announces', () => {
  it('announceAttempt: the attempt’s number, origin and start', () => {
    expect(actions.announceAttempt(on({ attempts: 2, origin: 'backup', attemptStartedAt: 1_500 }))).toEqual({
      type: 'attempt-started',
      attempt: 2,
      origin: 'backup',
      at: 1_500,
    });
    expect(actions.announceAttempt(on())).toMatchObject({ origin: '' });
  });

  it('announceAttemptResult: a success with its latency, a failure with its origin, or nothing', () => {
    const response = new Response('ok');
    expect(
      actions.announceAttemptResult(
        on({ response, attempts: 1, origin: 'primary', attemptStartedAt: 1_000, now: 1_250 }),
      ),
    ).toEqual({ type: 'attempt-succeeded', attempt: 1, origin: 'primary', latencyMs: 250, at: 1_250 });
    expect(actions.announceAttemptResult(on({ response }))).toMatchObject({ origin: '' });
    const lost = failure({ origin: 'backup' });
    expect(
      actions.announceAttemptResult(on({ failures: [lost], attempts: 2, origin: 'primary', now: 1_300 })),
    ).toEqual({
      type: 'attempt-failed',
      attempt: 2,
      origin: 'backup',
      failure: lost,
      at: 1_300,
    });
    expect(actions.announceAttemptResult(on({ failures: [lost], changedInFlight: true }))).toMatchObject({
      acrossChange: true,
    });
    expect(actions.announceAttemptResult(on())).toBeUndefined();
  });

  it('announceTransportCrash: the failure the crash recorded, with its origin, marked as a crash', () => {
    const crash = failure({ class: 'unexpected', requestSent: 'unknown', origin: 'backup' });
    expect(
      actions.announceTransportCrash(
        on({ failures: [crash], attempts: 2, origin: 'primary', now: 1_300, changedInFlight: true }),
      ),
    ).toEqual({
      type: 'attempt-failed',
      attempt: 2,
      origin: 'backup',
      failure: crash,
      at: 1_300,
      crashed: true,
    });
  });

  it('announceBudgetCut, announceRetry, announceHoldWait', () => {
    const cut = failure({ class: 'response-timeout' });
    expect(
      actions.announceBudgetCut(on({ failures: [cut], attempts: 3, origin: 'primary', now: 11_000 })),
    ).toEqual({
      type: 'attempt-failed',
      attempt: 3,
      origin: 'primary',
      failure: cut,
      at: 11_000,
      cutByBudget: true,
    });
    expect(actions.announceBudgetCut(on({ failures: [cut] }))).toMatchObject({ origin: '' });
    expect(
      actions.announceRetry(
        on({ failures: [cut], attempts: 1, origin: 'primary', previousDelayMs: 100, now: 1_200 }),
      ),
    ).toEqual({
      type: 'retry-scheduled',
      attempt: 1,
      origin: 'primary',
      delayMs: 100,
      failure: cut,
      at: 1_200,
    });
    expect(actions.announceRetry(on({ failures: [cut] }))).toMatchObject({ origin: '', delayMs: 0 });
    expect(
      actions.announceHoldWait(on({ attempts: 1, origin: 'backup', holdUntil: 4_000, now: 1_500 })),
    ).toEqual({
      type: 'waiting-for-hold',
      attempt: 2,
      origin: 'backup',
      delayMs: 2_500,
      holdUntil: 4_000,
      at: 1_500,
    });
    expect(actions.announceHoldWait(on({ now: 1_500 }))).toMatchObject({
      origin: '',
      delayMs: 0,
      holdUntil: 1_500,
    });
  });
});
