import { nextBackoff } from '../../src/policy/backoff.js';
import { jitterDraw } from '../../src/policy/jitter-draw.js';
import {
  addOutcome,
  countsAgainstOrigin,
  failoverCriterion,
  noEvidence,
  type HealthCriterion,
  type PrimaryEvidence,
} from '../../src/policy/health-evidence.js';
import { perOrigin } from '../../src/policy/per-origin.js';
import type {
  HealthChanged,
  OriginHealthContext,
  OriginHealthEvent,
  OriginHealthInput,
  ProbeOutput,
} from './origin-health.types.js';

/**
 * The origin-health machine's actions, as plain functions of `({ context, event }, params)`: context updates,
 * which return a partial context, and announcements, which return the event for its listeners. The logic
 * (origin-health.logic.ts) names them for both runners, and tests call them directly.
 */
type Args = { context: OriginHealthContext; event: OriginHealthEvent };
type AttemptEvent = Extract<OriginHealthEvent, { type: 'attempt.succeeded' | 'attempt.failed' }>;

export function initialContext(input: OriginHealthInput): OriginHealthContext {
  return {
    origins: input.origins,
    policy: input.policy,
    now: input.now,
    online: input.online ?? true,
    evidence: noEvidence,
    backupFailures: {},
    backupDownUntil: {},
    failedOverMs: input.policy.health.minFailedOverMs,
    failoverDwellMs: input.policy.health.minFailedOverMs,
    failedProbes: 0,
    jitterState: (input.seed ?? 0) >>> 0,
    probeSuccesses: 0,
    since: input.now,
    timerFrom: input.now,
    failovers: 0,
  };
}

export const primaryOf = (context: OriginHealthContext) => context.origins[0]!.id;

/** Whether an attempt's failure counts against its origin (never while offline, rule 6). */
export function isCounted(context: OriginHealthContext, event: OriginHealthEvent): boolean {
  return (
    event.type === 'attempt.failed' &&
    countsAgainstOrigin(event.failureClass, event.status, context.online, event.requestSent)
  );
}

/** The primary's evidence with this event's outcome added; unchanged for an uncounted failure. */
export function evidenceAfter(context: OriginHealthContext, event: AttemptEvent): PrimaryEvidence {
  const failed = event.type === 'attempt.failed';
  if (failed && !isCounted(context, event)) return context.evidence;
  return addOutcome(context.evidence, context.policy.health, event.at, failed);
}

/** The criterion this primary failure trips, if it counts and any does. */
export function tripped(context: OriginHealthContext, event: OriginHealthEvent): HealthCriterion | undefined {
  if (event.type !== 'attempt.failed' || !isCounted(context, event)) return undefined;
  return failoverCriterion(
    evidenceAfter(context, event),
    context.policy.health,
    event.at,
    event.failureClass,
    context.failedBackAt,
  );
}

/** An attempt's outcome on the primary, while traffic is on it. */
export function recordPrimaryOutcome({ context, event }: Args): Partial<OriginHealthContext> {
  const attempt = event as AttemptEvent;
  if (attempt.origin !== primaryOf(context)) return {};
  return { evidence: evidenceAfter(context, attempt), now: Math.max(context.now, attempt.at) };
}

/** `recordPrimaryOutcome`'s changes, written by name (`AssignImpl.write`): none, or the evidence and the time. */
export function writePrimaryOutcome(
  context: OriginHealthContext,
  changes: Partial<OriginHealthContext>,
): void {
  if (changes.evidence === undefined) return;
  context.evidence = changes.evidence;
  context.now = changes.now!;
}

/**
 * An attempt's outcome on a backup: `failoverAfter` counted failures in a row (or one TLS failure) take it
 * out of rotation for `minFailedOverMs`, as passive outlier ejection does; a success clears its count.
 */
export function recordBackupOutcome({ context, event }: Args): Partial<OriginHealthContext> {
  const attempt = event as AttemptEvent;
  const { origin } = attempt;
  if (origin === primaryOf(context)) return { now: Math.max(context.now, attempt.at) };
  // A success clears the count; a failure that says nothing about the origin (a 429, a 4xx) leaves it.
  const before = perOrigin(context.backupFailures, origin) ?? 0;
  const counted = isCounted(context, attempt);
  const failures = attempt.type === 'attempt.succeeded' ? 0 : counted ? before + 1 : before;
  const ejected =
    counted &&
    (failures >= context.policy.health.failoverAfter ||
      (attempt.type === 'attempt.failed' && attempt.failureClass === 'tls'));
  return {
    now: Math.max(context.now, attempt.at),
    backupFailures: { ...context.backupFailures, [origin]: ejected ? 0 : failures },
    backupDownUntil: ejected
      ? { ...context.backupDownUntil, [origin]: attempt.at + context.policy.health.minFailedOverMs }
      : context.backupDownUntil,
  };
}

