import { createActor, fromPromise, toPromise, type InspectionEvent } from 'xstate';
import { describe, expect, it } from 'vitest';
import { requestMachine } from '../../src/machines.js';
import type {
  AttemptInput,
  AttemptOutput,
  ChooseOriginOutput,
  ClaimRetryOutput,
  RequestMachineInput,
} from '../../src/machines.js';
import { definePolicy } from '../../src/policy/define-policy.js';
import { simulatedClock } from '../../src/clock/simulated-clock.js';

// docs/embedding.md shows this code: an app runs requestMachine with its own transport actor, no client.

const input = (overrides: Partial<RequestMachineInput> = {}): RequestMachineInput => ({
  requestId: 'embedded-1',
  method: 'GET',
  origins: ['primary'],
  write: false,
  policy: definePolicy({ backoff: { jitter: 'none', initialMs: 100 } }),
  budgetMs: 10_000,
  startedAt: 0,
  canRefreshAuth: false,
  canReconcile: false,
  deferrable: false,
  ...overrides,
});

describe('requestMachine embedded without the client', () => {
  it('runs with an app-provided transport actor and the app clock', async () => {
    const clock = simulatedClock();
    const seen: AttemptInput[] = [];
    const machine = requestMachine.provide({
      actors: {
        transport: fromPromise<AttemptOutput, AttemptInput>(async ({ input }) => {
          seen.push(input);
          const status = input.attempt === 1 ? 503 : 200;
          return { kind: 'response', response: new Response(`attempt ${input.attempt}`, { status }) };
        }),
      },
    });
    const inspected: InspectionEvent[] = [];
    const actor = createActor(machine, { input: input(), clock, inspect: (e) => inspected.push(e) });
    const emitted: string[] = [];
    actor.on('*', (e) => emitted.push(e.type));
    actor.start();
    await clock.runAll();
    const output = await toPromise(actor);
    expect(output).toMatchObject({ status: 'succeeded', attempts: 2, origin: 'primary' });
    expect(output.status === 'succeeded' && (await output.response.text())).toBe('attempt 2');
    expect(seen.map((s) => s.origin)).toEqual(['primary', 'primary']);
    expect(emitted).toEqual([
      'attempt-started',
      'attempt-failed',
      'retry-scheduled',
      'attempt-started',
      'attempt-succeeded',
    ]);
    // The inspector sees the request actor and its snapshots, with the states by name.
    expect(inspected.some((e) => e.type === '@xstate.actor')).toBe(true);
    const values = inspected.flatMap((e) =>
      e.type === '@xstate.snapshot' && e.actorRef === actor
        ? [JSON.stringify((e.snapshot as { value?: unknown }).value)]
        : [],
    );
    expect(values).toContain('{"active":"backingOff"}');
    expect(clock.pending()).toBe(0);
  });

  it('can be cancelled from outside, aborting the attempt in flight', async () => {
    const clock = simulatedClock();
    let abortedBy: unknown;
    const machine = requestMachine.provide({
      actors: {
        transport: fromPromise<AttemptOutput, AttemptInput>(
          ({ signal }) =>
            new Promise((resolve) =>
              signal.addEventListener('abort', () => {
                abortedBy = signal.reason;
                resolve({ kind: 'error', phase: 'unknown', message: 'aborted' });
              }),
            ),
        ),
      },
    });
    const actor = createActor(machine, { input: input(), clock }).start();
    await clock.increment(50);
    actor.send({ type: 'request.cancel' });
    const output = await toPromise(actor);
    expect(output).toMatchObject({ status: 'failed', reason: 'cancelled', failure: { class: 'cancelled' } });
    expect(abortedBy).toBeDefined();
    expect(clock.pending()).toBe(0);
  });

  it('without a provided transport, fails visibly rather than hanging', async () => {
    const clock = simulatedClock();
    const actor = createActor(requestMachine, {
      input: input({ policy: definePolicy({ attempts: { max: 1 } }) }),
      clock,
    }).start();
    await clock.runAll();
    const output = await toPromise(actor);
    expect(output).toMatchObject({ status: 'failed', failure: { class: 'unexpected' } });
  });
});

