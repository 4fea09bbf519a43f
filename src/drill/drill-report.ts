/**
 * What one drill scenario produced, as plain JSON: the verdict and its checks, what the policy decided, what
 * the origins saw, and a timeline for the HTML report. `failwise-drill --json` prints an array of these.
 * Times in a timeline are simulated milliseconds since the scenario began.
 */
import type { DecisionEvent } from '../runtime/decision-events.js';

export interface DrillCheck {
  /** What was expected, e.g. `the write was applied once`. */
  label: string;
  pass: boolean;
  /** What was seen, when it helps to read a failure, e.g. `applied 2`. */
  detail?: string;
}

/** One attempt, from `attempt-started` to the event that ended it. */
export interface TimelineAttempt {
  requestId: string;
  origin: string;
  method: string;
  path: string;
  attempt: number;
  startAt: number;
  endAt: number;
  /** `ok`, or the failure class (`response-timeout`, `unavailable`, ...), with the status when there was one. */
  result: string;
}

/** A stretch of time the origin set spent in one health state. */
export interface TimelineHealthBand {
  state: string;
  /** Where traffic went during the band. */
  activeOrigin: string;
  from: number;
  to: number;
}

/** A wait between two attempts of one request (backoff or Retry-After). */
export interface TimelineWait {
  requestId: string;
  origin: string;
  from: number;
  to: number;
  /** Set when the server's Retry-After set the wait. */
  retryAfterMs?: number;
}

/** One request an origin received. */
export interface TimelineServed {
  origin: string;
  at: number;
  method: string;
  path: string;
  /** What the origin did: `200`, `503 retry-after 2`, `hang`, `drop`, with `applied` when it applied a write. */
  reply: string;
  applied: boolean;
  probe: boolean;
}

/** A decision event, stamped with the drill's simulated time. */
export type TimelineEvent = DecisionEvent & { at: number };

export interface ScenarioTimeline {
  /** Simulated time the scenario covered. */
  durationMs: number;
  origins: string[];
  attempts: TimelineAttempt[];
  health: TimelineHealthBand[];
  waits: TimelineWait[];
  served: TimelineServed[];
  events: TimelineEvent[];
  /** Moments the scenario itself marked, such as `offline` or `primary restarted`. */
  marks: Array<{ at: number; label: string }>;
}

export interface OriginSeen {
  origin: string;
  /** Requests the origin received, probes included. */
  requests: number;
  probes: number;
  writesApplied: number;
}

export interface ScenarioReport {
  name: string;
  title: string;
  /** The expected behaviour, in one sentence. */
  expected: string;
  verdict: 'pass' | 'fail';
  checks: DrillCheck[];
  /** Set when the scenario threw instead of finishing. */
  error?: string;
  decided: {
    requests: number;
    attempts: number;
    /** Each wait between attempts, in ms, in order. */
    waitsMs: number[];
    /** Origins attempts went to, in first-use order. */
    origins: string[];
    /** Each request's end: `succeeded`, `failed unsafe-to-replay`, `deferred`, ... */
    outcomes: string[];
  };
  seen: OriginSeen[];
  timeline: ScenarioTimeline;
  /** Wall-clock time the scenario took on this machine. */
  realMs: number;
}

export interface DrillReport {
  /** ISO time the drill started. */
  startedAt: string;
  node: string;
  passed: number;
  failed: number;
  realMs: number;
  scenarios: ScenarioReport[];
}
