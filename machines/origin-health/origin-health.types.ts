import type { FailureClass, RequestSent } from '../../src/policy/failure.js';
import type { HealthCriterion, PrimaryEvidence } from '../../src/policy/health-evidence.js';
import type { Policy } from '../../src/policy/policy.js';
import type { HealthState } from '../../src/policy/health-state.js';
import type { HealthOrigin } from '../../src/policy/select-origin.js';

// Routing (src/policy/select-origin.ts) reads these too; the machine's users find them with its other types.
export type { HealthOrigin, HealthState };

export interface OriginHealthInput {
  origins: readonly HealthOrigin[];
  policy: Policy;
  /** The clock's time when the machine starts. */
  now: number;
  /** What the connectivity source says at start; `true` when there is none. @default true */
  online?: boolean | undefined;
  /**
   * The seed of the machine's jitter generator (an unsigned 32-bit integer): each client passes its own, so a
   * fleet's clients spread their probes apart. @default 0
   */
  seed?: number | undefined;
}

export interface OriginHealthContext {
  origins: readonly HealthOrigin[];
  policy: Policy;
  /** The latest clock time the machine knows of (from events and probe results). */
  now: number;
  online: boolean;
  /** The primary's recent outcomes; reset on each failover and failback. */
  evidence: PrimaryEvidence;
  /** Consecutive counted failures per backup, while it carries traffic. */
  backupFailures: Readonly<Record<string, number>>;
  /** A backup that failed `failoverAfter` times in a row takes no traffic until this time. */
  backupDownUntil: Readonly<Record<string, number>>;
  /** How long the current (or next) failed-over period lasts: the failover dwell, or the wait after a failed probe. */
  failedOverMs: number;
  /** The failed-over time before the first probe of this failover: `minFailedOverMs`, doubled on flapping, capped. */
  failoverDwellMs: number;
  /** Failed probes in a row since the failover: the wait before the next probe grows with them. */
  failedProbes: number;
  /** The state of the jitter generator (src/policy/jitter-draw.ts). */
  jitterState: number;
  /** The criterion of the last failover. */
  trippedBy?: HealthCriterion | undefined;
  /** When traffic last failed back to the primary. */
  failedBackAt?: number | undefined;
  /** Consecutive successful probes in this round of probing. */
  probeSuccesses: number;
  /** When the current state began. */
  since: number;
  /** When the running timer (failed-over time, probe timeout, probe interval) started. */
  timerFrom: number;
  /** Failovers so far (for `client.health()` and tests). */
  failovers: number;
}

export type OriginHealthEvent =
  | { type: 'attempt.succeeded'; origin: string; latencyMs?: number | undefined; at: number }
  | {
      type: 'attempt.failed';
      origin: string;
      failureClass: FailureClass;
      status?: number | undefined;
      /** Whether the request went out; an `unexpected` failure that sent nothing says nothing of the origin. */
      requestSent?: RequestSent | undefined;
      at: number;
    }
  | { type: 'connectivity.changed'; online: boolean; at: number };

/** What the `probe` actor gets: the primary's id. */
export interface ProbeInput {
  origin: string;
}

/**
 * What a probe found. A probe should resolve, also when it failed (`ok: false`): a rejection carries no time,
 * so the machine dates the failed probe at its start. `failureClass: 'offline'` (the device had no network) is neither a success nor a
 * failure: the probe is sent again after `probeIntervalMs`.
 */
export interface ProbeOutput {
  ok: boolean;
  failureClass?: FailureClass | undefined;
  /** The clock's time when the probe answered: the machine dates what follows by it. */
  at: number;
}

/** Emitted on every change of state: the runtime turns it into a `health-changed` decision event. */
export interface HealthChanged {
  type: 'health-changed';
  from: HealthState;
  to: HealthState;
  criterion: HealthCriterion;
  at: number;
}
