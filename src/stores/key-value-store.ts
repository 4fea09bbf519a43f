import { ArgumentError } from '../errors/argument-error.js';
import { FailwiseError } from '../errors/failwise-error.js';
import { messageOf } from './optional-peer.js';
import { keyValueOps, type KeyValueStorage } from './key-value-storage.js';
import {
  decodeEntry,
  encodeEntry,
  entryKey,
  formatIndex,
  indexKey,
  parseIndex,
  type QueueIndex,
} from './key-value-layout.js';
import type { OutboxEntry, OutboxStore } from './outbox-store.js';
import {
  checkEntry,
  checkId,
  checkLease,
  closedError,
  duplicateIdError,
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
}

/** What every keyValueStore over one storage object and prefix in this JavaScript runtime shares. */
interface SharedQueue {
  /** Their calls, one at a time: a call's reads and writes never interleave with another's. */
  tail: Promise<unknown>;
  /** The outbox's lease, held in memory: it dies with the runtime, as the app's process does. */
  lease?: { owner: string; expiresAt: number; handle: object } | undefined;
}

// Keyed by the app's storage object (and prefix), not a global name: two storages never wait for each other, and
// an entry goes with its storage object when that is collected.
const runtimes = new WeakMap<object, Map<string, SharedQueue>>();

function sharedQueue(storage: object, prefix: string): SharedQueue {
  let byPrefix = runtimes.get(storage);
  if (byPrefix === undefined) runtimes.set(storage, (byPrefix = new Map<string, SharedQueue>()));
  let shared = byPrefix.get(prefix);
  if (shared === undefined) byPrefix.set(prefix, (shared = { tail: Promise.resolve() }));
  return shared;
}

const reportToConsole = (report: CorruptEntryReport): void =>
  console.error(`failwise keyValueStore: the entry ${JSON.stringify(report.id)} ${report.problem}`);

