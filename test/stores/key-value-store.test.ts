import { fc } from '@fast-check/vitest';
import { afterEach, describe, expect, it } from 'vitest';
import { simulatedClock } from '../../src/clock/simulated-clock.js';
import { manualConnectivity } from '../../src/connectivity/manual-connectivity.js';
import { ArgumentError } from '../../src/errors/argument-error.js';
import { FailwiseError } from '../../src/errors/failwise-error.js';
import { keyValueStore, type CorruptEntryReport } from '../../src/react-native.js';
import { createFailoverClient, type FailoverClient } from '../../src/runtime/create-failover-client.js';
import type { OutboxEntry } from '../../src/stores/outbox-store.js';
import type { Clock } from '../../src/clock/clock.js';
import { Device, fakeAsyncStorage, fakeMmkv, slowAsyncStorage } from '../helpers/key-value-modules.js';
import { closedPort, useLoopback } from '../helpers/loopback-server.js';
import { respond, scriptedTransport } from '../helpers/scripted-transport.js';
import { describeOutboxStore, makeEntry } from './store-contract.js';

// keyValueStore (failwise/react-native) over stand-ins of AsyncStorage and MMKV
// (test/helpers/key-value-modules.ts): React Native's modules cannot run in Node, their shapes and semantics can.

const shapes = {
  AsyncStorage: (device: Device) => fakeAsyncStorage(device),
  'MMKV v3 (delete)': (device: Device) => fakeMmkv(device, 3),
  'MMKV v4 (remove)': (device: Device) => fakeMmkv(device, 4),
};
type Shape = keyof typeof shapes;

/**
 * A clock on which only waiting moves time: a timer fires on the next turn of the event loop, at its due time,
 * and a read or a write of the storage takes none. The lease's wait then costs no real time and its own
 * read-to-write always counts, however loaded the machine running the tests is.
 */
function steppingClock(): Clock {
  let now = 0;
  return {
    now: () => now,
    setTimeout: (fn, ms) =>
      setImmediate(() => {
        now += ms;
        fn();
      }),
    clearTimeout: (handle) => clearImmediate(handle as ReturnType<typeof setImmediate>),
  };
}

for (const [name, make] of Object.entries(shapes)) {
  describeOutboxStore(`keyValueStore over ${name}`, async () => {
    const storage = make(new Device());
    const clock = steppingClock();
    // Another handle on the same module object: a second client in the same app, or the same one after close().
    return {
      store: keyValueStore(storage, { clock }),
      reopen: async () => keyValueStore(storage, { clock }),
      cleanup: async () => {},
    };
  });
  describeOutboxStore(`keyValueStore over ${name}, reopened by another runtime`, async () => {
    const device = new Device();
    const clock = steppingClock();
    // Another module object on the same device: a headless or background runtime beside the app's, or the app
    // started again. Only the storage is shared, as between two runtimes: the lease must be in it.
    return {
      store: keyValueStore(make(device), { clock }),
      reopen: async () => keyValueStore(make(device), { clock }),
      cleanup: async () => {},
    };
  });
}

/** Reports kept for the test to read, instead of going to the console. */
function reports() {
  const seen: CorruptEntryReport[] = [];
  return { seen, onCorrupt: (report: CorruptEntryReport) => void seen.push(report) };
}

