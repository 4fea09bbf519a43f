import { fc } from '@fast-check/vitest';
import type { HealthPolicy, PolicyInput } from '../../src/policy/policy.js';
import type { TransportErrorPhase, TransportResult } from '../../src/transports/transport.js';
import type { ScriptedReply } from './scripted-transport.js';
import { respond } from './scripted-transport.js';

/** Any valid policy, including the corner cases: one attempt, zero backoff, a budget of 1 ms. */
export const policyArb: fc.Arbitrary<PolicyInput> = fc
  .record({
    max: fc.integer({ min: 1, max: 6 }),
    budgetMs: fc.integer({ min: 1, max: 20_000 }),
    attemptShare: fc.double({ min: 0.01, max: 1, noNaN: true }),
    connectShare: fc.double({ min: 0.01, max: 1, noNaN: true }),
    initialMs: fc.integer({ min: 0, max: 2_000 }),
    extraMaxMs: fc.integer({ min: 0, max: 10_000 }),
    multiplier: fc.double({ min: 1, max: 4, noNaN: true }),
    jitter: fc.constantFrom<'full' | 'equal' | 'decorrelated' | 'none'>(
      'full',
      'equal',
      'decorrelated',
      'none',
    ),
    retryableStatuses: fc.subarray([408, 409, 425, 429, 500, 502, 503, 504]),
    retryAfterMaxMs: fc.integer({ min: 0, max: 100_000 }),
    retryBudget: fc.record({
      percent: fc.integer({ min: 0, max: 100 }),
      minConcurrency: fc.integer({ min: 0, max: 3 }),
    }),
  })
  .map((p) => {
    const attemptMs = Math.max(1, Math.floor(p.budgetMs * p.attemptShare));
    return {
      attempts: { max: p.max },
      budgetMs: p.budgetMs,
      timeouts: { attemptMs, connectMs: Math.max(1, Math.floor(attemptMs * p.connectShare)) },
      backoff: {
        initialMs: p.initialMs,
        maxMs: p.initialMs + p.extraMaxMs,
        multiplier: p.multiplier,
        jitter: p.jitter,
      },
      retryableStatuses: p.retryableStatuses,
      retryAfter: { maxMs: p.retryAfterMaxMs },
      retryBudget: p.retryBudget,
    };
  });

const retryAfterArb = fc.option(
  fc.oneof(
    fc.integer({ min: 0, max: 120 }).map(String),
    fc.integer({ min: -5_000, max: 120_000 }).map((ms) => new Date(ms).toUTCString()),
    fc.constantFrom('soon', '-1', '1.5', ''),
  ),
  { nil: undefined },
);

const statusArb = fc.oneof(
  fc.constantFrom(200, 201, 204, 304, 400, 401, 403, 404, 408, 409, 422, 429, 500, 502, 503, 504),
  fc.integer({ min: 200, max: 599 }),
);

/** Every phase a transport can report, in the order of docs/transports.md's table. */
export const TRANSPORT_ERROR_PHASES: readonly TransportErrorPhase[] = [
  'offline',
  'dns',
  'connect',
  'connect-timeout',
  'tls',
  'response-timeout',
  'connection-lost',
  'unknown',
];

const phaseArb = fc.constantFrom(...TRANSPORT_ERROR_PHASES);

/** Every kind of transport outcome: any status with any Retry-After, any failure phase, a hang or a crash. */
export const replyArb: fc.Arbitrary<ScriptedReply> = fc.record({
  reply: fc.oneof(
    fc
      .record({ status: statusArb, retryAfter: retryAfterArb, attempts: fc.integer({ min: 1, max: 3 }) })
      .map(({ status, retryAfter, attempts }) => ({
        ...respond(status, retryAfter === undefined ? {} : { 'retry-after': retryAfter }),
        attempts,
      })),
    fc
      .record({
        phase: phaseArb,
        requestSent: fc.option(fc.constantFrom<'no' | 'yes' | 'unknown'>('no', 'yes', 'unknown'), {
          nil: undefined,
        }),
        attempts: fc.integer({ min: 1, max: 3 }),
      })
      .map(({ phase, requestSent, attempts }): TransportResult => ({
        kind: 'error',
        phase,
        message: `generated ${phase}`,
        attempts,
        ...(requestSent === undefined ? {} : { requestSent }),
      })),
    fc.constantFrom('hang' as const, 'throw' as const),
  ),
  latencyMs: fc.integer({ min: 0, max: 5_000 }),
});

/** Any health policy with small counts and durations, so that every transition happens within a few dozen steps. */
export const healthPolicyArb: fc.Arbitrary<Partial<HealthPolicy>> = fc
  .record({
    suspectAfter: fc.integer({ min: 1, max: 3 }),
    failoverExtra: fc.integer({ min: 0, max: 3 }),
    recoverAfter: fc.integer({ min: 1, max: 3 }),
    failureRatioTwentieths: fc.integer({ min: 1, max: 20 }),
    windowMs: fc.oneof(fc.integer({ min: 1, max: 20 }), fc.integer({ min: 1, max: 2_000 })),
    minRequests: fc.integer({ min: 1, max: 6 }),
    minFailedOverMs: fc.integer({ min: 1, max: 300 }),
    maxFailedOverExtra: fc.oneof(fc.constant(0), fc.integer({ min: 0, max: 2_000 })),
    probeSuccesses: fc.integer({ min: 1, max: 3 }),
    probeIntervalMs: fc.integer({ min: 1, max: 100 }),
    probeTimeoutMs: fc.integer({ min: 1, max: 100 }),
    reprobeAfterMs: fc.integer({ min: 1, max: 300 }),
    reprobeJitter: fc.constantFrom('equal' as const, 'full' as const, 'none' as const),
    failbackDwellMs: fc.oneof(fc.constant(0), fc.integer({ min: 1, max: 300 })),
    dwellFailoverExtra: fc.integer({ min: 0, max: 3 }),
  })
  .map((p) => ({
    suspectAfter: p.suspectAfter,
    failoverAfter: p.suspectAfter + p.failoverExtra,
    recoverAfter: p.recoverAfter,
    failureRatio: p.failureRatioTwentieths / 20,
    windowMs: p.windowMs,
    minRequests: p.minRequests,
    minFailedOverMs: p.minFailedOverMs,
    maxFailedOverMs: p.minFailedOverMs + p.maxFailedOverExtra,
    probeSuccesses: p.probeSuccesses,
    probeIntervalMs: p.probeIntervalMs,
    probeTimeoutMs: p.probeTimeoutMs,
    reprobeAfterMs: Math.min(p.reprobeAfterMs, p.minFailedOverMs + p.maxFailedOverExtra),
    reprobeJitter: p.reprobeJitter,
    failbackDwellMs: p.failbackDwellMs,
    dwellFailoverAfter: p.suspectAfter + p.failoverExtra + p.dwellFailoverExtra,
  }));
