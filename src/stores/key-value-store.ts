import type { Clock } from '../clock/clock.js';
import { systemClock } from '../clock/system-clock.js';
import { ArgumentError } from '../errors/argument-error.js';
import { KeyValueLease } from './key-value-lease.js';
import { KeyValueQueue, sharedQueue } from './key-value-queue.js';
import { keyValueOps, type KeyValueStorage } from './key-value-storage.js';
import { encodeEntry, entryKey } from './key-value-layout.js';
import type { OutboxStore } from './outbox-store.js';
import {
  checkEntry,
  checkId,
  checkReplaces,
  duplicateIdError,
  isReplaceable,
  unknownIdError,
} from './store-input.js';

/** An entry whose stored value could not be read: taken out of the queue, its value left where it was. */
export interface CorruptEntryReport {
  /** The key its value is left under: failwise never deletes what it cannot read. */
  key: string;
  /** The entry's id, as the queue's index names it. */
  id: string;
  /** What is wrong, in words that quote none of the value (it may hold a body or headers). */
  problem: string;
}

/** Options of `keyValueStore`. */
export interface KeyValueStoreOptions {
  /**
   * The start of every key the store writes (`<prefix>:index`, `<prefix>:entry:<n>`), so that the app's own keys,
   * and the queues of other clients, stay apart.
   * @default 'failwise-outbox'
   */
  prefix?: string | undefined;
  /**
   * Called once for each stored entry that cannot be read (changed by someone else, cut by a storage fault). The
   * entry is taken out of the queue, so the rest of it goes on, and its value is left under `report.key`.
   * @default `console.error`
   */
  onCorrupt?: ((report: CorruptEntryReport) => void) | undefined;
  /**
   * How long a claim on the lease waits before it reads its claim back (docs/stores.md, "The lease"), and the
   * longest its own read and write of the lease may take for it to count. Longer than the storage takes to
   * read and write one key, with room to spare: a claim whose own read and write take longer does not count
   * (the runner asks again later).
   * @default 200
   */
  leaseSettleMs?: number | undefined;
  /**
   * Times the lease's wait, and measures its read and write, when the caller of `acquireLease` gives no clock of
   * its own (a failwise client always gives its own). Every runtime sharing the storage must be on one time line,
   * as the lease's expiry is (the device's clock).
   * @default systemClock
   */
  clock?: Clock | undefined;
}

/** `leaseSettleMs` when not given. */
export const LEASE_SETTLE_MS = 200;

const reportToConsole = (report: CorruptEntryReport): void =>
  console.error(`failwise keyValueStore: the entry ${JSON.stringify(report.id)} ${report.problem}`);

/**
 * An `OutboxStore` over a key-value module the app passes in: AsyncStorage (or anything of its shape:
 * `getItem`, `setItem`, `removeItem`, answering at once or with a promise) or an MMKV instance (`getString`,
 * `set`, `remove` or `delete`). failwise depends on neither. For React Native, where neither SQLite nor IndexedDB
 * comes with the platform; docs/stores.md says how each change stays atomic with single-key writes.
 *
 * @remarks
 * Each entry is one key, and the queue's order is one index key; the module's own guarantee that one write of
 * one key is all or nothing (AsyncStorage: an SQLite transaction on Android, an atomic file write on iOS; MMKV:
 * a checksummed append) is all it relies on. Every store over the same storage object and prefix in this runtime
 * shares one queue of calls. The lease is stored too, with an owner and an expiry, so that the app's runtime and
 * a background task's runtime over the same storage never send at once (key-value-lease.ts says how it is
 * claimed without a compare-and-set).
 *
 * @example
 * ```ts
 * import AsyncStorage from '@react-native-async-storage/async-storage';
 * import { keyValueStore } from 'failwise/react-native';
 *
 * const client = createFailoverClient({ origins, store: keyValueStore(AsyncStorage) });
 * ```
 */