/** A stored entry as read: the entry, gone (a remove cut short after its commit), or unreadable. */
type Slot = { entry: OutboxEntry } | { problem: string } | 'missing';

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
 * shares one queue of calls and one lease; the lease lives in memory, so it dies with the app.
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
  const { prefix = 'failwise-outbox', onCorrupt = reportToConsole } = options ?? {};
  if (typeof prefix !== 'string' || prefix === '')
    throw new ArgumentError('keyValueStore', 'options.prefix', 'expected a non-empty string');
  if (typeof onCorrupt !== 'function')
    throw new ArgumentError('keyValueStore', 'options.onCorrupt', 'expected a function');
  const shared = sharedQueue(storage, prefix);
  /** This handle, as the holder of a lease: close() gives up what it took. */
  const handle = {};
  let closed = false;

  /** Runs `fn` after every call made before it on this storage; the storage's own errors say where they came from. */
  function call<T>(method: string, fn: (who: string) => T | Promise<T>): Promise<T> {
    const who = `keyValueStore.${method}`;
    if (closed) return Promise.reject(closedError(who));
    const run = shared.tail.then(() => fn(who));
    shared.tail = run.catch(() => undefined);
    return run.catch((error: unknown) => {
      if (error instanceof FailwiseError) throw error;
      throw new FailwiseError(`${who}: the storage failed: ${messageOf(error)}`, { cause: error });
    });
  }

  async function loadIndex(who: string): Promise<QueueIndex> {
    const key = indexKey(prefix);
    const index = parseIndex(await ops.read(key));
    if (!('problem' in index)) return index;
    // Not skipped: the index is the queue's order and membership, and guessing either could send out of order.
    const repair = index.problem.includes('newer failwise')
      ? ''
      : '; it holds the queue, so the store reads and writes nothing until it is repaired (removing that key starts an empty queue and leaves the entries under their own keys)';
    throw new FailwiseError(
      `${who}: the queue's index under ${JSON.stringify(key)} ${index.problem}${repair}`,
    );
  }

  const writeIndex = (index: QueueIndex) => ops.write(indexKey(prefix), formatIndex(index));

  async function readSlot(slot: number, id: string): Promise<Slot> {
    const text = await ops.read(entryKey(prefix, slot));
    return text === undefined ? 'missing' : decodeEntry(text, id);
  }

  /**
   * The readable entries among `refs`. The others leave `index.entries`: a missing one was removed (its key is the
   * commit of a remove, and the index write after it was cut short), an unreadable one is reported once. With
   * `tidy`, the index is written without them; a failure of that write is left for a later call.
   */
  async function readEntries(index: QueueIndex, refs: Array<[number, string]>, tidy: boolean) {
    const slots = await Promise.all(refs.map(([slot, id]) => readSlot(slot, id)));
    const found = new Map<string, OutboxEntry>();
    const dropped = new Set<number>();
    slots.forEach((read, i) => {
      const [slot, id] = refs[i]!;
      if (read === 'missing') return void dropped.add(slot);
      if ('entry' in read) return void found.set(id, read.entry);
      dropped.add(slot);
      const key = entryKey(prefix, slot);
      try {
        onCorrupt({
          key,
          id,
          problem: `under ${JSON.stringify(key)} ${read.problem}: taken out of the queue, its value left there`,
        });
      } catch {
        // The app's reporter failing must not stop the queue.
      }
    });
    if (dropped.size > 0) {
      index.entries = index.entries.filter(([slot]) => !dropped.has(slot));
      if (tidy) await writeIndex(index).catch(() => undefined);
    }
    return found;
  }

  const refOf = (index: QueueIndex, id: string) => index.entries.find(([, entryId]) => entryId === id);

  return {
    // Atomic: the entry goes to a slot no index names yet (a crash leaves it unseen, and the next add reuses the
    // slot); the index write that names it is the one write that adds it.
    add: (entry) =>
      call('add', async (who) => {
        checkEntry(who, entry);
        const index = await loadIndex(who);
        const ref = refOf(index, entry.id);
        if (ref && (await readEntries(index, [ref], false)).has(entry.id))
          throw duplicateIdError(who, entry.id);
        const slot = index.next;
        await ops.write(entryKey(prefix, slot), encodeEntry(entry));
        await writeIndex({ next: slot + 1, entries: [...index.entries, [slot, entry.id]] });
      }),
    // Atomic: one write of the entry's own key.
    update: (entry) =>
      call('update', async (who) => {
        checkEntry(who, entry);
        const index = await loadIndex(who);
        const ref = refOf(index, entry.id);
        if (!ref || !(await readEntries(index, [ref], true)).has(entry.id))
          throw unknownIdError(who, entry.id);
        await ops.write(entryKey(prefix, ref[0]), encodeEntry(entry));
      }),
    // Atomic: erasing the entry's key is the one write that removes it (an index naming a missing key reads as
    // removed); the index write after it only tidies.
    remove: (id) =>
      call('remove', async (who) => {
        checkId(who, id);
        const index = await loadIndex(who);
        const ref = refOf(index, id);
        if (!ref) return;
        await ops.erase(entryKey(prefix, ref[0]));
        await writeIndex({ next: index.next, entries: index.entries.filter(([slot]) => slot !== ref[0]) });
      }),
    get: (id) =>
      call('get', async (who) => {
        checkId(who, id);
        const index = await loadIndex(who);
        const ref = refOf(index, id);
        return ref && (await readEntries(index, [ref], true)).get(id);
      }),
    list: () =>
      call('list', async (who) => {
        const index = await loadIndex(who);
        const found = await readEntries(index, index.entries, true);
        return index.entries.map(([, id]) => found.get(id)!);
      }),
    acquireLease: (owner, ttlMs, now) =>
      call('acquireLease', (who) => {
        checkLease(who, owner, ttlMs, now);
        const { lease } = shared;
        if (lease && lease.owner !== owner && now < lease.expiresAt) return false;
        shared.lease = { owner, expiresAt: now + ttlMs, handle };
        return true;
      }),
    releaseLease: (owner) =>
      call('releaseLease', () => {
        if (shared.lease?.owner === owner) shared.lease = undefined;
      }),
    close: async () => {
      // Closing twice is harmless; calls made before close() still run, calls after it reject.
      if (closed) return;
      closed = true;
      await shared.tail;
      if (shared.lease?.handle === handle) shared.lease = undefined;
    },
  };
}