describe('keyValueStore: what it writes', () => {
  it('keeps each entry under a key of its own and the order in an index, under the prefix', async () => {
    const device = new Device();
    const store = keyValueStore(fakeAsyncStorage(device), { prefix: 'outbox' });
    await store.add(
      makeEntry('a', { request: { ...makeEntry('a').request, body: new Uint8Array([0, 255, 7]) } }),
    );
    await store.add(makeEntry('b'));
    expect([...device.values.keys()].sort()).toEqual(['outbox:entry:0', 'outbox:entry:1', 'outbox:index']);
    expect(JSON.parse(device.values.get('outbox:index')!)).toEqual({
      version: 1,
      next: 2,
      entries: [
        [0, 'a'],
        [1, 'b'],
      ],
    });
    // A byte body as base64 (JSON has no bytes), a string body as it is.
    expect(JSON.parse(device.values.get('outbox:entry:0')!).request).toMatchObject({ bodyBase64: 'AP8H' });
    expect(JSON.parse(device.values.get('outbox:entry:1')!).request).toMatchObject({ body: '{"order":"b"}' });
    // An update rewrites one key; a remove erases the entry's key and leaves only the index.
    device.writes = 0;
    await store.update(makeEntry('b', { attempts: 1 }));
    expect(device.writes).toBe(1);
    await store.remove('a');
    await store.remove('b');
    expect([...device.values.keys()]).toEqual(['outbox:index']);
    await store.close();
  });

  it('keeps the queues of two prefixes on one storage apart, each with its own lease', async () => {
    const storage = fakeMmkv(new Device(), 4);
    const clock = steppingClock();
    const first = keyValueStore(storage, { prefix: 'one', clock });
    const second = keyValueStore(storage, { prefix: 'two', clock });
    await first.add(makeEntry('a'));
    await second.add(makeEntry('a', { attempts: 5 }));
    expect((await first.get('a'))?.attempts).toBe(0);
    expect((await second.list()).map((entry) => entry.attempts)).toEqual([5]);
    expect(await first.acquireLease('x', 1_000, 0)).toBe(true);
    expect(await second.acquireLease('y', 1_000, 0)).toBe(true);
    await Promise.all([first.close(), second.close()]);
  });

  it('loses no change made at once through two handles on one AsyncStorage: their calls take turns', async () => {
    const device = new Device();
    const storage = fakeAsyncStorage(device);
    const [one, two] = [keyValueStore(storage), keyValueStore(storage)];
    const ids = Array.from({ length: 20 }, (_, i) => `e${i}`);
    await Promise.all(ids.map((id, i) => (i % 2 ? one : two).add(makeEntry(id))));
    await Promise.all(ids.map((id, i) => (i % 2 ? two : one).update(makeEntry(id, { attempts: i }))));
    const listed = await keyValueStore(fakeAsyncStorage(device)).list();
    expect(listed.map((entry) => [entry.id, entry.attempts])).toEqual(ids.map((id, i) => [id, i]));
    await Promise.all([one.close(), two.close()]);
  });

  it('refuses what is neither AsyncStorage nor MMKV, and bad options, naming them', () => {
    expect(() => keyValueStore({ getItem: () => null } as never)).toThrow(ArgumentError);
    expect(() => keyValueStore({} as never)).toThrow(
      'keyValueStore: storage: expected AsyncStorage (getItem, setItem, removeItem) or an MMKV instance (getString, set, remove or delete)',
    );
    expect(() => keyValueStore(undefined as never)).toThrow(/storage: expected AsyncStorage/);
    const storage = fakeAsyncStorage(new Device());
    expect(() => keyValueStore(storage, { prefix: '' })).toThrow(
      'keyValueStore: options.prefix: expected a non-empty string',
    );
    expect(() => keyValueStore(storage, { onCorrupt: 'log' as never })).toThrow(
      /options\.onCorrupt: expected a function/,
    );
    expect(() => keyValueStore(storage, { leaseSettleMs: 0 })).toThrow(
      'keyValueStore: options.leaseSettleMs: expected a finite number > 0',
    );
    expect(() => keyValueStore(storage, { clock: {} as never })).toThrow(
      'keyValueStore: options.clock: expected a Clock (now, setTimeout, clearTimeout)',
    );
  });
});

