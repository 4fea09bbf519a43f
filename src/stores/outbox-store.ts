import type { Failure } from '../policy/failure.js';

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
}

/** One entry of the outbox. Stores keep it as given and return equal copies (never the same object). */
export interface OutboxEntry {
  /** Unique and stable: the `entryId` of a `deferred` outcome. */
  id: string;
  /** The clock's time when the entry was written, before its first attempt (CONTRACT rule 10). */
  createdAt: number;
  request: StoredRequest;
  /** Every durable entry has one (generated when the request had none): a resend is always safe. */
  idempotencyKey: string;
  /** Entries with the same key are sent in the order they were added (`policy.durable.order: 'per-key'`). */
  orderKey?: string | undefined;
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
 * Where durable work is kept (CONTRACT rule 10). Every method is atomic: a crash during a call leaves
 * the entry as it was before the call or as it is after it, never in between. Several clients (tabs,
 * processes) may open one store; the lease makes sure only one of them sends at a time.
 *
 * test/stores/store-contract.ts is the suite every store runs.
 */
export interface OutboxStore {
  /** Adds a new entry, durably, before it resolves. Rejects when an entry with that id exists. */
  add(entry: OutboxEntry): Promise<void>;
  /** Replaces an existing entry. Rejects when there is none with that id (it was removed). */
  update(entry: OutboxEntry): Promise<void>;
  /** Removes an entry; removing one that is not there is not an error. */
  remove(id: string): Promise<void>;
  get(id: string): Promise<OutboxEntry | undefined>;
  /** Every entry, dead ones included, in the order they were added. */
  list(): Promise<OutboxEntry[]>;
  /**
   * Claims (or renews) the right to send for `owner` until `now + ttlMs`. Resolves true when `owner`
   * holds it, false when another owner holds an unexpired lease. `now` is the caller's clock time.
   */
  acquireLease(owner: string, ttlMs: number, now: number): Promise<boolean>;
  /** Gives the lease up if `owner` holds it. */
  releaseLease(owner: string): Promise<void>;
  /** Releases what the store holds open (a database handle). The store is not used afterwards. */
  close(): Promise<void>;
}