describe('requestMachine and an idempotency key', () => {
  it('replays a write that may have been applied when hasIdempotencyKey is set, the app adding its key by requestId', async () => {
    const clock = simulatedClock();
    const keys = new Map([['embedded-1', 'key-of-the-app']]);
    const sent: { input: AttemptInput; headers: Record<string, string> }[] = [];
    const machine = requestMachine.provide({
      actors: {
        transport: fromPromise<AttemptOutput, AttemptInput>(async ({ input }) => {
          sent.push({ input, headers: { 'idempotency-key': keys.get(input.requestId)! } });
          return input.attempt === 1
            ? { kind: 'error', phase: 'response-timeout', message: 'no response' }
            : { kind: 'response', response: new Response(null, { status: 201 }) };
        }),
      },
    });
    const write = { method: 'POST', write: true };
    const withKey = createActor(machine, { input: input({ ...write, hasIdempotencyKey: true }), clock });
    withKey.start();
    await clock.runAll();
    expect(await toPromise(withKey)).toMatchObject({ status: 'succeeded', attempts: 2 });
    expect(sent.map((s) => s.headers['idempotency-key'])).toEqual(['key-of-the-app', 'key-of-the-app']);
    // The machine's attempt input carries no key: the app keeps it.
    expect(Object.keys(sent[0]!.input).sort()).toEqual([
      'attempt',
      'attemptsLeft',
      'attemptsMax',
      'origin',
      'requestId',
      'timeoutMs',
    ]);
    expect(withKey.getSnapshot().context.hasIdempotencyKey).toBe(true);

    const keyless = createActor(machine, { input: input(write), clock });
    keyless.start();
    await clock.runAll();
    expect(await toPromise(keyless)).toMatchObject({ status: 'failed', reason: 'unsafe-to-replay' });
  });
});

describe('requestMachine with deferrable (durable) input', () => {
  const run = async (
    result: AttemptOutput,
    more: { claimRetry?: ClaimRetryOutput; chooseOrigin?: ChooseOriginOutput } = {},
  ) => {
    const clock = simulatedClock();
    const machine = requestMachine.provide({
      actors: {
        transport: fromPromise<AttemptOutput, AttemptInput>(async () => result),
        ...(more.claimRetry && { claimRetry: fromPromise(async () => more.claimRetry!) }),
        ...(more.chooseOrigin && { chooseOrigin: fromPromise(async () => more.chooseOrigin!) }),
      },
    });
    const actor = createActor(machine, {
      input: input({ deferrable: true, write: true, hasIdempotencyKey: true }),
      clock,
    }).start();
    await clock.runAll();
    return toPromise(actor);
  };

  it('defers what time or connectivity can mend', async () => {
    expect(await run({ kind: 'error', phase: 'offline', message: 'offline' })).toMatchObject({
      status: 'deferred',
      reason: 'offline',
    });
    expect(
      await run({
        kind: 'response',
        response: new Response(null, { status: 503, headers: { 'retry-after': '3600' } }),
      }),
    ).toMatchObject({
      status: 'deferred',
      reason: 'retry-after-exceeds-budget',
      failures: [{ class: 'unavailable', retryAfterMs: 3_600_000 }],
    });
    expect(await run({ kind: 'error', phase: 'connect', message: 'refused' })).toMatchObject({
      status: 'deferred',
      reason: 'attempts-exhausted',
      attempts: 3,
    });
    const unavailable: AttemptOutput = { kind: 'response', response: new Response(null, { status: 503 }) };
    expect(await run(unavailable, { claimRetry: { granted: false } })).toMatchObject({
      status: 'deferred',
      reason: 'retry-budget-exhausted',
      attempts: 1,
    });
    expect(await run(unavailable, { chooseOrigin: { origin: undefined } })).toMatchObject({
      status: 'deferred',
      reason: 'no-healthy-origin',
      attempts: 0,
    });
  });

  it('fails what waiting cannot mend', async () => {
    expect(await run({ kind: 'response', response: new Response(null, { status: 422 }) })).toMatchObject({
      status: 'failed',
      reason: 'not-retryable',
    });
  });
});
