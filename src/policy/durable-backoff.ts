import type { Failure, FailureClass } from './failure.js';
import type { DurablePolicy } from './policy.js';

/**
 * When the outbox sends a durable entry again, and when it gives up on it (docs/durable.md). Pure: every
 * time is a `clock.now()` value passed in, and nothing here reads a clock.
 *
 * The waits follow Android WorkManager's `BackoffPolicy`: `exponential` doubles the wait after each failed
 * attempt, `linear` adds `initialMs` each time, and no wait is longer than `maxMs`. Each wait is then spread by
 * `jitter` with a draw of the client's Random, passed in: one outbox sends one queue, but a fleet of outboxes
 * whose sends failed in the same outage would otherwise all come back at the same moments.
 */

/** Why an entry was dead-lettered: kept in the store (`deadReason`) for the app to read. */
export type DeadReason = 'attempts-exhausted' | 'expired' | 'not-retryable';

/** The longest delay a host timer can wait (2^31 - 1 ms, about 24.8 days). */
export const MAX_TIMER_MS = 2_147_483_647;

/**
 * The backoff after `attempts` attempts (1 after the first), in ms, before any Retry-After:
 * `exponential`: `initialMs * 2^(attempts - 1)`; `linear`: `initialMs * attempts`; at most `maxMs`.
 * A count below 1 (or not a number) counts as 1; a power too large for a number counts as `maxMs`.
 */
export function durableBackoffMs(
  { backoff, initialMs, maxMs }: Pick<DurablePolicy, 'backoff' | 'initialMs' | 'maxMs'>,
  attempts: number,
): number {
  const n = attempts >= 1 ? Math.floor(attempts) : 1;
  const delay = backoff === 'linear' ? initialMs * n : initialMs * 2 ** (n - 1);
  return Math.min(maxMs, Number.isFinite(delay) ? delay : maxMs);
}

/**
 * When an entry that has made `attempts` attempts may be sent next: `now` plus its backoff, and never sooner
 * than the server's Retry-After (rule 5). A Retry-After is honoured even beyond `maxMs`: the outbox
 * never comes back sooner than the server asked, and `maxAgeMs` still bounds how long an entry may wait.
 */
export function nextDurableAttemptAt(
  durable: Pick<DurablePolicy, 'backoff' | 'initialMs' | 'maxMs'> & { jitter?: DurablePolicy['jitter'] },
  attempts: number,
  now: number,
  retryAfterMs?: number,
  random?: number,
): number {
  const retryAfter = retryAfterMs !== undefined && retryAfterMs > 0 ? retryAfterMs : 0;
  const backoff = spreadMs(durableBackoffMs(durable, attempts), durable.jitter, random);
  return now + Math.max(backoff, retryAfter);
}

/**
 * `ms` spread by `jitter` with `random`, a draw in [0, 1): `full` gives `ms * random`, `equal` `ms / 2 + ms / 2 *
 * random`, `none` `ms`. Without a draw (`random` undefined, or outside [0, 1)) it is `ms`: the outbox machine
 * stepped by hand, in a test, waits exactly.
 */
export function spreadMs(ms: number, jitter: DurablePolicy['jitter'] | undefined, random?: number): number {
  if (random === undefined || !(random >= 0 && random < 1) || jitter === undefined || jitter === 'none')
    return ms;
  return Math.round(jitter === 'full' ? ms * random : ms / 2 + (ms / 2) * random);
}

/** The clock time at which an entry created at `createdAt` expires (`maxAgeMs` after it was written). */
export function durableExpiresAt(durable: Pick<DurablePolicy, 'maxAgeMs'>, createdAt: number): number {
  return createdAt + durable.maxAgeMs;
}

/** The counters of an entry that `durableVerdict` and `deadBeforeSend` read. */
export interface DurableEntryState {
  /** Attempts made so far, the one that just failed included. */
  attempts: number;
  createdAt: number;
}

/**
 * Why an entry must be dead-lettered instead of sent at `now`, or `undefined` when it may be sent:
 * `attempts-exhausted` once it has made `maxAttempts` attempts (for instance an entry whose last attempt was
 * cut short by a crash after it was counted), `expired` once it is `maxAgeMs` old.
 */
export function deadBeforeSend(
  durable: Pick<DurablePolicy, 'maxAttempts' | 'maxAgeMs'>,
  entry: DurableEntryState,
  now: number,
): DeadReason | undefined {
  if (entry.attempts >= durable.maxAttempts) return 'attempts-exhausted';
  if (now - entry.createdAt >= durable.maxAgeMs) return 'expired';
  return undefined;
}

/** What `durableVerdict` needs to know of a failed send. */
export interface FailedSend {
  /** Whether sending the same request again could succeed (decided by the request's own rules). */
  retryable: boolean;
  /** The server's Retry-After in ms, if it sent one. */
  retryAfterMs?: number | undefined;
  /** A draw of the client's Random in [0, 1), for the wait's `jitter`. */
  random?: number | undefined;
}

/** What becomes of an entry after a failed send. */
export type DurableVerdict =
  { verdict: 'retry'; nextAttemptAt: number; delayMs: number } | { verdict: 'dead'; reason: DeadReason };

/**
 * Decides, after a failed send, whether the entry is sent again (and when) or dead-lettered, in this order:
 *
 * 1. `not-retryable`: the failure is not one another attempt could mend (a 4xx, a TLS failure, an unsafe
 *    write): sending the same request again would fail the same way.
 * 2. `attempts-exhausted`: `entry.attempts >= maxAttempts` (the failed attempt included).
 * 3. `expired`: `now - createdAt >= maxAgeMs`.
 * 4. otherwise `retry` at `nextDurableAttemptAt(durable, attempts, now, retryAfterMs, failed.random)`.
 *
 * A retry planned past the entry's expiry is still a retry: the outbox dead-letters it (`expired`) when it
 * expires, before its next attempt comes.
 */
export function durableVerdict(
  durable: DurablePolicy,
  entry: DurableEntryState,
  now: number,
  failed: FailedSend,
): DurableVerdict {
  if (!failed.retryable) return { verdict: 'dead', reason: 'not-retryable' };
  const dead = deadBeforeSend(durable, entry, now);
  if (dead) return { verdict: 'dead', reason: dead };
  const nextAttemptAt = nextDurableAttemptAt(
    durable,
    entry.attempts,
    now,
    failed.retryAfterMs,
    failed.random,
  );
  return { verdict: 'retry', nextAttemptAt, delayMs: nextAttemptAt - now };
}

/** Failures of the device's own network path, before anything reached a server. */
const networkPathClasses: ReadonlySet<FailureClass> = new Set<FailureClass>([
  'offline',
  'dns',
  'connect',
  'connect-timeout',
]);

/**
 * Whether going online should end the wait that `failure` earned (rule 6: "going online wakes waiting
 * work"): yes when nothing reached a server (`requestSent: 'no'`) because the network path failed, and the
 * server asked for no wait. A backoff earned from a server's answer (5xx, 429, Retry-After) is kept: being
 * online again does not make the server any healthier.
 */
export function wakesWhenOnline(failure: Failure, retryAfterMs?: number): boolean {
  return (
    failure.requestSent === 'no' &&
    networkPathClasses.has(failure.class) &&
    !(retryAfterMs !== undefined && retryAfterMs > 0) &&
    !(failure.retryAfterMs !== undefined && failure.retryAfterMs > 0)
  );
}
