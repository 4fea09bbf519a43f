import { memoryStore } from '../../src/stores/memory-store.js';
import type { OutboxEntry, OutboxStore } from '../../src/stores/outbox-store.js';

/** A memoryStore holding `count` due entries (`e1`, `e2`, …, keyed), as an app process that was killed leaves them. */
export async function leftBehind(count: number): Promise<OutboxStore> {
  const store = memoryStore();
  for (let i = 1; i <= count; i++) {
    const entry: OutboxEntry = {
      id: `e${i}`,
      createdAt: 0,
      request: { method: 'POST', path: '/v1/notes', headers: {}, body: `note ${i}` },
      idempotencyKey: `key-${i}`,
      attempts: 0,
      nextAttemptAt: 0,
      failures: [],
      status: 'pending',
    };
    await store.add(entry);
  }
  return store;
}
