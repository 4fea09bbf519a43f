import type { HealthState } from '../../machines/origin-health/origin-health.types.js';
import type { DeadReason } from '../policy/durable-backoff.js';
import type { HealthCriterion } from '../policy/health-evidence.js';
import type { FailReason, FailureClass, RequestSent } from '../policy/failure.js';

/**
 * Decision events, as `onEvent` receives them: a union discriminated by `type`, each member with only the fields
 * it has (no empty `requestId` on a health change). Built field by field from an allow-list (src/runtime/redact.ts):
 * origin ids, hosts, methods, paths without their query, classes, attempt numbers, delays and times; never a
 * query string, a header value, a token or a body (rule 9).
 *
 * Every event of a request carries its `requestId` and `elapsedMs`, and the `origin`, `host` and `attempt` of the
 * attempt it is about; a request that ended or was deferred before any attempt has no `origin` or `host`.
 * `health-changed`, `origin-held` and `outbox-changed` carry what applies to them instead of empty placeholders.
 */
export type DecisionEvent =
  | AttemptStartedEvent
  | AttemptFailedEvent
  | RetryScheduledEvent
  | WaitingForHoldEvent
  | SucceededEvent
  | FailedEvent
  | DeferredEvent
  | HealthChangedEvent
  | OriginHeldEvent
  | OutboxChangedEvent;

export type DecisionEventType = DecisionEvent['type'];

/** The events of one request (or of one send of a durable entry). */
export type RequestEvent = Extract<DecisionEvent, RequestEventFields>;

/** An event as the client builds it: optional fields may be given as `undefined` (`redactEvent` drops them). */
export type DraftOf<E> = E extends unknown
  ? { [K in keyof E]: object extends Pick<E, K> ? E[K] | undefined : E[K] }
  : never;

/** A decision event as the client builds it, before `redactEvent`. */
export type DecisionEventDraft = DraftOf<DecisionEvent>;

/** The fields of a request's event of this type that its emitter gives (the rest are the request's). */
export type RequestEventDetails<T extends RequestEvent['type']> = Omit<
  DraftOf<Extract<RequestEvent, { type: T }>>,
  'type' | keyof RequestEventFields | keyof AttemptFields
>;

/**
 * Emits one event of a request: its type, the origin the attempt went to (`undefined` when none did), the
 * attempt number (or the attempts made), and the fields of its type.
 */
export type EmitRequestEvent = <T extends RequestEvent['type']>(
  type: T,
  originId: string | undefined,
  attempt: number | undefined,
  details: RequestEventDetails<T>,
) => void;

/** What every event of one request (or of one send of a durable entry) carries. */
export interface RequestEventFields {
  /** `r1`, `r2`, … for a request; the entry id for a durable request and the sends of its entry. */
  requestId: string;
  method: string;
  /** The request path without its query string or fragment. */
  path: string;
  /** The client's route that gave the request its policy: its `id`, else its index in `routes`; none without one. */
  route?: string | number;
  /** Time since the request (or the send) began, on the client's clock. */
  elapsedMs: number;
}

/** Where an attempt went: the events of an attempt, and the end of a request that made one. */
export interface AttemptFields {
  /** The origin's id. */
  origin: string;
  /** The origin's host (and port), e.g. `api.example.com`. */
  host: string;
  /** The 1-based attempt number, counted across layers; on a request's end, the attempts it made. */
  attempt: number;
}

/** How an attempt failed: never the failure's message (it may name more than rule 9 allows in a log). */
export interface FailureFields {
  failureClass: FailureClass;
  requestSent: RequestSent;
  /** The HTTP status, when the attempt got a response. */
  status?: number;
  /** The server's Retry-After, in ms. */
  retryAfterMs?: number;
}

export interface AttemptStartedEvent extends RequestEventFields, AttemptFields {
  type: 'attempt-started';
}

export interface AttemptFailedEvent extends RequestEventFields, AttemptFields, FailureFields {
  type: 'attempt-failed';
  /** `budget-exhausted`: the request's time budget ended the attempt before its own timeout. */
  reason?: 'budget-exhausted';
  /**
   * The network changed (the hint `changed`) while the attempt was in flight, so its failure was not counted
   * against the origin (docs/connectivity.md).
   */
  acrossChange?: true;
}

export interface RetryScheduledEvent extends RequestEventFields, AttemptFields, FailureFields {
  type: 'retry-scheduled';
  /** The wait before the next attempt (at least the Retry-After). */
  delayMs: number;
}

