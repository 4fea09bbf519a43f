import { fc } from '@fast-check/vitest';
import { expect } from 'vitest';
import type { MachineLogic } from '../../src/engine/machine-logic.js';
import { requestLogic } from '../../machines/request/request.logic.js';
import { requestMachine } from '../../machines/request/request.machine.js';
import { requestTable } from '../../machines/request/request.table.js';
import type { RequestMachineInput } from '../../machines/request/request.types.js';
import { seededRandom } from '../../src/drill/seeded-random.js';
import { definePolicy } from '../../src/policy/define-policy.js';
import type { Policy, PolicyInput } from '../../src/policy/policy.js';
import { layPolicy } from '../../src/policy/request-policy.js';
import { policyArb } from '../helpers/arbitraries.js';
import {
  describeDifferential,
  expectSame,
  invertGuard,
  leanSide,
  settle,
  timerMutants,
  xstateSide,
  type Invocation,
  type MachineUnderTest,
  type Mutation,
  type Side,
} from './differential-harness.js';

/**
 * The lean executor runs the request machine exactly as XState does: for random policies, inputs, transport
 * outcomes, actor answers, cancellations, connectivity hints and clock advances, compared after every step.
 */
export const requestUnderTest: MachineUnderTest = {
  machine: requestMachine,
  table: requestTable,
  logic: requestLogic as unknown as MachineLogic<never, never>,
  invoked: ['chooseOrigin', 'transport', 'claimRetry', 'refreshAuth', 'reconcile'],
  ignore: ['random'],
};

const ORIGINS = ['primary', 'backup', 'reads'];

const inputArb = fc.record({
  policy: policyArb,
  origins: fc.integer({ min: 1, max: 3 }),
  method: fc.constantFrom('GET', 'POST', 'PUT', 'PATCH'),
  write: fc.boolean(),
  key: fc.boolean(),
  deadlineMs: fc.option(fc.integer({ min: 1, max: 15_000 }), { nil: undefined }),
  canRefreshAuth: fc.boolean(),
  canReconcile: fc.boolean(),
  deferrable: fc.boolean(),
  deviceOffline: fc.nat(5).map((n) => n === 0),
  seed: fc.integer(),
});

/** An answer for whichever call is picked; the fields that fit the call's actor are used. */
const answerArb = fc.record({
  pick: fc.nat(3),
  reject: fc.nat(7).map((n) => n === 0),
  transport: fc.oneof(
    fc.record({
      kind: fc.constant('response' as const),
      status: fc.constantFrom(200, 204, 401, 401, 404, 408, 429, 500, 502, 503, 504),
      retryAfter: fc.option(fc.constantFrom('0', '1', '3', '30', 'soon'), { nil: undefined }),
      attempts: fc.option(fc.integer({ min: 1, max: 3 }), { nil: undefined }),
    }),
    fc.record({
      kind: fc.constant('error' as const),
      phase: fc.constantFrom(
        'offline',
        'dns',
        'connect',
        'connect-timeout',
        'tls',
        'response-timeout',
        'connection-lost',
        'unknown',
      ),
      requestSent: fc.option(fc.constantFrom('no', 'yes', 'unknown'), { nil: undefined }),
      attempts: fc.option(fc.integer({ min: 1, max: 3 }), { nil: undefined }),
    }),
  ),
  origin: fc.option(fc.nat(2), { nil: undefined, freq: 6 }),
  // A server hold on the chosen origin: its length, and another origin free of holds, if any.
  holdMs: fc.option(fc.constantFrom(1, 3_000, 30_000), { nil: undefined, freq: 3 }),
  alternative: fc.option(fc.nat(2), { nil: undefined }),
  granted: fc.boolean(),
  reconcile: fc.constantFrom('applied', 'not-applied', 'unknown'),
  // What the app's classify said of the transport's result, when it said anything (or what it threw).
  verdict: fc.option(
    fc.constantFrom('success', 'unavailable', 'server-error', 'unauthorized', 'connect', 'tls', 'unexpected'),
    { nil: undefined, freq: 3 },
  ),
  classifyThrew: fc.nat(3).map((n) => n === 0),
});