describe('keyValueStore across a restart of the app', () => {
  it('keeps the queue, and the lease of the killed app frees when its expiry passes: it is in the storage', async () => {
    const device = new Device();
    const clock = steppingClock();
    const before = keyValueStore(fakeMmkv(device, 4), { clock });
    await before.add(makeEntry('a'));
    expect(await before.acquireLease('old-app', 30_000, 0)).toBe(true);
    expect(JSON.parse(device.values.get('failwise-outbox:lease')!)).toEqual({
      owner: 'old-app',
      expiresAt: 30_000,
    });
    // The app is killed: no close(), no releaseLease. It starts again on the same disk, where the dead app's
    // lease cannot be told from a live background runtime's: it stands until it expires.
    const after = keyValueStore(fakeMmkv(device, 4), { clock });
    expect(await after.list()).toEqual([makeEntry('a')]);
    expect(await after.acquireLease('new-app', 30_000, 1)).toBe(false);
    expect(await after.acquireLease('new-app', 30_000, 29_999)).toBe(false);
    expect(await after.acquireLease('new-app', 30_000, 30_000)).toBe(true);
    await after.close();
    // Closing gave it back: nothing of the lease is left in the storage.
    expect(device.values.has('failwise-outbox:lease')).toBe(false);
  });

  describe('under a client: a durable write made offline is sent once by the next start', () => {
    const loopback = useLoopback();
    const clients: FailoverClient[] = [];
    afterEach(async () => {
      for (const client of clients.splice(0)) await client.close();
    });

    for (const shape of Object.keys(shapes) as Shape[])
      it(`over ${shape}`, async () => {
        const device = new Device();
        const offline = createFailoverClient({
          origins: [{ id: 'primary', url: `http://127.0.0.1:${await closedPort()}`, allowInsecure: true }],
          store: keyValueStore(shapes[shape](device)),
          connectivity: manualConnectivity('offline'),
        });
        clients.push(offline);
        // Bytes the loopback server reads back exactly (it decodes bodies as UTF-8); the contract suite has 0xff.
        const body = new Uint8Array([0, 1, 0x41, 0x7f]);
        const outcome = await offline.request({
          method: 'POST',
          path: '/v1/sync',
          body,
          lifetime: 'durable',
        });
        expect(outcome).toMatchObject({ status: 'deferred', reason: 'offline' });
        // Killed: the module objects are gone with the runtime; the disk keeps the entry.
        device.dead = true;
        device.restart();
        const [stored] = await keyValueStore(shapes[shape](device)).list();
        expect(stored).toMatchObject({ status: 'pending', attempts: 0, request: { path: '/v1/sync' } });

        const server = await loopback.serve(({ res }) => void res.writeHead(200).end());
        const online = createFailoverClient({
          origins: [{ id: 'primary', url: server.url, allowInsecure: true }],
          store: keyValueStore(shapes[shape](device)),
          connectivity: manualConnectivity('online'),
        });
        clients.push(online);
        await online.outbox.flush();
        expect(await online.outbox.size()).toBe(0);
        expect(server.requests.map((request) => [request.url, request.headers['idempotency-key']])).toEqual([
          ['/v1/sync', stored!.idempotencyKey],
        ]);
        expect(Buffer.from(server.requests[0]!.body, 'latin1')).toEqual(Buffer.from(body));
        expect([...device.values.keys()]).toEqual(['failwise-outbox:index']);
      });
  });
});

