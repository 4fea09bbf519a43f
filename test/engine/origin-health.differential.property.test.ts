import { fc } from '@fast-check/vitest';
import type { MachineLogic } from '../../src/engine/machine-logic.js';
import { originHealthLogic } from '../../machines/origin-health/origin-health.logic.js';
import { originHealthMachine } from '../../machines/origin-health/origin-health.machine.js';
import { originHealthTable } from '../../machines/origin-health/origin-health.table.js';
import type {
  HealthOrigin,
  OriginHealthEvent,
  OriginHealthInput,
} from '../../machines/origin-health/origin-health.types.js';
import { definePolicy } from '../../src/policy/define-policy.js';
import { FAILURE_CLASSES, type FailureClass, type RequestSent } from '../../src/policy/failure.js';
import { healthPolicyArb } from '../helpers/arbitraries.js';
import {
  advanceBoth,
  answerBoth,
  describeDifferential,
  expectSame,
  invertGuard,
  leanSide,
  sendBoth,
  settleIn,
  timerMutants,
  toNextTimer,
  xstateSide,
  type MachineUnderTest,
  type Mutation,
  type Outcome,
} from './differential-harness.js';

/**
 * The lean executor runs the origin-health machine exactly as XState does: for random health policies (with
 * small durations, so that runs go healthy -> suspect -> failedOver -> probingFailback -> healthy), 1-3
 * origins, attempt outcomes on the primary and the backups, connectivity changes, probe answers (success,
 * failure, offline, rejection) and clock advances, compared after every step. The machine never finishes.
 */
export const originHealthUnderTest: MachineUnderTest = {
  machine: originHealthMachine,
  table: originHealthTable,
  logic: originHealthLogic as unknown as MachineLogic<never, never>,
  invoked: ['probe'],
};

const START = 1_000_000;

const inputArb = fc.record({
  health: healthPolicyArb,
  /** The primary, then 0-2 backups, each taking all requests or reads only. */
  origins: fc.oneof(
    { weight: 1, arbitrary: fc.constant<HealthOrigin['accepts'][]>(['all']) },
    // With backups, mostly: a single origin never fails over.
    {
      weight: 4,
      arbitrary: fc.array(fc.constantFrom<HealthOrigin['accepts']>('all', 'reads'), {
        minLength: 2,
        maxLength: 3,
      }),
    },
  ),
  /** Mostly online (or left out): offline, no failure counts. */
  online: fc.oneof({ weight: 3, arbitrary: fc.constant(undefined) }, { weight: 1, arbitrary: fc.boolean() }),
});

/** Classes that count against an origin: most failures are of these, so that runs fail over. */
const COUNTED: readonly FailureClass[] = [
  'dns',
  'connect',
  'connect-timeout',
  'tls',
  'response-timeout',
  'connection-lost',
  'unavailable',
  'server-error',
];

const outcomeArb = fc.oneof(
  {
    weight: 3,
    arbitrary: fc.record({
      ok: fc.constant(true as const),
      latencyMs: fc.option(fc.integer({ min: 0, max: 500 }), { nil: undefined }),
    }),
  },
  {
    weight: 5,
    arbitrary: fc.record({
      ok: fc.constant(false as const),
      failureClass: fc.oneof(
        { weight: 4, arbitrary: fc.constantFrom(...COUNTED) },
        { weight: 1, arbitrary: fc.constantFrom(...FAILURE_CLASSES) },
      ),
      status: fc.option(fc.constantFrom(400, 401, 404, 408, 429, 500, 502, 503, 504), { nil: undefined }),
      requestSent: fc.option(fc.constantFrom<RequestSent>('no', 'yes', 'unknown'), { nil: undefined }),
    }),
  },
);

const stimulusArb = fc.oneof(
  {
    weight: 6,
    arbitrary: fc.record({
      kind: fc.constant('attempt' as const),
      /** 0 is the primary (most traffic goes there); otherwise a backup, modulo the origins there are. */
      origin: fc.oneof({ weight: 3, arbitrary: fc.constant(0) }, fc.nat(2)),
      outcome: outcomeArb,
      times: fc.integer({ min: 1, max: 3 }),
    }),
  },
  /** The primary down for a while: counted failures in a row, enough to trip failover with most policies. */
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant('attempt' as const),
      origin: fc.constant(0),
      outcome: fc.record({
        ok: fc.constant(false as const),
        failureClass: fc.constantFrom(...COUNTED),
        status: fc.constant(undefined),
        requestSent: fc.constant(undefined),
      }),
      times: fc.integer({ min: 2, max: 6 }),
    }),
  },
  {
    weight: 4,
    arbitrary: fc.record({
      kind: fc.constant('probe' as const),
      result: fc.oneof(
        { weight: 5, arbitrary: fc.constant('ok' as const) },
        fc.constantFrom('fail' as const, 'offline' as const, 'reject' as const),
      ),
      failureClass: fc.constantFrom(...FAILURE_CLASSES),
      /** With no probe in flight, time moves on to the next timer (up to 3 times) until one is. */
      wait: fc.nat(3).map((n) => n > 0),
    }),
  },
  {
    weight: 3,
    arbitrary: fc.record({
      kind: fc.constant('advance' as const),
      ms: fc.oneof(
        { weight: 3, arbitrary: fc.integer({ min: 0, max: 40 }) },
        { weight: 2, arbitrary: fc.integer({ min: 1, max: 400 }) },
        { weight: 1, arbitrary: fc.integer({ min: 1, max: 3_000 }) },
      ),
    }),
  },
  /** To the next timer's due time, or 1 ms short of it: every timer fires exactly on time, or just not yet. */
  {
    weight: 3,
    arbitrary: fc.record({ kind: fc.constant('toTimer' as const), short: fc.nat(3).map((n) => n === 0) }),
  },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('connectivity' as const), online: fc.boolean() }) },
);

