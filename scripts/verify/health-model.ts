import type { MachineLogic } from '../../src/engine/machine-logic.js';
import { originHealthLogic } from '../../machines/origin-health/origin-health.logic.js';
import { originHealthTable } from '../../machines/origin-health/origin-health.table.js';
import type { OriginHealthInput } from '../../machines/origin-health/origin-health.types.js';
import { definePolicy } from '../../src/policy/define-policy.js';
import { FAILURE_CLASSES, type FailureClass } from '../../src/policy/failure.js';
import {
  addOutcome,
  countsAgainstOrigin,
  failoverCriterion,
  type PrimaryEvidence,
} from '../../src/policy/health-evidence.js';
import type { Policy } from '../../src/policy/policy.js';
import type { Call, DrivenRun, Outcome } from './driven-run.js';
import type { MachineModel, StepInfo } from './machine-model.js';

/**
 * The origin-health machine with a primary and a backup, small thresholds (so paths go healthy -> suspect ->
 * failedOver -> probingFailback -> healthy in a few steps), online or not at start. Attempt outcomes of every
 * failure class on either origin come at the machine's `now`, and a few a long time later, so that time passes
 * between failovers as well as through the machine's own timers.
 */
const CLASSES: readonly FailureClass[] = FAILURE_CLASSES;
const ORIGINS = [
  { id: 'primary', accepts: 'all' },
  { id: 'backup', accepts: 'all' },
] as const;

const healthPolicy = (suspectAfter: number) =>
  definePolicy({
    health: {
      suspectAfter,
      failoverAfter: 2,
      recoverAfter: 1,
      failureRatio: 0.5,
      windowMs: 10_000,
      minRequests: 3,
      minFailedOverMs: 1_000,
      maxFailedOverMs: 4_000,
      probeSuccesses: 2,
      probeIntervalMs: 500,
      probeTimeoutMs: 500,
      reprobeAfterMs: 500,
      // No jitter: the generator's state is left out of the abstract context, so waits must not depend on it.
      reprobeJitter: 'none',
      failbackDwellMs: 1_000,
      dwellFailoverAfter: 3,
    },
  });

function events(maxEvents: number, type: string, run: DrivenRun) {
  // The evidence window counts every outcome: without a bound on events per path, the counts never repeat.
  if (run.sent.length >= maxEvents) return [];
  const now = run.actor.context.now as number;
  const late = now + 5_000;
  if (type === 'connectivity.changed') return [true, false].map((online) => ({ type, online, at: now }));
  if (type === 'attempt.succeeded')
    return [...ORIGINS.map((o) => ({ type, origin: o.id, at: now })), { type, origin: 'primary', at: late }];
  if (type === 'attempt.failed')
    return [
      ...ORIGINS.flatMap((o) =>
        CLASSES.map((failureClass) => ({ type, origin: o.id, failureClass, at: now })),
      ),
      { type, origin: 'primary', failureClass: 'unexpected', requestSent: 'no', at: now },
      { type, origin: 'primary', failureClass: 'connect', at: late },
    ];
  return [];
}

function answers(call: Call, run: { actor: { context: Record<string, unknown> } }) {
  const at = run.actor.context.now as number;
  const ok = (value: unknown): Outcome => ({ ok: true, value });
  return [
    { label: 'probe: ok', outcome: () => ok({ ok: true, at }) },
    { label: 'probe: failed', outcome: () => ok({ ok: false, failureClass: 'connect', at }) },
    { label: 'probe: offline', outcome: () => ok({ ok: false, failureClass: 'offline', at }) },
    { label: 'probe: throws', outcome: (): Outcome => ({ ok: false, error: new Error('probe failed') }) },
  ].filter(() => call.src === 'probe');
}

/**
 * Times relative to `now`, which is all the machine compares them with: the evidence window's buckets by age
 * (dropped once out of the window), `now` modulo the bucket width (where the next bucket starts), the time
 * since the last failback only as "within maxFailedOverMs" and "within failbackDwellMs", the running timer's
 * start by age. Left out: `since`, `failovers` and `trippedBy`, read only by `client.health()` and the
 * announcements, and `jitterState`, which the model's policy (no jitter) never reads.
 */
function abstractContext(context: Record<string, unknown>): unknown {
  const now = context.now as number;
  const policy = (context.policy as Policy).health;
  const width = Math.max(1, Math.ceil(policy.windowMs / 10));
  const evidence = context.evidence as PrimaryEvidence;
  const relative = (record: Readonly<Record<string, number>>) =>
    Object.entries(record).map(([id, t]) => [id, Math.max(0, t - now)]);
  return {
    online: context.online,
    // Guards compare the counts with their thresholds only: past them, a count says no more.
    consecutive: [
      Math.min(evidence.consecutiveFailures, Math.max(policy.suspectAfter, policy.dwellFailoverAfter)),
      Math.min(evidence.consecutiveSuccesses, policy.recoverAfter),
    ],
    window: evidence.window.buckets
      .filter((b) => b.start + width > now - policy.windowMs)
      .map((b) => [now - b.start, b.total, b.failures]),
    phase: now % width,
    backupFailures: context.backupFailures,
    backupDownUntil: relative(context.backupDownUntil as Record<string, number>),
    failedOverMs: context.failedOverMs,
    failoverDwellMs: context.failoverDwellMs,
    // Past the count whose wait reaches maxFailedOverMs, more failed probes wait no longer.
    failedProbes: Math.min(
      context.failedProbes as number,
      Math.ceil(Math.log2(policy.maxFailedOverMs / policy.reprobeAfterMs)) + 1,
    ),
    recentFailback:
      context.failedBackAt !== undefined && now - (context.failedBackAt as number) < policy.maxFailedOverMs,
    inFailbackDwell:
      context.failedBackAt !== undefined && now - (context.failedBackAt as number) < policy.failbackDwellMs,
    probeSuccesses: context.probeSuccesses,
    // A timer's start matters up to the longest timer: passTime moves `now` to at least its end.
    timerAge: Math.min(now - (context.timerFrom as number), policy.maxFailedOverMs),
  };
}

