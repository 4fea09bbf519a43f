import type { Failure, FailReason } from '../../src/policy/failure.js';
import type { Policy } from '../../src/policy/policy.js';
import type { ClassifyVerdict } from '../../src/policy/classify-verdict.js';
import type { TransportResult } from '../../src/policy/transport-result.js';
import type { RetryPlan } from '../../src/policy/budget.js';

/** An origin as the request machine sees it: an id to report and pin to. */
export interface OriginRef {
  id: string;
}

/** What starts one request machine. Everything time-related is a number from the runtime's clock. */
export interface RequestMachineInput {
  /** Correlates decision events; never a URL, header or body. */
  requestId: string;
  method: string;
  /** Origin ids in order of preference; the default `chooseOrigin` takes the first. */
  origins: readonly string[];
  /** Decided by the runtime with `isWrite(method, request.idempotent)`: a write is never replayed unsafely. */
  write: boolean;
  /**
   * The request carries an idempotency key, so a write may be replayed. The machine needs only this: the key
   * itself stays with whoever sends the attempt (the runtime adds it as the policy's idempotency header), so
   * that no snapshot, event or inspector shows it. @default false
   */
  hasIdempotencyKey?: boolean | undefined;
  policy: Policy;
  /** This request's time budget (`deadlineMs` or `policy.budgetMs`). */
  budgetMs: number;
  /** The clock's `now()` when the request began. */
  startedAt: number;
  /** True when an `auth.refresh()` exists (rule 3). */
  canRefreshAuth: boolean;
  /** True when a `reconcile` hook exists (rule 2). */
  canReconcile: boolean;
  /** Durable work is deferred to the outbox where interactive work would fail. */
  deferrable: boolean;
  /** Randomness for jitter; injected so tests are repeatable. Default `Math.random`. */
  random?: (() => number) | undefined;
  /** The device reports no network as the request starts (rule 6). Default `false`. */
  deviceOffline?: boolean | undefined;
}

/** What the `transport` actor gets for one attempt. */
export interface AttemptInput {
  requestId: string;
  origin: string;
  /** 1-based attempt number, counted across layers. */
  attempt: number;
  attemptsMax: number;
  /** How many attempts this call may make in all, the transport's own retries included. */
  attemptsLeft: number;
  timeoutMs: number;
}

/**
 * What the `transport` actor returns: the transport's result, stamped by the runtime with the clock's
 * time (`at`) and the auth generation its headers came from. Both stamps are optional for embedders.
 */
export type AttemptOutput = TransportResult & {
  at?: number | undefined;
  authGeneration?: number | undefined;
  /**
   * What the client's `classify` said of this result, when it said anything: it decides over failwise's own
   * classification (`classifyWithVerdict`). Absent: failwise classifies the result as usual.
   */
  verdict?: ClassifyVerdict | undefined;
  /** What went wrong in `classify` (it threw, or returned something else); then `verdict` is `unexpected`. */
  classifyError?: string | undefined;
};

/** What the `claimRetry` actor gets: the request that wants to retry after attempt `attempt`. */
export interface ClaimRetryInput {
  requestId: string;
  attempt: number;
}

/** Whether the client-wide retry budget lets this request retry now. */
export interface ClaimRetryOutput {
  granted: boolean;
  at?: number | undefined;
}

export interface ChooseOriginInput {
  requestId: string;
  origins: readonly string[];
  write: boolean;
  /** The origin of the previous attempt, if any. */
  previousOrigin?: string | undefined;
  attempt: number;
  /** A write that may have reached `previousOrigin` stays there: the answer is about that origin (rules 2, 7). */
  pinned?: boolean | undefined;
  /**
   * The origins that already failed this read, which is being retried (Envoy's `previous_hosts`): the next
   * attempt goes to another origin that may take it when there is one, else to the one the health machine
   * names. Empty for a write, and for an attempt that is not a retry.
   */
  avoid?: readonly string[] | undefined;
  /** When the request's budget ends: a send slot that comes later is not booked for it. */
  deadline?: number | undefined;
  /**
   * The Retry-After (ms) that the answer to the request's previous attempt named, if it named one: the server
   * said when this request may come back, so the client's quiet period after a throttle does not hold it.
   */
  retryAfterMs?: number | undefined;
}

/**
 * `origin: undefined` means no usable origin: the request ends `no-healthy-origin`. For a pinned request the
 * answer is about the origin it is pinned to (its `origin` is not used).
 */
export interface ChooseOriginOutput {
  origin: string | undefined;
  at?: number;
  /**
   * The server asked (429/503 with Retry-After) that the origin of the next attempt get nothing new before this
   * time (the client's shared server holds). Absent when no hold is in force.
   */
  holdUntil?: number | undefined;
  /**
   * What `holdUntil` waits for when it is not a server's Retry-After: the origin's `RateLimit` quota is spent
   * until its reset (`quota`), the client is quiet towards it after it throttled (`quiet`), or the client's send
   * rate to it gives this attempt a slot then (`rate`). A request that cannot wait for any of these ends
   * `throttled`.
   */
  holdBy?: 'quota' | 'quiet' | 'rate' | undefined;
  /** Another origin the request may take now, held by no server, for a request that cannot wait for the hold. */
  alternative?: string | undefined;
}

export interface RefreshAuthInput {
  requestId: string;
  origin: string;
  /** The auth generation the 401 was answered to; a newer one means someone already refreshed. */
  authGeneration?: number | undefined;
}