type ValueOf<A> = A extends fc.Arbitrary<infer T> ? T : never;
export type HealthCase = ValueOf<typeof inputArb>;
export type HealthStimulus = ValueOf<typeof stimulusArb>;
type ProbeStimulus = Extract<HealthStimulus, { kind: 'probe' }>;

const originsOf = (i: HealthCase): HealthOrigin[] =>
  i.origins.map((accepts, n) => ({ id: n === 0 ? 'primary' : `backup-${n}`, accepts }));

function makeInput(i: HealthCase): OriginHealthInput {
  return {
    origins: originsOf(i),
    policy: definePolicy({ health: i.health }),
    now: START,
    ...(i.online === undefined ? {} : { online: i.online }),
  };
}

/** The probe's answer (the harness has the machine's only actor answer it), dated by the side's clock. */
function probeAnswer(s: ProbeStimulus, at: number): Outcome {
  switch (s.result) {
    case 'ok':
      return { ok: true, value: { ok: true, at } };
    case 'offline':
      return { ok: true, value: { ok: false, failureClass: 'offline', at } };
    case 'fail':
      return { ok: true, value: { ok: false, failureClass: s.failureClass, at } };
    case 'reject':
      return { ok: false, error: new Error('probe failed') };
  }
}

function attemptEvent(
  s: Extract<HealthStimulus, { kind: 'attempt' }>,
  origin: string,
  at: number,
): OriginHealthEvent {
  const { outcome } = s;
  if (outcome.ok) return { type: 'attempt.succeeded', origin, latencyMs: outcome.latencyMs, at };
  return {
    type: 'attempt.failed',
    origin,
    failureClass: outcome.failureClass,
    status: outcome.status,
    requestSent: outcome.requestSent,
    at,
  };
}

export async function runHealthDifferential(
  i: HealthCase,
  stimuli: readonly HealthStimulus[],
  mutation?: Mutation,
  mut: MachineUnderTest = originHealthUnderTest,
) {
  // One input for both: its policy and origins are frozen data that neither side changes.
  const input = makeInput(i);
  const a = xstateSide(mut, input, START);
  const b = leanSide(mut, input, START, mutation);
  const origins = originsOf(i).map((o) => o.id);
  // Every wait of the machine is at least 1 ms: one round lets every answer's reaction run on both sides.
  await settleIn(1, a, b);
  expectSame(mut, a, b, 'start');
  let step = 0;
  for (const s of stimuli) {
    step++;
    const where = `step ${step} (${JSON.stringify(s)})`;
    if (s.kind === 'attempt') {
      const origin = origins[s.origin % origins.length]!;
      for (let n = 0; n < s.times; n++) {
        sendBoth(a, b, (at) => attemptEvent(s, origin, at));
        await settleIn(1, a, b);
        expectSame(mut, a, b, `${where} #${n + 1}`);
      }
      continue;
    }
    if (s.kind === 'probe') {
      for (let n = 0; s.wait && n < 3 && a.effects.pending().length === 0; n++) {
        await toNextTimer(a, b, 0);
        await settleIn(1, a, b);
        expectSame(mut, a, b, `${where}: timer ${n + 1}`);
      }
      answerBoth(a, b, 0, (_call, at) => probeAnswer(s, at));
    } else if (s.kind === 'advance') await advanceBoth(a, b, s.ms);
    else if (s.kind === 'toTimer') await toNextTimer(a, b, s.short ? 1 : 0);
    else sendBoth(a, b, (at) => ({ type: 'connectivity.changed', online: s.online, at }));
    await settleIn(1, a, b);
    expectSame(mut, a, b, where);
  }
  // Then towards failback: online, every probe succeeds, time moves on (the machine never finishes).
  sendBoth(a, b, (at) => ({ type: 'connectivity.changed', online: true, at }));
  await settleIn(1, a, b);
  expectSame(mut, a, b, 'end: online');
  const ok: ProbeStimulus = { kind: 'probe', result: 'ok', failureClass: 'dns', wait: false };
  for (let n = 0; n < 8; n++) {
    if (!answerBoth(a, b, 0, (_call, at) => probeAnswer(ok, at))) await toNextTimer(a, b, 0);
    await settleIn(1, a, b);
    expectSame(mut, a, b, `end ${n}`);
  }
}

describeDifferential({
  checks: 'same states, context, emitted events, invocations and timers at every step',
  machine: originHealthMachine,
  table: originHealthTable,
  input: inputArb,
  stimuli: fc.array(stimulusArb, { maxLength: 16 }),
  run: (input, stimuli, mutation) => runHealthDifferential(input, stimuli, mutation),
  mutants: [
    ['a guard inverted (tripsFailover)', { table: invertGuard(originHealthTable, 'tripsFailover') }],
    ['a guard inverted (probesSucceeded)', { table: invertGuard(originHealthTable, 'probesSucceeded') }],
    // 1 ms, not 0: with every wait at 0 the lean side would go failedOver -> probing -> failedOver ... in
    // microtasks for ever, and never let the comparison run.
    ...timerMutants(1),
  ],
});