/** Check (c)'s state along a path: successful probes of this round of probing, as the answers gave them. */
export interface FailoverMonitor {
  probesOk: number;
}

const isFailedOver = (value: unknown) => value === 'failedOver';
const isProbing = (value: unknown) =>
  typeof value === 'object' && value !== null && 'probingFailback' in value;
const isOnPrimary = (value: unknown) => typeof value === 'object' && value !== null && 'onPrimary' in value;

/**
 * Check (c), from the policy's own definitions (src/policy/health-evidence.ts), not from the machine's guards:
 * traffic fails over only on a counted failure of the primary, with a backup, that trips a criterion, or on a
 * failed probe; it leaves `failedOver` only when the failed-over time has passed; it fails back only after
 * `probeSuccesses` successful probes in a row while online.
 */
export const failoverMonitor = {
  check: 'c' as const,
  initial: (): FailoverMonitor => ({ probesOk: 0 }),
  step(state: FailoverMonitor, step: StepInfo): { next: FailoverMonitor; violation?: string } {
    const { stimulus, before, after } = step;
    const context = before.context;
    const policy = (context.policy as Policy).health;
    const answer =
      stimulus.kind === 'answer' && stimulus.label.startsWith('probe') ? stimulus.outcome() : undefined;
    const probe = answer?.ok ? (answer.value as { ok: boolean; failureClass?: string }) : undefined;
    const probeCounts = context.online === true && probe?.failureClass !== 'offline';
    const probeFailed =
      (answer !== undefined && context.online === true && (!answer.ok || (probeCounts && !probe!.ok))) ||
      (stimulus.kind === 'timer' && stimulus.event.includes('probeTimeout'));
    let probesOk = isProbing(before.value) ? state.probesOk : 0;
    if (probe?.ok && probeCounts) probesOk += 1;
    const next = { probesOk: isProbing(after.value) ? probesOk : 0 };
    const fail = (why: string) => ({ next, violation: `(c) ${why}` });

    if (!isFailedOver(before.value) && isFailedOver(after.value)) {
      if (isProbing(before.value))
        return probeFailed ? { next } : fail('back to failedOver without a failed probe');
      const event = stimulus.kind === 'event' ? stimulus.event : undefined;
      const failed = event?.type === 'attempt.failed' && event.origin === 'primary';
      const e = event as unknown as {
        failureClass: FailureClass;
        status?: number;
        requestSent?: 'no';
        at: number;
      };
      const counted =
        failed && countsAgainstOrigin(e.failureClass, e.status, context.online === true, e.requestSent);
      const criterion =
        counted &&
        failoverCriterion(
          addOutcome(context.evidence as PrimaryEvidence, policy, e.at, true),
          policy,
          e.at,
          e.failureClass,
          context.failedBackAt as number | undefined,
        );
      if (!criterion || (context.origins as readonly unknown[]).length < 2)
        return fail('failed over without a counted primary failure that trips a criterion');
    }
    if (isFailedOver(before.value) && !isFailedOver(after.value)) {
      const timer = stimulus.kind === 'timer' && stimulus.event.includes('failedOverTime');
      if (!timer || !isProbing(after.value)) return fail('left failedOver before its time had passed');
    }
    if (isProbing(before.value) && isOnPrimary(after.value) && probesOk < policy.probeSuccesses)
      return fail(`failed back after ${probesOk} successful probe(s), fewer than ${policy.probeSuccesses}`);
    return { next };
  },
};

export function healthModel(bounds: { maxEvents: number }): MachineModel<FailoverMonitor> {
  const inputs = [1, 2].flatMap((suspectAfter) =>
    [true, false].map((online) => {
      const input: OriginHealthInput = {
        origins: ORIGINS,
        policy: healthPolicy(suspectAfter),
        now: 0,
        online,
      };
      return { label: `suspectAfter ${suspectAfter}${online ? '' : ' offline'}`, input: () => input };
    }),
  );
  return {
    name: 'originHealth',
    run: {
      table: originHealthTable,
      logic: originHealthLogic as unknown as MachineLogic<unknown, unknown>,
      invoked: ['probe'],
    },
    inputs,
    events: (type, run) => events(bounds.maxEvents, type, run),
    answers,
    abstractContext,
    abstractCall: (call) => [call.src],
    pathKey: (run) => run.sent.length,
    // No goal (check a): the machine never ends, and with events bounded per path, getting back to the primary
    // depends on traffic that the bound may no longer allow.
    monitor: failoverMonitor,
  };
}
