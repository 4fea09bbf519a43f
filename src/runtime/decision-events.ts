import type { DeadReason } from '../policy/durable-backoff.js';
import type { HealthCriterion } from '../policy/health-evidence.js';
import type { FailReason, FailureClass, RequestSent } from '../policy/failure.js';

export type DecisionEventType =
  | 'attempt-started'
  | 'attempt-failed'
  | 'retry-scheduled'
  | 'succeeded'
  | 'failed'
  | 'deferred'
  | 'health-changed'
  | 'outbox-changed';

/**
 * One decision, as `onEvent` receives it. Built field by field from an allow-list (src/runtime/redact.ts):
 * origin ids, hosts, methods, paths without their query, classes, attempt numbers, delays and times;
 * never a query string, a header value, a token or a body (CONTRACT rule 9).
 */
export interface DecisionEvent {
  type: DecisionEventType;
  requestId: string;
  origin: string;
  /** The origin's host (and port), e.g. `api.example.com`. */
  host: string;
  method: string;
  /** The request path without its query string or fragment. */
  path: string;
  attempt: number;
  /** Time since the request began, on the client's clock. */
  elapsedMs: number;
  failureClass?: FailureClass | undefined;
  requestSent?: RequestSent | undefined;
  status?: number | undefined;
  delayMs?: number | undefined;
  retryAfterMs?: number | undefined;
  /** Why a request failed or was deferred, or why an outbox entry was dead-lettered. */
  reason?: FailReason | 'durable' | DeadReason | undefined;
  /**
   * `attempt-failed`: the network changed (the hint `changed`) while the attempt was in flight, so its failure
   * was not counted against the origin (docs/connectivity.md).
   */
  acrossChange?: true | undefined;
  /** `succeeded` from the cache: the response may be old (`lifetime: 'cached'`). */
  stale?: boolean | undefined;
  /** `outbox-changed`: what changed (`entry-sent`, `entry-retry-scheduled`, `entry-dead-lettered`, ...). */
  change?: string | undefined;
  /** `outbox-changed`: entries in the store, dead-lettered ones included. */
  size?: number | undefined;
  /** `health-changed`: the states before and after, and the criterion that moved it (docs/failover.md). */
  from?: string | undefined;
  to?: string | undefined;
  criterion?: HealthCriterion | undefined;
}
