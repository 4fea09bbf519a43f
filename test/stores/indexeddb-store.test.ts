import { indexedDB } from 'fake-indexeddb';
import { afterEach, describe, expect, it } from 'vitest';
import { ArgumentError } from '../../src/errors/argument-error.js';

import { FailwiseError } from '../../src/errors/failwise-error.js';
import { indexedDbStore, type IndexedDbStoreOptions } from '../../src/stores/indexeddb-store.js';
import type { OutboxStore } from '../../src/stores/outbox-store.js';
import { describeOutboxStore, makeEntry } from './store-contract.js';

// fake-indexeddb keeps every database of the process in one factory: each test takes a name of its own.
let count = 0;
const uniqueName = () => `failwise-test-${++count}`;

const deleteDatabase = (name: string) =>
  new Promise<void>((resolve, reject) => {
    const request = indexedDB.deleteDatabase(name);
    request.onsuccess = () => resolve();
    request.onerror = () => reject(request.error ?? new Error(`could not delete ${name}`));
  });

/**
 * Web Locks as browsers grant them with `ifAvailable` (Node 20 has none): an exclusive lock per name, held
 * until the callback's promise settles; the request's promise settles after the lock is free.
 */
function fakeLocks(): LockManager & { held: Set<string> } {
  const held = new Set<string>();
  const request = async (name: string, options: LockOptions, callback: LockGrantedCallback<unknown>) => {
    if (!options.ifAvailable) throw new Error('fakeLocks: only ifAvailable requests are faked');
    if (held.has(name)) return await callback(null);
    held.add(name);
    try {
      return await callback({ name, mode: 'exclusive' });
    } finally {
      held.delete(name);
    }
  };
  return { held, request, query: async () => ({ held: [], pending: [] }) } as unknown as LockManager & {
    held: Set<string>;
  };
}

/** The contract's `open` for a fresh database with these options. */
const openWith = (options: () => IndexedDbStoreOptions) => async () => {
  const name = uniqueName();
  const shared = { indexedDB, ...options() };
  return {
    store: indexedDbStore(name, shared),
    reopen: async () => indexedDbStore(name, shared),
    cleanup: () => deleteDatabase(name),
  };
};

describeOutboxStore(
  'indexedDbStore with a lease record',
  openWith(() => ({ locks: null })),
);
describeOutboxStore(
  'indexedDbStore with Web Locks',
  openWith(() => ({ locks: fakeLocks() })),
);

describe('indexedDbStore', () => {
  const opened: OutboxStore[] = [];
  const names: string[] = [];
  /** A store on a fresh database, closed and deleted after the test. */
  const open = (options: IndexedDbStoreOptions = {}, name = uniqueName()) => {
    const store = indexedDbStore(name, { indexedDB, ...options });
    opened.push(store);
    names.push(name);
    return store;
  };

  afterEach(async () => {
    for (const store of opened.splice(0)) await store.close();
    for (const name of names.splice(0)) await deleteDatabase(name);
  });

  it('holds a Web Lock named after the database while it holds the lease, and lets it go', async () => {
    const locks = fakeLocks();
    const store = open({ locks }, 'orders');
    expect(await store.acquireLease('one', 1_000, 0)).toBe(true);
    expect([...locks.held]).toEqual(['failwise-outbox:orders']);
    await store.releaseLease('one');
    expect([...locks.held]).toEqual([]);
    expect(await store.acquireLease('one', 1_000, 0)).toBe(true);
    await store.close();
    expect([...locks.held]).toEqual([]);
  });

  it('refuses the lease while another tab holds the Web Lock, whatever the time', async () => {
    const locks = fakeLocks();
    const name = uniqueName();
    const tab1 = open({ locks }, name);
    const tab2 = open({ locks }, name);
    expect(await tab1.acquireLease('one', 100, 0)).toBe(true);
    // The lease record would have expired at 100; a Web Lock is held until it is let go.
    expect(await tab2.acquireLease('two', 100, 10_000)).toBe(false);
    await tab1.close();
    expect(await tab2.acquireLease('two', 100, 10_000)).toBe(true);
  });

  it('asks for the Web Lock once when one owner asks twice at once', async () => {
    const store = open({ locks: fakeLocks() });
    expect(
      await Promise.all([store.acquireLease('one', 1_000, 0), store.acquireLease('one', 1_000, 0)]),
    ).toEqual([true, true]);
  });

  it('rejects with how to fix it when there is no IndexedDB', async () => {
    const store = indexedDbStore(uniqueName());
    opened.push(store);
    await expect(store.list()).rejects.toThrow(FailwiseError);
    await expect(store.list()).rejects.toThrow(
      'indexedDbStore: there is no IndexedDB here (globalThis.indexedDB is undefined); pass options.indexedDB, or use memoryStore()',
    );
  });

  it('refuses a database written by a newer failwise', async () => {
    const name = uniqueName();
    await new Promise<void>((resolve, reject) => {
      const request = indexedDB.open(name, 2);
      request.onsuccess = () => {
        request.result.close();
        resolve();
      };
      request.onerror = () => reject(request.error ?? new Error('open failed'));
    });
    const store = open({}, name);
    await expect(store.list()).rejects.toThrow(
      `indexedDbStore: database "${name}" was written by a newer failwise (version > 1)`,
    );
  });

  it('lets go of the database when another tab deletes it, and says so', async () => {
    const name = uniqueName();
    const store = open({ locks: null }, name);
    await store.add(makeEntry('a'));
    await deleteDatabase(name);
    await expect(store.list()).rejects.toThrow(
      `indexedDbStore.list: database "${name}" was deleted or upgraded by another tab; open a new store`,
    );
  });

  it('throws an ArgumentError for a name that is not a non-empty string', () => {
    expect(() => indexedDbStore('', { indexedDB })).toThrow(
      new ArgumentError(
        'indexedDbStore',
        'name',
        'expected a database name (a non-empty string), got string',
      ),
    );
  });
});
