import type { Clock } from '../clock/clock.js';
import { formatLease, leaseKey, parseLease, sameLease, type StoredLease } from './key-value-layout.js';
import type { KeyValueQueue, SharedQueue } from './key-value-queue.js';
import { checkLease } from './store-input.js';

type HeldLease = NonNullable<SharedQueue['held']>;

/** How a claim's first step went. */
type Step = 'refused' | 'renewed' | 'lost' | 'slow' | 'claimed';

/**
 * A keyValueStore's lease, kept in the storage under `<prefix>:lease` as an owner and an expiry, so that every
 * JavaScript runtime over the same storage (the app's, a headless or background task's) sees it, and a runtime
 * that died frees it when its expiry passes.
 *
 * A key-value module has no compare-and-set, so a claim is made the way Fischer's mutual exclusion makes one
 * with plain reads and writes: read the lease; if it is free (or expired), write this owner's claim, noting how
 * long that read and write took; wait `settleMs`; read it back. The claim counts as held only if that read finds
 * it unchanged and its own read-to-write took less than `settleMs`. Two runtimes cannot then both hold it: the
 * one that wrote second read the lease before the other's write, and its own write landed after the other's
 * read-back, more than `settleMs` after that other write, so its own read-to-write took longer than
 * `settleMs` and it does not count itself (docs/stores.md sets out the interleavings). A claim that does not
 * count is left to run out, by its own runtime too: only the runtime that counted a claim renews it without
 * waiting again.
 */
export class KeyValueLease {
  constructor(
    private readonly queue: KeyValueQueue,
    private readonly clock: Clock,
    private readonly settleMs: number,
  ) {}

  /** `clock`: the caller's, when it gives one (the client's: one time line with the `now` it passes). */
  async acquire(owner: string, ttlMs: number, now: number, clock: Clock = this.clock): Promise<boolean> {
    const claim = { owner, expiresAt: now + ttlMs };
    const step = await this.queue.call('acquireLease', (who) => {
      checkLease(who, owner, ttlMs, now);
      return this.#write(claim, now, clock);
    });
    if (step === 'renewed') return true;
    if (step !== 'claimed') return false;
    await new Promise<void>((resolve) => clock.setTimeout(() => resolve(), this.settleMs));
    return this.queue.call('acquireLease', async () => {
      const held = sameLease(await this.#read(), claim);
      this.#count(claim, held);
      return held;
    });
  }

  /** Gives the lease up when this runtime counted it for `owner`. */
  release(owner: string): Promise<void> {
    return this.queue.call('releaseLease', () => this.#erase((held) => held.owner === owner));
  }

  /** What close() runs last: gives up the lease taken through this handle. */
  releaseHandle(): Promise<void> {
    return this.#erase((held) => held.handle === this.queue.handle);
  }

  /** The first step of a claim, one call on the queue: refused, renewed (its own counted lease), or written. */
  async #write(claim: StoredLease, now: number, clock: Clock): Promise<Step> {
    const { shared } = this.queue;
    const startedAt = clock.now();
    const stored = await this.#read();
    const counted = sameLease(stored, shared.held) && shared.held!.owner === claim.owner;
    // Another owner's unexpired claim, or one of this owner's that this runtime never counted (a claim that
    // came out slow, or one a runtime that died wrote): it stands until it expires.
    if (stored !== undefined && !counted && now < stored.expiresAt) return 'refused';
    await this.queue.ops.write(leaseKey(this.queue.prefix), formatLease(claim));
    if (counted && now < stored!.expiresAt) {
      // A renewal: nobody else could take an unexpired lease, but a claim that raced it would show here.
      const held = sameLease(await this.#read(), claim);
      this.#count(claim, held);
      return held ? 'renewed' : 'lost';
    }
    if (clock.now() - startedAt >= this.settleMs) {
      this.#count(claim, false);
      return 'slow';
    }
    return 'claimed';
  }

  /** Records whether this runtime holds `claim` now. */
  #count(claim: StoredLease, held: boolean): void {
    const { shared } = this.queue;
    if (held) shared.held = { ...claim, handle: this.queue.handle };
    else if (shared.held?.owner === claim.owner) shared.held = undefined;
  }

  async #read(): Promise<StoredLease | undefined> {
    return parseLease(await this.queue.ops.read(leaseKey(this.queue.prefix)));
  }

  /** Erases the stored lease when this runtime counted it and `mine` says it is the one to give up. */
  async #erase(mine: (held: HeldLease) => boolean): Promise<void> {
    const { shared } = this.queue;
    const held = shared.held;
    if (held === undefined || !mine(held)) return;
    shared.held = undefined;
    if (sameLease(await this.#read(), held)) await this.queue.ops.erase(leaseKey(this.queue.prefix));
  }
}
