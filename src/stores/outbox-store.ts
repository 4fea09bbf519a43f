import type { Clock } from '../clock/clock.js';
import type { Failure } from '../policy/failure.js';
import type { RequestPolicyInput } from '../policy/request-policy.js';

/** A durable request as kept in the store: everything needed to send it again after a restart. */
export interface StoredRequest {
  method: string;
  /** Joined to the origin's url when sent; may hold a query string, so never logged (rule 9). */
  path: string;
  /** Lower-case names. Credentials (auth headers) are never stored: they are added at each send. */
  headers: Record<string, string>;
  body?: string | Uint8Array | undefined;
  /** The request's own `idempotent` override, if it gave one. */
  idempotent?: boolean | undefined;
  /** The request's own policy (`attempts`, `backoff`, ...), when it gave one: every send runs by it. */
  policy?: RequestPolicyInput | undefined;
}

/** One entry of the outbox. Stores keep it as given and return equal copies (never the same object). */
export interface OutboxEntry {
  /** Unique and stable: the `entryId` of a `deferred` outcome. */
  id: string;
  /** The clock's time when the entry was written, before its first attempt (rule 10). */
  createdAt: number;
  request: StoredRequest;
  /** Every durable entry has one (generated when the request had none): a resend is always safe. */
  idempotencyKey: string;
  /** Entries with the same key are sent in the order they were added (`policy.durable.order: 'per-key'`). */
  orderKey?: string | undefined;
  /** A newer entry with the same key replaces this one while it is pending (`OutboxStore.add`'s `replaces`). */
  replaceKey?: string | undefined;
  /**
   * Attempts made so far, the live ones of `client.request` included. Counted before each send, so an
   * attempt cut short by a crash still counts.
   */
  attempts: number;
  /** Not sent before this clock time (backoff, Retry-After). */
  nextAttemptAt: number;
  /** The failed attempts, oldest first (at most the last 20). */
  failures: Failure[];
  /** `dead` entries (dead-lettered) are kept until the app retries or removes them. */
  status: 'pending' | 'dead';
  /** Why it was dead-lettered: `attempts-exhausted`, `expired`, `not-retryable`, ... */
  deadReason?: string | undefined;
}

/**
 * Where durable work is kept (rule 10). Every method is atomic: a crash during a call leaves
 * the entry as it was before the call or as it is after it, never in between. Several clients (tabs,
 * processes) may open one store; the lease makes sure only one of them sends at a time.
 *
 * test/stores/store-contract.ts is the suite every store runs.
 */
export interface OutboxStore {
  /**
   * Adds a new entry, durably, before it resolves. Rejects when an entry with that id exists (and removes
   * nothing). With `replaces`, removes in the same atomic write each listed entry that is still replaceable
   * (`ReplacedEntry`), and resolves with the ids it removed. When `abandoned` has aborted by the time the store
   * writes (the request that wanted the entry ended first), it writes nothing and resolves `false`: checked in
   * the write itself where the store can (a transaction), so that an entry is never left behind a request that
   * said nothing was stored.
   */
  add(
    entry: OutboxEntry,
    replaces?: readonly ReplacedEntry[],
    abandoned?: AbortSignal,
  ): Promise<string[] | void | false>;
  /** Replaces an existing entry. Rejects when there is none with that id (it was removed). */
  update(entry: OutboxEntry): Promise<void>;
  /** Removes an entry; removing one that is not there is not an error. */
  remove(id: string): Promise<void>;
  get(id: string): Promise<OutboxEntry | undefined>;
  /** Every entry, dead ones included, in the order they were added. */
  list(): Promise<OutboxEntry[]>;
  /**
   * Claims (or renews) the right to send for `owner` until `now + ttlMs`. Resolves true when `owner`
   * holds it, false when another owner holds an unexpired lease. `now` is the caller's clock time; `clock`, the
   * caller's clock, is for a store that must wait or measure while it claims (keyValueStore), so that it runs on
   * the caller's time line (a simulated clock in tests) rather than its own.
   */
  acquireLease(owner: string, ttlMs: number, now: number, clock?: Clock): Promise<boolean>;
  /** Gives the lease up if `owner` holds it. */
  releaseLease(owner: string): Promise<void>;
  /** Releases what the store holds open (a database handle). The store is not used afterwards. */
  close(): Promise<void>;
  /**
   * Present on stores that let many runners send at once (`postgresStore`): each entry is claimed by one runner
   * for a time instead of one runner holding the lease for the whole store. Stores without it keep the lease.
   */
  readonly claims?: OutboxClaims | undefined;
}

