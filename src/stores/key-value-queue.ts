import { FailwiseError } from '../errors/failwise-error.js';
import { messageOf } from './optional-peer.js';
import type { KeyValueOps } from './key-value-storage.js';
import {
  decodeEntry,
  entryKey,
  formatIndex,
  indexKey,
  parseIndex,
  type QueueIndex,
} from './key-value-layout.js';
import type { CorruptEntryReport } from './key-value-store.js';
import type { OutboxEntry } from './outbox-store.js';
import { closedError } from './store-input.js';

/** What every keyValueStore over one storage object and prefix in this JavaScript runtime shares. */
export interface SharedQueue {
  /** Their calls, one at a time: a call's reads and writes never interleave with another's. */
  tail: Promise<unknown>;
  /**
   * The stored lease (key-value-lease.ts) as this runtime last counted it held, with the handle it was taken
   * through; it goes with the runtime, and the stored one runs out.
   */
  held?: { owner: string; expiresAt: number; handle: object } | undefined;
}

// Keyed by the app's storage object (and prefix), not a global name: two storages never wait for each other, and
// an entry goes with its storage object when that is collected.
const runtimes = new WeakMap<object, Map<string, SharedQueue>>();

export function sharedQueue(storage: object, prefix: string): SharedQueue {
  let byPrefix = runtimes.get(storage);
  if (byPrefix === undefined) runtimes.set(storage, (byPrefix = new Map<string, SharedQueue>()));
  let shared = byPrefix.get(prefix);
  if (shared === undefined) byPrefix.set(prefix, (shared = { tail: Promise.resolve() }));
  return shared;
}

/** A stored entry as read: the entry, gone (a remove cut short after its commit), or unreadable. */
type Slot = { entry: OutboxEntry } | { problem: string } | 'missing';

/**
 * One keyValueStore's way to its storage: calls queued behind every other store's on the same storage and
 * prefix, the queue's index, and its entries read and reported.
 */
export class KeyValueQueue {
  /** This handle, as the holder of a lease: close() gives up what it took. */
  readonly handle = {};
  #closed = false;

  constructor(
    readonly ops: KeyValueOps,
    readonly prefix: string,
    readonly shared: SharedQueue,
    private readonly onCorrupt: (report: CorruptEntryReport) => void,
  ) {}

  /** Runs `fn` after every call made before it on this storage; the storage's own errors say where they came from. */
  call<T>(method: string, fn: (who: string) => T | Promise<T>): Promise<T> {
    const who = `keyValueStore.${method}`;
    if (this.#closed) return Promise.reject(closedError(who));
    const { shared } = this;
    const run = shared.tail.then(() => fn(who));
    shared.tail = run.catch(() => undefined);
    return run.catch((error: unknown) => {
      if (error instanceof FailwiseError) throw error;
      throw new FailwiseError(`${who}: the storage failed: ${messageOf(error)}`, { cause: error });
    });
  }

  async loadIndex(who: string): Promise<QueueIndex> {
    const key = indexKey(this.prefix);
    const index = parseIndex(await this.ops.read(key));
    if (!('problem' in index)) return index;
    // Not skipped: the index is the queue's order and membership, and guessing either could send out of order.
    const repair = index.problem.includes('newer failwise')
      ? ''
      : '; it holds the queue, so the store reads and writes nothing until it is repaired (removing that key starts an empty queue and leaves the entries under their own keys)';
    throw new FailwiseError(
      `${who}: the queue's index under ${JSON.stringify(key)} ${index.problem}${repair}`,
    );
  }

  writeIndex(index: QueueIndex): Promise<void> {
    return this.ops.write(indexKey(this.prefix), formatIndex(index));
  }

  refOf(index: QueueIndex, id: string): [number, string] | undefined {
    return index.entries.find(([, entryId]) => entryId === id);
  }

  /**
   * The readable entries among `refs`. The others leave `index.entries`: a missing one was removed (its key is the
   * commit of a remove, and the index write after it was cut short), an unreadable one is reported once. With
   * `tidy`, the index is written without them; a failure of that write is left for a later call.
   */
  async readEntries(
    index: QueueIndex,
    refs: Array<[number, string]>,
    tidy: boolean,
  ): Promise<Map<string, OutboxEntry>> {
    const slots = await Promise.all(refs.map(([slot, id]) => this.#readSlot(slot, id)));
    const found = new Map<string, OutboxEntry>();
    const dropped = new Set<number>();
    slots.forEach((read, i) => {
      const [slot, id] = refs[i]!;
      if (read === 'missing') return void dropped.add(slot);
      if ('entry' in read) return void found.set(id, read.entry);
      dropped.add(slot);
      this.#report(slot, id, read.problem);
    });
    if (dropped.size > 0) {
      index.entries = index.entries.filter(([slot]) => !dropped.has(slot));
      if (tidy) await this.writeIndex(index).catch(() => undefined);
    }
    return found;
  }

  /**
   * Closing twice is harmless; calls made before close() still run, then `last` (giving up what this handle
   * holds), and calls after it reject. A failure of `last` is left: what it gives up runs out by itself.
   */
  async close(last: () => Promise<void>): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    const { shared } = this;
    const run = shared.tail.then(last);
    shared.tail = run.catch(() => undefined);
    await shared.tail;
  }

  async #readSlot(slot: number, id: string): Promise<Slot> {
    const text = await this.ops.read(entryKey(this.prefix, slot));
    return text === undefined ? 'missing' : decodeEntry(text, id);
  }

  #report(slot: number, id: string, problem: string): void {
    const key = entryKey(this.prefix, slot);
    try {
      this.onCorrupt({
        key,
        id,
        problem: `under ${JSON.stringify(key)} ${problem}: taken out of the queue, its value left there`,
      });
    } catch {
      // The app's reporter failing must not stop the queue.
    }
  }
}