export interface RefreshAuthOutput {
  at?: number;
}

export interface ReconcileInput {
  requestId: string;
  failure: Failure;
  attempts: number;
}

export type ReconcileOutput = (
  { status: 'applied'; response?: Response } | { status: 'not-applied' } | { status: 'unknown' }
) & { at?: number };

export interface RequestMachineContext {
  requestId: string;
  method: string;
  origins: readonly string[];
  write: boolean;
  /** Whether the request has an idempotency key; never the key (see `RequestMachineInput`). */
  hasIdempotencyKey: boolean;
  policy: Policy;
  budgetMs: number;
  startedAt: number;
  canRefreshAuth: boolean;
  canReconcile: boolean;
  deferrable: boolean;
  random: () => number;
  /** The connectivity source's latest hint says offline: no further attempt is started (rule 6). */
  deviceOffline: boolean;
  /** The latest time the machine knows of (stamped by actors, or computed from its own delays). */
  now: number;
  /** Attempts used across all layers. */
  attempts: number;
  attemptStartedAt: number;
  /** An attempt has started and not yet reported. */
  inFlight: boolean;
  /**
   * The network changed (the hint `changed`) while the attempt in flight was under way: however it ends, it
   * tells nothing about its origin (a socket of the old network broke, not the server).
   */
  changedInFlight: boolean;
  origin?: string | undefined;
  /** A write that may have reached `origin` stays there (rules 2 and 7). */
  pinned: boolean;
  /** The next attempt is a retry after a failure (a wait was planned), not the first or a resend. */
  retrying: boolean;
  /** The origins whose failure this request retried, in order, each once (Envoy's `previous_hosts`). */
  failedOrigins: readonly string[];
  /**
   * The request holds a slot of the client-wide retry budget (it holds it until it ends): a retry to an origin
   * that already failed it asks for one; a read's retry to another origin does not.
   */
  holdsRetrySlot: boolean;
  failures: Failure[];
  lastResponse?: Response | undefined;
  response?: Response | undefined;
  authRefreshed: boolean;
  authGeneration?: number | undefined;
  /** `reconcile` said the write was not applied: sending it again is safe. */
  replayCleared: boolean;
  reconciled: boolean;
  /** Waits so far: the wait after attempt n is retry n of the backoff. */
  retries: number;
  previousDelayMs?: number | undefined;
  plan?: RetryPlan | undefined;
  reason?: FailReason | 'durable' | undefined;
  /**
   * Until when the next attempt waits, from `chooseOrigin`: a server's hold on its origin, or its send slot; a
   * hold that many requests wait out ends for each at a jittered time (`policy.retryAfter.releaseSpreadMs`).
   */
  holdUntil?: number | undefined;
  /** What `holdUntil` waits for, when it is the client's throttle rather than a server hold. */
  holdBy?: 'quota' | 'quiet' | 'rate' | undefined;
  /** An origin free of holds that the request may take instead, from `chooseOrigin`. */
  alternative?: string | undefined;
}

export type RequestMachineEvent =
  | { type: 'request.cancel' }
  /**
   * Connectivity hints (rule 6). Offline ends a backoff wait at once, and an attempt in flight is left
   * to finish, after which no further attempt is started. Online only clears that; it decides nothing else.
   */
  | { type: 'connectivity.offline' }
  | { type: 'connectivity.online' }
  /**
   * The network switched (Wi-Fi to cellular), at the clock's `at`. A read whose attempt is in flight is ended
   * and sent again at once (no backoff; it counts as an attempt); a write in flight is left alone, since
   * ending it would make its outcome unknown. Either way that attempt's end is never held against its origin.
   */
  | { type: 'connectivity.changed'; at: number };

/** Emitted as the request goes: the runtime turns these into redacted decision events. */
export type RequestMachineEmitted =
  | { type: 'attempt-started'; attempt: number; origin: string; at: number }
  | { type: 'attempt-succeeded'; attempt: number; origin: string; latencyMs: number; at: number }
  | {
      type: 'attempt-failed';
      attempt: number;
      origin: string;
      failure: Failure;
      at: number;
      /** The request's time budget ended the attempt before its own timeout: not evidence against the origin. */
      cutByBudget?: true;
      /** The network changed while the attempt was in flight: not evidence against the origin. */
      acrossChange?: true;
      /** The transport threw rather than report a result (code on the device): not evidence against the origin. */
      crashed?: true;
    }
  | {
      type: 'retry-scheduled';
      attempt: number;
      origin: string;
      delayMs: number;
      failure: Failure;
      at: number;
    }
  | {
      /** The next attempt waits for a server's hold on its origin; `attempt` is that attempt's number. */
      type: 'waiting-for-hold';
      attempt: number;
      origin: string;
      delayMs: number;
      holdUntil: number;
      at: number;
    };

export type RequestMachineOutput =
  | { status: 'succeeded'; response: Response; origin: string; attempts: number; reconciled?: true }
  | {
      status: 'failed';
      reason: FailReason;
      failure?: Failure;
      response?: Response;
      origin?: string;
      attempts: number;
      /** For `retry-after-exceeds-budget` from a server hold, or `throttled`: when the hold on `origin` ends. */
      holdUntil?: number;
    }
  | {
      status: 'deferred';
      reason: FailReason | 'durable';
      failure?: Failure;
      origin?: string;
      attempts: number;
      failures: Failure[];
    };
