// How long the outbox runner's lease and claims last, and how often it asks the store again.

/**
 * How long this runner's lease on the store lasts: 30 s. It is renewed every 10 s while the runner sends, and
 * given back as soon as nothing is in flight or due; a runner that stops without giving it back (a crash, a
 * closed tab) holds it at most this long. Another runner asks again every 15 s.
 */
export const OUTBOX_LEASE_TTL_MS = 30_000;

/**
 * While `flush()` waits for a lease another live runner holds (up to `policy.durable.flushWaitMs`), it asks
 * again this often: the holder gives it back as soon as it is idle, and a dead holder's lease is free at once.
 */
export const FLUSH_LEASE_POLL_MS = 100;

/**
 * With a store that claims single entries (`OutboxStore.claims`), an entry another runner holds is asked about
 * again after at most this long: the store cannot tell when a claim ends early (the holder finished it, or its
 * session ended), and asking costs one small transaction.
 */
export const CLAIM_RECHECK_MS = 1_000;

/** ...and after at least this long, so that a row being written right now is not asked about in a busy loop. */
export const CLAIM_RECHECK_MIN_MS = 100;

/**
 * With a store that claims single entries, the runner reads the store this often while idle, so that entries
 * other processes wrote (or left behind when they died) join its queue: every runner sends, none waits for a
 * lease that would make it read the store.
 */
export const CLAIM_POLL_MS = 1_000;