describe('keyValueStore: the lease across runtimes, with no compare-and-set', () => {
  // Two runtimes (an app and a background task) over one device, each with its own module object, whose calls
  // take 0 to 40 simulated ms each and so interleave in every order: a claim's read and write together may
  // take longer than the 50 ms the lease waits, and such a claim must not count. Fixed seed.
  const SETTLE_MS = 50;

  it('never lets both hold it at once, whatever the order their reads and writes land in', async () => {
    let overwritten = 0;
    let holds = 0;
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.nat({ max: 40 }), { minLength: 8, maxLength: 48 }),
        fc.tuple(fc.nat({ max: 60 }), fc.nat({ max: 60 })),
        fc.integer({ min: 1, max: 3 }),
        async (delays, starts, rounds) => {
          const clock = simulatedClock();
          const device = new Device();
          let next = 0;
          const delay = () => delays[next++ % delays.length]!;
          const sleep = (ms: number) => new Promise<void>((resolve) => clock.setTimeout(() => resolve(), ms));
          const held: Array<{ owner: string; from: number; to: number }> = [];
          const runtime = async (owner: string, start: number) => {
            const storage = slowAsyncStorage(device, clock, delay);
            const setItem = storage.setItem;
            // Counts the claims written over another owner's: both read the lease free, the race itself.
            storage.setItem = (key, value) => {
              const before = device.values.get(key);
              if (key.endsWith(':lease') && before && !before.includes(`"${owner}"`)) overwritten += 1;
              return setItem(key, value);
            };
            const store = keyValueStore(storage, { clock, leaseSettleMs: SETTLE_MS });
            await sleep(start);
            for (let round = 0, tries = 0; round < rounds && tries < 30; tries += 1) {
              if (await store.acquireLease(owner, 1_000, clock.now())) {
                const from = clock.now();
                await sleep(25); // sending
                held.push({ owner, from, to: clock.now() });
                await store.releaseLease(owner);
                round += 1;
              } else await sleep(30);
            }
            await store.close();
          };
          const both = Promise.all([runtime('app', starts[0]), runtime('background', starts[1])]);
          await clock.runAll();
          await both;
          holds += held.length;
          for (const a of held)
            for (const b of held)
              if (a.owner !== b.owner)
                expect(a.to <= b.from || b.to <= a.from, JSON.stringify(held)).toBe(true);
        },
      ),
      { numRuns: 200, seed: 32 },
    );
    // The runs raced (claims written over each other's), and the lease was held, one runtime at a time.
    expect(overwritten).toBeGreaterThan(20);
    expect(holds).toBeGreaterThan(200);
  });

  it('does not count a claim whose own read and write took longer than the wait, and refuses it until it expires', async () => {
    const clock = simulatedClock();
    const device = new Device();
    let slow = true;
    const storage = slowAsyncStorage(device, clock, () => (slow ? 30 : 1));
    const store = keyValueStore(storage, { clock, leaseSettleMs: SETTLE_MS });
    const claim = store.acquireLease('app', 1_000, 0);
    await clock.runAll();
    // Read and written in 60 ms: another runtime's claim could have landed in between unseen.
    expect(await claim).toBe(false);
    expect(JSON.parse(device.values.get('failwise-outbox:lease')!)).toEqual({
      owner: 'app',
      expiresAt: 1_000,
    });
    slow = false;
    const again = store.acquireLease('app', 1_000, clock.now());
    await clock.runAll();
    expect(await again).toBe(false);
    await clock.set(1_000);
    const expired = store.acquireLease('app', 1_000, clock.now());
    await clock.runAll();
    expect(await expired).toBe(true);
    const closed = store.close();
    await clock.runAll();
    await closed;
    expect(device.values.has('failwise-outbox:lease')).toBe(false);
  });
});