export function keyValueStore(storage: KeyValueStorage, options: KeyValueStoreOptions = {}): OutboxStore {
  const ops = keyValueOps('keyValueStore', storage);
  const {
    prefix = 'failwise-outbox',
    onCorrupt = reportToConsole,
    leaseSettleMs = LEASE_SETTLE_MS,
    clock = systemClock,
  } = options ?? {};
  if (typeof prefix !== 'string' || prefix === '')
    throw new ArgumentError('keyValueStore', 'options.prefix', 'expected a non-empty string');
  if (typeof onCorrupt !== 'function')
    throw new ArgumentError('keyValueStore', 'options.onCorrupt', 'expected a function');
  if (typeof leaseSettleMs !== 'number' || !Number.isFinite(leaseSettleMs) || leaseSettleMs <= 0)
    throw new ArgumentError('keyValueStore', 'options.leaseSettleMs', 'expected a finite number > 0');
  if (typeof clock?.now !== 'function' || typeof clock.setTimeout !== 'function')
    throw new ArgumentError(
      'keyValueStore',
      'options.clock',
      'expected a Clock (now, setTimeout, clearTimeout)',
    );
  const queue = new KeyValueQueue(ops, prefix, sharedQueue(storage, prefix), onCorrupt);
  const lease = new KeyValueLease(queue, clock, leaseSettleMs);

  return {
    // Atomic: the entry goes to a slot no index names yet (a crash leaves it unseen, and the next add reuses the
    // slot); the index write that names it, without the entries it replaces, is the one write that adds it.
    add: (entry, replaces, abandoned) =>
      queue.call('add', async (who): Promise<string[] | false> => {
        checkEntry(who, entry);
        const listed = checkReplaces(who, entry, replaces);
        const index = await queue.loadIndex(who);
        const ref = queue.refOf(index, entry.id);
        if (ref && (await queue.readEntries(index, [ref], false)).has(entry.id))
          throw duplicateIdError(who, entry.id);
        const refs = listed.flatMap(({ id }): Array<[number, string]> => {
          const found = queue.refOf(index, id);
          return found ? [found] : [];
        });
        const stored = await queue.readEntries(index, refs, false);
        const removed = listed.filter((r) => isReplaceable(stored.get(r.id), r, entry)).map((r) => r.id);
        const gone = refs.filter(([, id]) => removed.includes(id));
        const slot = index.next;
        await ops.write(entryKey(queue.prefix, slot), encodeEntry(entry));
        // Asked just before the one write that adds it (a storage of keys has no transaction to ask in): the
        // slot written is unseen, and the next add reuses it.
        if (abandoned?.aborted) return false;
        await queue.writeIndex({
          next: slot + 1,
          entries: [...index.entries.filter((r) => !gone.includes(r)), [slot, entry.id]],
        });
        // Tidying: no index names them now. A crash here leaves their keys behind, unread.
        for (const [goneSlot] of gone)
          await ops.erase(entryKey(queue.prefix, goneSlot)).catch(() => undefined);
        return removed;
      }),
    // Atomic: one write of the entry's own key.
    update: (entry) =>
      queue.call('update', async (who) => {
        checkEntry(who, entry);
        const index = await queue.loadIndex(who);
        const ref = queue.refOf(index, entry.id);
        if (!ref || !(await queue.readEntries(index, [ref], true)).has(entry.id))
          throw unknownIdError(who, entry.id);
        await ops.write(entryKey(queue.prefix, ref[0]), encodeEntry(entry));
      }),
    // Atomic: erasing the entry's key is the one write that removes it (an index naming a missing key reads as
    // removed); the index write after it only tidies.
    remove: (id) =>
      queue.call('remove', async (who) => {
        checkId(who, id);
        const index = await queue.loadIndex(who);
        const ref = queue.refOf(index, id);
        if (!ref) return;
        await ops.erase(entryKey(queue.prefix, ref[0]));
        await queue.writeIndex({
          next: index.next,
          entries: index.entries.filter(([slot]) => slot !== ref[0]),
        });
      }),
    get: (id) =>
      queue.call('get', async (who) => {
        checkId(who, id);
        const index = await queue.loadIndex(who);
        const ref = queue.refOf(index, id);
        return ref && (await queue.readEntries(index, [ref], true)).get(id);
      }),
    list: () =>
      queue.call('list', async (who) => {
        const index = await queue.loadIndex(who);
        const found = await queue.readEntries(index, index.entries, true);
        return index.entries.map(([, id]) => found.get(id)!);
      }),
    acquireLease: (owner, ttlMs, now, clock) => lease.acquire(owner, ttlMs, now, clock),
    releaseLease: (owner) => lease.release(owner),
    close: () => queue.close(() => lease.releaseHandle()),
  };
}