const stimulusArb = fc.oneof(
  { weight: 5, arbitrary: fc.record({ kind: fc.constant('answer' as const), answer: answerArb }) },
  {
    weight: 3,
    arbitrary: fc.record({ kind: fc.constant('advance' as const), ms: fc.integer({ min: 1, max: 6_000 }) }),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant('send' as const),
      type: fc.constantFrom(
        'request.cancel',
        'connectivity.offline',
        'connectivity.online',
        'connectivity.changed',
      ),
    }),
  },
);

type ValueOf<A> = A extends fc.Arbitrary<infer T> ? T : never;
type Answer = ValueOf<typeof answerArb>;
export type RequestCase = ValueOf<typeof inputArb>;
export type RequestStimulus = ValueOf<typeof stimulusArb>;

/**
 * What a hold waits for: half the time a server's Retry-After, else a send slot (the origin's RateLimit quota,
 * the client's quiet period after a throttle, or its send rate). Read from draws a choice of origin has no other
 * use for (`granted`, `reconcile`), not from new ones, so that the fixed seeds still reach every state.
 */
function holdByOf(answer: Answer): 'quota' | 'quiet' | 'rate' | undefined {
  if (answer.granted) return undefined;
  return answer.reconcile === 'applied' ? 'quota' : answer.reconcile === 'unknown' ? 'quiet' : 'rate';
}

/** The value (or error) that answers `call`, built once and given to both sides. */
function answerFor(
  call: Invocation,
  answer: Answer,
  origins: readonly string[],
  at: number,
): { ok: true; value: unknown } | { ok: false; error: unknown } {
  if (answer.reject && call.src !== 'chooseOrigin' && call.src !== 'claimRetry')
    return { ok: false, error: new Error(`${call.src} failed`) };
  switch (call.src) {
    case 'chooseOrigin':
      return {
        ok: true,
        value: {
          origin: answer.origin === undefined ? undefined : origins[answer.origin % origins.length],
          at,
          ...(answer.holdMs === undefined
            ? {}
            : {
                holdUntil: at + answer.holdMs,
                holdBy: holdByOf(answer),
                alternative:
                  answer.alternative === undefined ? undefined : origins[answer.alternative % origins.length],
              }),
        },
      };
    case 'claimRetry':
      return { ok: true, value: { granted: answer.granted, at } };
    case 'refreshAuth':
      return { ok: true, value: { at } };
    case 'reconcile':
      return { ok: true, value: { status: answer.reconcile, at } };
    default: {
      const t = answer.transport;
      const classified =
        answer.verdict === undefined
          ? {}
          : answer.classifyThrew
            ? { verdict: 'unexpected', classifyError: 'classify threw Error' }
            : { verdict: answer.verdict };
      if (t.kind === 'error')
        return {
          ok: true,
          value: {
            kind: 'error',
            phase: t.phase,
            requestSent: t.requestSent,
            message: 'x',
            attempts: t.attempts,
            at,
            ...classified,
          },
        };
      const headers: Record<string, string> =
        t.retryAfter === undefined ? {} : { 'retry-after': t.retryAfter };
      return {
        ok: true,
        value: {
          kind: 'response',
          response: new Response(null, { status: t.status, headers }),
          attempts: t.attempts,
          at,
          ...classified,
        },
      };
    }
  }
}

function answerBoth(a: Side, b: Side, pick: number, answer: Answer, origins: readonly string[]) {
  const pendingA = a.effects.pending();
  const pendingB = b.effects.pending();
  if (pendingA.length === 0 || pendingB.length === 0) return false;
  const callA = pendingA[pick % pendingA.length]!;
  const callB = pendingB[pick % pendingB.length]!;
  const result = answerFor(callA, answer, origins, a.clock.now());
  for (const call of [callA, callB]) {
    if (result.ok) call.resolve(result.value);
    else call.reject(result.error as Error);
  }
  return true;
}

/** The groups of a policy a request may set itself; `timeouts` goes with the `budgetMs` it must fit under. */
const REQUEST_GROUPS = [
  ['attempts'],
  ['budgetMs', 'timeouts'],
  ['backoff'],
  ['retryableStatuses'],
  ['retryAfter'],
];