/** `recordBackupOutcome`'s changes, written by name (`AssignImpl.write`): the time, and a backup's records. */
export function writeBackupOutcome(
  context: OriginHealthContext,
  changes: Partial<OriginHealthContext>,
): void {
  context.now = changes.now!;
  if (changes.backupFailures === undefined) return;
  context.backupFailures = changes.backupFailures;
  context.backupDownUntil = changes.backupDownUntil!;
}

export function recordConnectivity({ context, event }: Args): Partial<OriginHealthContext> {
  if (event.type !== 'connectivity.changed') return {};
  return { online: event.online, now: Math.max(context.now, event.at) };
}

/**
 * Traffic leaves the primary. Failing over again soon after a failback (before the primary has stayed up for
 * `maxFailedOverMs`) doubles the failover dwell (the failed-over time before the first probe), capped: a
 * flapping primary is given longer and longer to settle. Otherwise it starts again from `minFailedOverMs`.
 * Computed from times, so no timer runs while healthy.
 */
export function failOver({ context, event }: Args): Partial<OriginHealthContext> {
  const { minFailedOverMs, maxFailedOverMs } = context.policy.health;
  const at = 'at' in event ? event.at : context.now;
  const soonAfterFailback = context.failedBackAt !== undefined && at - context.failedBackAt < maxFailedOverMs;
  const dwellMs = soonAfterFailback
    ? Math.min(context.failoverDwellMs * 2, maxFailedOverMs)
    : minFailedOverMs;
  return {
    now: Math.max(context.now, at),
    trippedBy: tripped(context, event),
    evidence: noEvidence,
    failovers: context.failovers + 1,
    failoverDwellMs: dwellMs,
    failedOverMs: dwellMs,
    failedProbes: 0,
  };
}

/**
 * A probe failed: back to failed over until the next probe. The wait starts at `reprobeAfterMs` and doubles with
 * each failed probe in a row, up to `maxFailedOverMs` (as Envoy grows its ejection time and gRPC its connection
 * backoff), spread by `reprobeJitter` with a number drawn from the machine's own generator: short enough that a
 * recovered primary is found soon, spread so that a fleet's clients do not all come back in the same second.
 */
export function lengthenFailover({ context }: Args): Partial<OriginHealthContext> {
  const { reprobeAfterMs, maxFailedOverMs, reprobeJitter } = context.policy.health;
  const failedProbes = context.failedProbes + 1;
  const { value, next } = jitterDraw(context.jitterState);
  const waitMs = nextBackoff(
    { initialMs: reprobeAfterMs, maxMs: maxFailedOverMs, multiplier: 2, jitter: reprobeJitter },
    failedProbes,
    undefined,
    () => value,
  );
  // A wait of 0 (full jitter) would probe again at once, in the same instant: one millisecond at least.
  return { failedProbes, failedOverMs: Math.max(1, waitMs), jitterState: next };
}

/** Traffic returns to the primary, with no evidence held against it, and the backups' records cleared. */
export function failBack({ context }: Args): Partial<OriginHealthContext> {
  return { evidence: noEvidence, failedBackAt: context.now, backupFailures: {}, backupDownUntil: {} };
}

export function startProbing(): Partial<OriginHealthContext> {
  return { probeSuccesses: 0 };
}

export function recordProbe({ context }: Args, output: ProbeOutput): Partial<OriginHealthContext> {
  return {
    probeSuccesses: output.ok ? context.probeSuccesses + 1 : context.probeSuccesses,
    now: Math.max(context.now, output.at),
  };
}

/** A state with a timer begins: its timer counts from now. */
export function startTimer({ context }: Args): Partial<OriginHealthContext> {
  return { timerFrom: context.now };
}

/**
 * A timer of the machine's own fired, `ms` after its state began (its delays are the only clock it reads).
 * Counted from the state's start, not from `now`: events in between (backup traffic) have moved `now` on.
 */
export function passTime({ context }: Args, params: { ms: number }): Partial<OriginHealthContext> {
  return { now: Math.max(context.now, context.timerFrom + params.ms) };
}

/** Marks the start of a new state. */
export function markChanged({ context }: Args): Partial<OriginHealthContext> {
  return { since: context.now };
}

/** A change of state, with the criterion behind it. */
export function announceChange({ context }: Args, params: Omit<HealthChanged, 'type' | 'at'>): HealthChanged {
  return { type: 'health-changed', ...params, at: context.now };
}

/** Traffic left the primary: the criterion is the one `failOver` recorded before clearing the evidence. */
export function announceFailover(
  { context }: Args,
  { from }: { from: 'healthy' | 'suspect' },
): HealthChanged {
  return { type: 'health-changed', from, to: 'failedOver', criterion: context.trippedBy!, at: context.now };
}