/**
 * The request's next attempt waits for a server's hold on its origin: another request of the client
 * was answered 429 or 503 with a Retry-After, and the hold ends within this request's budget. `attempt` is the
 * number of the attempt that waits.
 */
export interface WaitingForHoldEvent extends RequestEventFields, AttemptFields {
  type: 'waiting-for-hold';
  /** How long it waits. */
  delayMs: number;
  /** When the hold ends, on the client's clock. */
  holdUntil: number;
}

export interface SucceededEvent extends RequestEventFields, AttemptFields {
  type: 'succeeded';
  /** From the cache (`lifetime: 'cached'`) while the origins failed: the response may be old. */
  stale?: true;
}

/** A request ended `failed`. `origin`, `host` and `failureClass` are there when an attempt was made. */
export interface FailedEvent extends RequestEventFields, Partial<Omit<AttemptFields, 'attempt'>> {
  type: 'failed';
  reason: FailReason;
  /** The attempts made (0 when none was, e.g. offline). */
  attempt: number;
  failureClass?: FailureClass;
}

/**
 * A durable request ended `deferred`: stored, and left to the outbox. `origin`, `host` and `attempt` are there
 * when its first send ended with a failure that time can mend.
 */
export interface DeferredEvent extends RequestEventFields, Partial<AttemptFields> {
  type: 'deferred';
  reason: FailReason | 'durable';
}

/** The origin set's health moved (docs/failover.md). */
export interface HealthChangedEvent {
  type: 'health-changed';
  from: HealthState;
  to: HealthState;
  /** What moved it. */
  criterion: HealthCriterion;
  /** The origin traffic goes to now, and its host; absent when no origin can take traffic. */
  origin?: string;
  host?: string;
}

/**
 * An origin answered 429 or 503 with a Retry-After: every new attempt of the client to it is held back until
 * `holdUntil` (docs/failover.md#server-holds). Sent when a hold begins or grows longer.
 */
export interface OriginHeldEvent {
  type: 'origin-held';
  origin: string;
  host: string;
  /** The status that asked for the hold: 429 or 503. */
  status: number;
  /** The server's Retry-After, in ms. */
  retryAfterMs: number;
  /** When the hold ends, on the client's clock. */
  holdUntil: number;
  /** The request whose attempt got the answer. */
  requestId: string;
}

/** The outbox changed (docs/durable.md#outbox-changed-events); `change` says how. */
export type OutboxChangedEvent =
  | OutboxSizeChangedEvent
  | OutboxEntrySentEvent
  | OutboxEntryRetryScheduledEvent
  | OutboxEntryDeadLetteredEvent
  | OutboxEntryRevivedEvent
  | OutboxEntryReplacedEvent;

export type OutboxChange = OutboxChangedEvent['change'];

/** The number of stored entries changed. */
export interface OutboxSizeChangedEvent {
  type: 'outbox-changed';
  change: 'outbox-changed';
  /** Entries in the store, dead-lettered ones included. */
  size: number;
}

/** What every `outbox-changed` event about one entry carries. */
export interface OutboxEntryFields {
  type: 'outbox-changed';
  /** The entry's id: the `entryId` of its `deferred` outcome, and the `requestId` of its requests' events. */
  entryId: string;
}

/** An entry was sent and removed. */
export interface OutboxEntrySentEvent extends OutboxEntryFields {
  change: 'entry-sent';
  /** Attempts counted for the entry. */
  attempt: number;
}

/** A send failed; the next one is planned. */
export interface OutboxEntryRetryScheduledEvent extends OutboxEntryFields {
  change: 'entry-retry-scheduled';
  attempt: number;
  delayMs: number;
  failureClass: FailureClass;
}

/** An entry was dead-lettered: kept for the app, no longer sent. */
export interface OutboxEntryDeadLetteredEvent extends OutboxEntryFields {
  change: 'entry-dead-lettered';
  attempt: number;
  /** The entry's `deadReason`. */
  reason: DeadReason;
  /** The class of the last failure, when a send failed (not for an entry that expired waiting). */
  failureClass?: FailureClass;
}

/** `client.outbox.retry(id)` put a dead entry back in the queue. */
export interface OutboxEntryRevivedEvent extends OutboxEntryFields {
  change: 'entry-revived';
}

/**
 * A newer durable request with the entry's `replaceKey` replaced it while it was pending: it was removed unsent,
 * in the store write that added the newer one. What the older request's caller is told.
 */
export interface OutboxEntryReplacedEvent extends OutboxEntryFields {
  change: 'entry-replaced';
  reason: 'replaced';
  /** The entry that replaced it: the `entryId` of the newer request. */
  replacedBy: string;
}