/**
 * The case's policy, as a request policy laid over a client policy (as the client does with a request's or a
 * route's policy): the seed's low bits say which groups the request sets itself, the client setting the rest
 * (none: the client's policy alone). Drawn from the seed, not from new draws, so that the fixed seeds still
 * reach every state; the policy the machine gets is the same either way, which this checks too.
 */
function splitPolicy(input: PolicyInput, seed: number): Policy {
  const whole = definePolicy(input);
  const bits = (seed >>> 0) % 32;
  if (bits === 0) return whole;
  const client: Record<string, unknown> = { ...input };
  const request: Record<string, unknown> = {};
  REQUEST_GROUPS.forEach((group, i) => {
    if ((bits & (1 << i)) === 0) return;
    for (const key of group) {
      request[key] = client[key];
      delete client[key];
    }
  });
  const laid = layPolicy(definePolicy(client), request, 'request.policy');
  expect(laid).toEqual(whole);
  return laid;
}

function makeInput(i: RequestCase): RequestMachineInput {
  const policy = splitPolicy(i.policy, i.seed);
  return {
    requestId: 'r1',
    method: i.method,
    origins: ORIGINS.slice(0, i.origins),
    write: i.write,
    hasIdempotencyKey: i.key,
    policy,
    budgetMs: i.deadlineMs ?? policy.budgetMs,
    startedAt: 1_000,
    canRefreshAuth: i.canRefreshAuth,
    canReconcile: i.canReconcile,
    deferrable: i.deferrable,
    random: seededRandom(i.seed),
    deviceOffline: i.deviceOffline,
  };
}

export async function runRequestDifferential(
  i: RequestCase,
  stimuli: readonly RequestStimulus[],
  mutation?: Mutation,
  mut: MachineUnderTest = requestUnderTest,
) {
  const a = xstateSide(mut, makeInput(i), 1_000);
  const b = leanSide(mut, makeInput(i), 1_000, mutation);
  const origins = ORIGINS.slice(0, i.origins);
  await settle(a, b);
  expectSame(mut, a, b, 'start');
  let step = 0;
  for (const s of stimuli) {
    step++;
    if (s.kind === 'answer') answerBoth(a, b, s.answer.pick, s.answer, origins);
    else if (s.kind === 'advance') {
      await a.clock.increment(s.ms);
      await b.clock.increment(s.ms);
    } else {
      // A network change is dated by the clock (both sides' clocks read the same).
      a.send({ type: s.type, at: a.clock.now() } as { type: string });
      b.send({ type: s.type, at: b.clock.now() } as { type: string });
    }
    await settle(a, b);
    expectSame(mut, a, b, `step ${step} (${JSON.stringify(s)})`);
  }
  // Then to the end: every call answered with a success, time moved on, until both are done.
  const success: Answer = {
    pick: 0,
    reject: false,
    transport: { kind: 'response', status: 204, retryAfter: undefined, attempts: undefined },
    origin: 0,
    holdMs: undefined,
    alternative: undefined,
    granted: true,
    reconcile: 'applied',
    verdict: undefined,
    classifyThrew: false,
  };
  for (let n = 0; a.observe().status === 'active' && n < 50; n++) {
    if (!answerBoth(a, b, 0, success, origins)) {
      await a.clock.increment(5_000);
      await b.clock.increment(5_000);
    }
    await settle(a, b);
    expectSame(mut, a, b, `end ${n}`);
  }
}

describeDifferential({
  checks: 'same states, context, emitted events, invocations, timers and output at every step',
  machine: requestMachine,
  table: requestTable,
  input: inputArb,
  stimuli: fc.array(stimulusArb, { maxLength: 14 }),
  run: (input, stimuli, mutation) => runRequestDifferential(input, stimuli, mutation),
  mutants: [
    ['a guard inverted (isSuccess)', { table: invertGuard(requestTable, 'isSuccess') }],
    ['a guard inverted (isSafeToReplay)', { table: invertGuard(requestTable, 'isSafeToReplay') }],
    ['a guard inverted (isRead)', { table: invertGuard(requestTable, 'isRead') }],
    ...timerMutants(0),
  ],
});