/**
 * An entry a new one replaces (a durable request's `replaceKey`): the store removes it only while it is pending,
 * with the `replaceKey` of the new entry and the attempts the caller saw (a runner that counted a send of it
 * since is sending it: it stays), and, with per-entry claims, claimed by no other live runner.
 */
export interface ReplacedEntry {
  id: string;
  attempts: number;
}

/** What `OutboxClaims.claim` is asked. */
export interface ClaimRequest {
  id: string;
  /** The runner claiming it (its lease owner name). */
  owner: string;
  /** The entry's attempt count once claimed; the store must hold `attempts - 1` for the claim to apply. */
  attempts: number;
  /** The claim lasts until `now + claimMs`, unless renewed. */
  claimMs: number;
  /** The caller's clock time. */
  now: number;
  /** `order` of `policy.durable`: with `fifo` any earlier pending entry blocks, with `per-key` one of its `orderKey`. */
  order: 'fifo' | 'per-key';
  /**
   * `flush()`: an entry whose stored `nextAttemptAt` is later than `now` may be claimed, unless its server
   * asked for that wait (Retry-After, rule 5).
   */
  ignoreBackoff: boolean;
}

/** How a claim went. */
export type ClaimAnswer =
  /**
   * Claimed for `owner`, its attempt counted: send it. A store may answer the entry as stored now, so that the
   * runner sends it without reading it again.
   */
  | { status: 'claimed'; stored?: OutboxEntry }
  /**
   * Another live runner holds a claim on it (or is writing it right now), or an earlier entry of its order
   * group is still pending: ask again at `until` (a claim's expiry) at the latest.
   */
  | { status: 'taken'; until: number }
  /** The stored entry is not the one the caller knew (counted, rescheduled or dead-lettered since): here it is. */
  | { status: 'stale'; stored: OutboxEntry }
  /** No entry with that id. */
  | { status: 'missing' };

/**
 * Claims on single entries (`OutboxStore.claims`): N runners share one queue, none sends an entry another runner
 * holds, and an entry is claimable only when no earlier entry of its order group is pending. A claim ends when
 * the entry is next written (`update`, `remove`), when it is given back, when its time runs out, or at once when
 * the store knows its holder is gone (`postgresStore`: the holder's database session ended).
 */
export interface OutboxClaims {
  /**
   * `OutboxStore.add`, with the new entry claimed by `owner` until `now + claimMs` (its attempts not counted):
   * no other runner sends it before its writer has decided to keep it (a request that ended while its write
   * was under way has the entry removed unsent).
   */
  add(
    entry: OutboxEntry,
    owner: string,
    claimMs: number,
    now: number,
    replaces?: readonly ReplacedEntry[],
    abandoned?: AbortSignal,
  ): Promise<string[] | void | false>;
  claim(request: ClaimRequest): Promise<ClaimAnswer>;
  /**
   * The entries other live runners hold now, with when each claim ends: a runner skips them without asking one
   * by one (N runners walk one queue in the same order, so each would otherwise ask about the others' entries).
   */
  heldElsewhere(owner: string, now: number): Promise<Array<{ id: string; until: number }>>;
  /**
   * Of `ids`, the ones the store no longer has (another runner sent or dead-lettered and removed them, or the
   * app removed them): a runner that finds one entry gone forgets all the others that are, in one call, instead
   * of trying to claim each of them.
   */
  gone(ids: readonly string[]): Promise<string[]>;
  /** Moves every claim `owner` holds to expire at `now + claimMs` (a runner renews while it sends). */
  renew(owner: string, claimMs: number, now: number): Promise<void>;
  /** Gives back every claim `owner` holds (a runner closing: others may send them at once). */
  releaseAll(owner: string): Promise<void>;
}