describe('keyValueStore: atomic with single-key writes', () => {
  it('an add killed after its entry write is not added; the next add reuses the slot, leaving nothing behind', async () => {
    const device = new Device();
    await keyValueStore(fakeAsyncStorage(device)).add(makeEntry('a'));
    device.crashAtWrite = device.writes + 2; // the index write of the next add
    await expect(keyValueStore(fakeAsyncStorage(device)).add(makeEntry('b'))).rejects.toThrow(/killed/);
    expect(device.values.has('failwise-outbox:entry:1')).toBe(true); // written, but no index names it

    device.restart();
    const store = keyValueStore(fakeAsyncStorage(device));
    expect((await store.list()).map((entry) => entry.id)).toEqual(['a']);
    await store.add(makeEntry('c'));
    expect((await store.list()).map((entry) => entry.id)).toEqual(['a', 'c']);
    expect([...device.values.keys()].sort()).toEqual([
      'failwise-outbox:entry:0',
      'failwise-outbox:entry:1',
      'failwise-outbox:index',
    ]);
  });

  it('a remove killed after erasing the entry is done: the next call reads it as removed and tidies the index', async () => {
    const device = new Device();
    const first = keyValueStore(fakeMmkv(device, 3));
    for (const id of ['a', 'b', 'c']) await first.add(makeEntry(id));
    device.crashAtWrite = device.writes + 2; // the index write after the erase
    await expect(first.remove('b')).rejects.toThrow(/killed/);

    device.restart();
    const store = keyValueStore(fakeMmkv(device, 3));
    expect(await store.get('b')).toBeUndefined();
    await expect(store.update(makeEntry('b', { attempts: 1 }))).rejects.toThrow(/no entry with id "b"/);
    expect((await store.list()).map((entry) => entry.id)).toEqual(['a', 'c']);
    expect(JSON.parse(device.values.get('failwise-outbox:index')!).entries).toEqual([
      [0, 'a'],
      [2, 'c'],
    ]);
    // The id may come back, at the end.
    await store.add(makeEntry('b'));
    expect((await store.list()).map((entry) => entry.id)).toEqual(['a', 'c', 'b']);
  });

  it('a write that fails (rather than kills) rejects the call with the storage error, and the store goes on', async () => {
    const device = new Device();
    const store = keyValueStore(fakeAsyncStorage(device));
    await store.add(makeEntry('a'));
    device.failWrite = device.writes + 1;
    const error = await store.add(makeEntry('b')).catch((rejection: unknown) => rejection);
    expect(error).toBeInstanceOf(FailwiseError);
    expect((error as Error).message).toBe(
      'keyValueStore.add: the storage failed: SQLITE_FULL: database or disk is full',
    );
    expect((error as Error).cause).toBeInstanceOf(Error);
    expect((await store.list()).map((entry) => entry.id)).toEqual(['a']);
    await store.add(makeEntry('b'));
    expect((await store.list()).map((entry) => entry.id)).toEqual(['a', 'b']);
    await store.close();
  });

  type Op = { kind: 'add' | 'update' | 'remove'; id: string; attempts: number; bytes: boolean };
  const op = fc.record({
    kind: fc.constantFrom<Op['kind']>('add', 'add', 'update', 'remove'),
    id: fc.constantFrom('a', 'b', 'c', 'd'),
    attempts: fc.nat({ max: 9 }),
    bytes: fc.boolean(),
  });
  const entryOf = ({ id, attempts, bytes }: Op): OutboxEntry =>
    makeEntry(id, {
      attempts,
      request: {
        ...makeEntry(id).request,
        body: bytes ? new Uint8Array([attempts, 0, 255]) : `body-${attempts}`,
      },
    });

  /** What a store holds after `op`, as memoryStore defines it (an add of a taken id or an update of none: no change). */
  function applied(entries: OutboxEntry[], next: Op): OutboxEntry[] {
    const has = entries.some((entry) => entry.id === next.id);
    if (next.kind === 'add') return has ? entries : [...entries, entryOf(next)];
    if (next.kind === 'update') return entries.map((entry) => (entry.id === next.id ? entryOf(next) : entry));
    return entries.filter((entry) => entry.id !== next.id);
  }

  async function run(store: ReturnType<typeof keyValueStore>, next: Op): Promise<void> {
    if (next.kind === 'remove') return store.remove(next.id);
    await store[next.kind](entryOf(next)).catch((error: unknown) => {
      // A taken id or a missing one: refused, as the model says; anything else is a failure of the test.
      if (!/exists already|no entry with id/.test((error as Error).message)) throw error;
    });
  }

  it('whatever change the app is killed in, and at whichever write, the restarted store holds the queue before or after it', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...(Object.keys(shapes) as Shape[])),
        fc.array(op, { minLength: 1, maxLength: 10 }),
        fc.nat(),
        fc.integer({ min: 1, max: 3 }),
        fc.array(op, { maxLength: 4 }),
        async (shape, ops, at, write, after) => {
          const device = new Device();
          const crashed = at % ops.length;
          let model: OutboxEntry[] = [];
          const store = keyValueStore(shapes[shape](device));
          for (const next of ops.slice(0, crashed)) {
            await run(store, next);
            model = applied(model, next);
          }
          // Killed at the change's first, second or (past its last write: not killed) third write.
          device.crashAtWrite = device.writes + write;
          await run(store, ops[crashed]!).catch((error: unknown) => expect(String(error)).toMatch(/killed/));
          device.restart();

          const restarted = keyValueStore(shapes[shape](device));
          const listed = await restarted.list();
          const before = model;
          model = applied(model, ops[crashed]!);
          expect([before, model]).toContainEqual(listed);
          model = listed;
          // It goes on as a store that was never killed, and keeps nothing but the queue (and one unused slot).
          for (const next of after) {
            await run(restarted, next);
            model = applied(model, next);
          }
          expect(await restarted.list()).toEqual(model);
          expect(device.values.size).toBeLessThanOrEqual(model.length + 2);
          await restarted.close();
        },
      ),
      { numRuns: 300 },
    );
  });
});

