import { describe, expect, it } from 'vitest';

import { memoryStore } from '../../src/stores/memory-store.js';
import { describeOutboxStore, makeEntry } from './store-contract.js';

describeOutboxStore('memoryStore', async () => ({ store: memoryStore(), cleanup: async () => {} }), {
  persistent: false,
});

describe('memoryStore', () => {
  it('keeps each store apart: entries and the lease belong to the object that holds them', async () => {
    const first = memoryStore();
    const second = memoryStore();
    await first.add(makeEntry('a'));
    expect(await first.acquireLease('one', 1_000, 0)).toBe(true);
    expect(await second.list()).toEqual([]);
    expect(await second.acquireLease('two', 1_000, 0)).toBe(true);
    await Promise.all([first.close(), second.close()]);
  });

  it('names the store and the method in its errors', async () => {
    const store = memoryStore();
    await expect(store.add(makeEntry(''))).rejects.toThrow(
      'memoryStore.add: entry.id: expected a non-empty string (got "")',
    );
    await store.close();
    await expect(store.list()).rejects.toThrow(
      'memoryStore.list: the store is closed; open a new one to use it again',
    );
  });
});
