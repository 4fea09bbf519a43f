import { manualConnectivity } from '../../connectivity/manual-connectivity.js';
import { keyValueStore } from '../../stores/key-value-store.js';
import { originConfig, reply } from '../drill-origin.js';
import type { DrillScenario } from '../drill-scenario.js';

const OUTBOX_PREFIX = 'failwise-outbox';

/**
 * Durable work leaves while the app is closed: a write saved offline is stored on the phone's storage and the app
 * is closed before the network comes back. Later the OS wakes the app in the background (expo-background-task,
 * react-native-background-fetch, Headless JS): a new runtime, with no screen and nothing of the app's memory,
 * makes its client over the same storage and calls `outbox.drain()`. The write must leave from there, once, with
 * its key, and the drain must end well within the time it was given.
 */
export const sentWhileAppClosed: DrillScenario = {
  name: 'sent-while-app-closed',
  title: 'Durable work sent while the app is closed',
  expected:
    'a keyed durable write saved offline is stored and the app is closed, nothing sent; 10 min later a background runtime over the same storage drains the outbox: the write is sent once, with its key, drain reports 1 sent, 0 pending, the storage holds no entry',
  async run(drill) {
    // The phone's storage (AsyncStorage's shape), outliving the app's runtime.
    const disk = new Map<string, string>();
    const storage = {
      getItem: (key: string) => disk.get(key) ?? null,
      setItem: (key: string, value: string) => void disk.set(key, value),
      removeItem: (key: string) => void disk.delete(key),
    };
    const storedEntries = () => [...disk.keys()].filter((key) => key.startsWith(`${OUTBOX_PREFIX}:entry:`));
    const primary = await drill.origin('primary', () => reply.ok(201));

    drill.mark('offline');
    const app = drill.client({
      origins: [originConfig(primary)],
      store: keyValueStore(storage, { prefix: OUTBOX_PREFIX }),
      connectivity: manualConnectivity('offline'),
    });
    const saved = await drill.run(app, {
      method: 'POST',
      path: '/v1/notes',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ note: 'saved on the train' }),
      lifetime: 'durable',
      idempotencyKey: 'note-1',
    });
    drill.expectEqual(
      'the write made offline is deferred (offline)',
      saved.status === 'deferred' ? saved.reason : saved.status,
      'offline',
    );
    await drill.drive(app.close());
    drill.mark('app closed');
    drill.expectEqual('the entry is on the phone’s storage after the app closed', storedEntries().length, 1);

    await drill.advance(600_000);
    drill.expectEqual('nothing is sent while the app is closed', primary.served.length, 0);

    // The OS starts a background runtime: a new client over the same storage, online this time.
    drill.mark('background task');
    const startedAt = drill.clock.now();
    const background = drill.client({
      origins: [originConfig(primary)],
      store: keyValueStore(storage, { prefix: OUTBOX_PREFIX }),
      connectivity: manualConnectivity('online'),
    });
    const drained = await drill.drive(background.outbox.drain({ timeLimitMs: 20_000 }));
    drill.expectEqual('drain reports the write sent, nothing pending', drained, {
      sent: 1,
      failed: 0,
      pending: 0,
    });
    drill.expectEqual(
      'the write reached the origin once, with its key',
      primary.served.map(
        (served) => `${served.idempotencyKey} ${served.applied ? 'applied' : 'not applied'}`,
      ),
      ['note-1 applied'],
    );
    drill.check(
      'the drain ended within its time limit',
      drill.clock.now() - startedAt <= 20_000,
      `it took ${drill.clock.now() - startedAt} ms`,
    );
    drill.expectEqual('the storage holds no entry', storedEntries().length, 0);
  },
};