describe('keyValueStore: data it cannot read', () => {
  it('takes an unreadable entry out of the queue, reports it once without its content, and leaves its value', async () => {
    const device = new Device();
    const { seen, onCorrupt } = reports();
    const store = keyValueStore(fakeAsyncStorage(device), { onCorrupt });
    for (const id of ['a', 'b', 'c', 'd', 'e']) await store.add(makeEntry(id));
    device.values.set('failwise-outbox:entry:1', '{"id":"b","secret-token');
    device.values.set('failwise-outbox:entry:2', JSON.stringify({ ...makeEntry('c'), attempts: -1 }));
    device.values.set('failwise-outbox:entry:3', JSON.stringify(makeEntry('someone-else')));
    const bad = JSON.parse(JSON.stringify(makeEntry('e'))) as { request: Record<string, unknown> };
    bad.request = { ...bad.request, body: undefined, bodyBase64: 'not base64!' };
    device.values.set('failwise-outbox:entry:4', JSON.stringify(bad));

    expect((await store.list()).map((entry) => entry.id)).toEqual(['a']);
    expect(seen).toEqual([
      {
        key: 'failwise-outbox:entry:1',
        id: 'b',
        problem:
          'under "failwise-outbox:entry:1" is not valid JSON: taken out of the queue, its value left there',
      },
      {
        key: 'failwise-outbox:entry:2',
        id: 'c',
        problem:
          'under "failwise-outbox:entry:2" is not an entry (entry.attempts: expected an integer >= 0 (got -1)): taken out of the queue, its value left there',
      },
      {
        key: 'failwise-outbox:entry:3',
        id: 'd',
        problem:
          'under "failwise-outbox:entry:3" holds another entry than the index names: taken out of the queue, its value left there',
      },
      {
        key: 'failwise-outbox:entry:4',
        id: 'e',
        problem:
          'under "failwise-outbox:entry:4" has a byte body that is not base64: taken out of the queue, its value left there',
      },
    ]);
    expect(JSON.stringify(seen)).not.toContain('secret');
    // Reported once: the index no longer names them. Their values are where they were, for the app to look at.
    expect((await store.list()).map((entry) => entry.id)).toEqual(['a']);
    expect(seen).toHaveLength(4);
    expect(device.values.get('failwise-outbox:entry:1')).toBe('{"id":"b","secret-token');
    // The queue goes on, and a new entry takes a new slot rather than one holding a value it could not read.
    await store.add(makeEntry('f'));
    expect((await store.list()).map((entry) => entry.id)).toEqual(['a', 'f']);
    expect(device.values.get('failwise-outbox:entry:1')).toBe('{"id":"b","secret-token');
    await store.close();
  });

  it('says so on the console when the app gave no reporter, and a reporter that throws stops nothing', async () => {
    const device = new Device();
    const store = keyValueStore(fakeMmkv(device, 4));
    await store.add(makeEntry('a'));
    await store.add(makeEntry('b'));
    device.values.set('failwise-outbox:entry:0', 'garbage');
    const logged: unknown[][] = [];
    const { error } = console;
    console.error = (...args: unknown[]) => void logged.push(args);
    try {
      expect((await store.list()).map((entry) => entry.id)).toEqual(['b']);
    } finally {
      console.error = error;
    }
    expect(logged).toEqual([
      [
        'failwise keyValueStore: the entry "a" under "failwise-outbox:entry:0" is not valid JSON: taken out of the queue, its value left there',
      ],
    ]);

    device.values.set('failwise-outbox:entry:1', 'garbage');
    const throwing = keyValueStore(fakeMmkv(device, 4), {
      onCorrupt: () => {
        throw new Error('reporter down');
      },
    });
    expect(await throwing.list()).toEqual([]);
    await Promise.all([store.close(), throwing.close()]);
  });

  it('refuses every call with a clear error while the index is unreadable, and writes nothing', async () => {
    const device = new Device();
    const store = keyValueStore(fakeAsyncStorage(device));
    await store.add(makeEntry('a'));
    for (const index of ['{"version":1,', '[1,2]', '{"version":1,"next":1,"entries":[[0,"a"],[0,"b"]]}']) {
      device.values.set('failwise-outbox:index', index);
      const snapshot = new Map(device.values);
      for (const call of [() => store.list(), () => store.add(makeEntry('b')), () => store.remove('a')])
        await expect(call()).rejects.toThrow(
          /the queue's index under "failwise-outbox:index" (is not valid JSON|is not an object|lists a slot or an id twice); it holds the queue, so the store reads and writes nothing until it is repaired \(removing that key starts an empty queue and leaves the entries under their own keys\)$/,
        );
      expect(device.values).toEqual(snapshot);
    }
    device.values.set('failwise-outbox:index', '{"version":2,"next":0,"entries":[]}');
    await expect(store.get('a')).rejects.toThrow(
      'keyValueStore.get: the queue\'s index under "failwise-outbox:index" has layout version 2, written by a newer failwise; this one reads version 1',
    );
    // Removing the key starts an empty queue.
    device.values.delete('failwise-outbox:index');
    expect(await store.list()).toEqual([]);
    await store.close();
  });

  it('under a client: a durable request is refused with the error while the index is unreadable, and takes them again once it is repaired', async () => {
    const device = new Device();
    device.values.set('failwise-outbox:index', 'not json');
    const clock = simulatedClock();
    const transport = scriptedTransport(clock, [{ reply: respond(200) }]);
    const client = createFailoverClient({
      origins: [{ id: 'primary', url: 'https://api.example.com' }],
      store: keyValueStore(fakeAsyncStorage(device), { clock }),
      transport,
      clock,
    });
    const order = { method: 'POST', path: '/v1/orders', body: '{}', lifetime: 'durable' } as const;
    /** `promise` once the simulated clock has run what is due within a second. */
    const settled = async <T>(promise: Promise<T>): Promise<T> => {
      await clock.runAll(1_000);
      return promise;
    };
    const refused = await settled(client.request(order).catch((error: unknown) => error));
    expect(refused).toBeInstanceOf(FailwiseError);
    expect(String((refused as Error).cause)).toMatch(/index under "failwise-outbox:index" is not valid JSON/);
    expect(transport.calls).toHaveLength(0); // nothing sent that was not stored first
    // Interactive requests go on; the outbox waits a backoff (durable.initialMs) before it reads again.
    expect(await settled(client.request({ path: '/v1/ping' }))).toMatchObject({ status: 'succeeded' });
    device.values.delete('failwise-outbox:index');
    await clock.increment(10_000);
    expect(await settled(client.request(order))).toMatchObject({ status: 'succeeded' });
    expect(await client.outbox.size()).toBe(0);
    await client.close();
    expect(clock.pending()).toBe(0);
  });
});
