import type { CommitOutcome } from '../../machines/outbox/outbox.types.js';
import { entryRecordOf } from '../../machines/outbox/outbox.replies.js';
import type { Clock } from '../clock/clock.js';
import type { Policy } from '../policy/policy.js';
import type { OutboxClaims, OutboxEntry } from '../stores/outbox-store.js';
import type { StoreCalls } from './outbox-store-calls.js';
import { CLAIM_RECHECK_MIN_MS, CLAIM_RECHECK_MS, OUTBOX_LEASE_TTL_MS } from './outbox-timing.js';

/** What the claimer asks of the runner it claims for. */
export interface ClaimerHost {
  owner: string;
  policy: Policy;
  clock: Clock;
  calls: StoreCalls;
  /** flush() brings backoff forward for the entries it sends (never a server's Retry-After: the store checks). */
  hurried(): boolean;
  /** The ids of the pending entries the scheduler knows. */
  pendingIds(): string[];
  /** Tells the scheduler an entry is gone from the store. */
  forget(id: string): void;
}

/**
 * Claims entries one by one in a store with per-entry claims (`OutboxStore.claims`), where every runner sends and
 * each entry is claimed by one at a time; it remembers what the store said, so as not to ask it again too soon.
 */
export class OutboxClaimer {
  readonly #claims: OutboxClaims;
  readonly #host: ClaimerHost;
  /**
   * Entries other runners held when last asked (`claims.heldElsewhere`), until their claims end: a claim of one of
   * them is answered here, without a store call, for CLAIM_RECHECK_MS after the list was read (as long as a
   * `taken` answer from the store lasts): the holder most likely still sends it, or has sent it.
   */
  #heldElsewhere = new Map<string, number>();
  #heldElsewhereAt = -Infinity;
  #goneAskedAt = -Infinity;
  /**
   * Entries as their claim answered them, until their send takes them: a claim and the read before the send
   * would otherwise be two round trips to the store for the same row, which no other runner can change while the
   * claim lasts. Kept with the claim's end: a send that starts later (the device went offline in between, say)
   * reads the store, since another runner may have claimed the entry once this claim ran out.
   */
  readonly #claimed = new Map<string, { entry: OutboxEntry; until: number }>();

  constructor(claims: OutboxClaims, host: ClaimerHost) {
    this.#claims = claims;
    this.#host = host;
  }

  /** Claims the entry for this runner, counting its attempt. */
  async claim(id: string, attempts: number): Promise<CommitOutcome> {
    const { owner, policy, clock, calls } = this.#host;
    const at = clock.now();
    const known = this.#heldElsewhere.get(id);
    if (known !== undefined && known > at && at - this.#heldElsewhereAt < CLAIM_RECHECK_MS)
      return { status: 'taken', until: takenUntil(at, known) };
    const answer = await calls.answered(
      this.#claims.claim({
        id,
        owner,
        attempts,
        claimMs: OUTBOX_LEASE_TTL_MS,
        now: at,
        order: policy.durable.order,
        ignoreBackoff: this.#host.hurried(),
      }),
      'store.claims.claim',
    );
    switch (answer.status) {
      case 'claimed':
        if (answer.stored) this.#claimed.set(id, { entry: answer.stored, until: at + OUTBOX_LEASE_TTL_MS });
        return { status: 'committed' };
      case 'stale':
        // Counted by another runner since: it most likely holds it, and others of this runner's queue too.
        await this.#learnHeldElsewhere(at);
        return { status: 'stale', stored: entryRecordOf(answer.stored) };
      case 'missing':
        await this.#forgetGone(id, at);
        return { status: 'missing' };
      case 'taken': {
        // Another runner is sending: the ones it holds besides this are skipped without asking one by one.
        await this.#learnHeldElsewhere(at);
        return { status: 'taken', until: takenUntil(at, answer.until) };
      }
    }
  }

  /** The entry as its claim answered it, while that claim lasts; forgotten either way. */
  takeClaimed(id: string, now: number): OutboxEntry | undefined {
    const claimed = this.#claimed.get(id);
    this.#claimed.delete(id);
    return claimed && claimed.until > now ? claimed.entry : undefined;
  }

  clear(): void {
    this.#claimed.clear();
  }

  /** Reads which entries other runners hold (`claims.heldElsewhere`), at most once per CLAIM_RECHECK_MIN_MS. */
  async #learnHeldElsewhere(at: number): Promise<void> {
    if (at - this.#heldElsewhereAt < CLAIM_RECHECK_MIN_MS) return;
    this.#heldElsewhereAt = at;
    const held = await this.#host.calls
      .answered(this.#claims.heldElsewhere(this.#host.owner, at), 'store.claims.heldElsewhere')
      .catch(() => []);
    this.#heldElsewhere = new Map(held.map(({ id, until }) => [id, until]));
  }

  /**
   * One entry was gone from the store: other runners have most likely sent more of this runner's queue. The
   * pending ones the store no longer has are forgotten at once (`claims.gone`), at most once per
   * CLAIM_RECHECK_MIN_MS, instead of each costing a claim that answers `missing`.
   */
  async #forgetGone(missing: string, at: number): Promise<void> {
    if (at - this.#goneAskedAt < CLAIM_RECHECK_MIN_MS) return;
    this.#goneAskedAt = at;
    const ids = this.#host.pendingIds().filter((id) => id !== missing);
    const gone = await this.#host.calls.answered(this.#claims.gone(ids), 'store.claims.gone').catch(() => []);
    for (const id of gone) this.#host.forget(id);
  }
}

/** How long a `taken` answer lasts: until the claim ends, but asked again within CLAIM_RECHECK_MS at the most. */
const takenUntil = (from: number, until: number) =>
  from + Math.min(Math.max(until - from, CLAIM_RECHECK_MIN_MS), CLAIM_RECHECK_MS);
