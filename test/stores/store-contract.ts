import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ArgumentError } from '../../src/errors/argument-error.js';

import { FailwiseError } from '../../src/errors/failwise-error.js';
import type { Failure } from '../../src/policy/failure.js';
import type { OutboxEntry, OutboxStore } from '../../src/stores/outbox-store.js';

/** What a store's test file hands the suite: a fresh, empty store for each test. */
export interface OpenedStore {
  store: OutboxStore;
  /**
   * Opens another handle on the same storage (same file, same database). The suite may call it while
   * `store` is still open (two processes or tabs) and after `store` is closed (a restart). Give it for
   * every store that keeps its entries; the persistence tests run only with it.
   */
  reopen?: () => Promise<OutboxStore>;
  /** Removes what the store left behind (files, databases). Runs after every handle is closed. */
  cleanup: () => Promise<void>;
}

/** Bytes that are not valid UTF-8, with a zero and a 0xff: a text round trip would change them. */
const BYTES = [0, 1, 127, 128, 0xc3, 0x28, 0xfe, 0xff, 0];

/** An entry with every required field set to something recognisable; `overrides` wins. */
export function makeEntry(id: string, overrides: Partial<OutboxEntry> = {}): OutboxEntry {
  return {
    id,
    createdAt: 1_000,
    request: {
      method: 'POST',
      path: `/v1/orders?ref=${id}`,
      headers: { 'content-type': 'application/json' },
      body: `{"order":"${id}"}`,
    },
    idempotencyKey: `key-${id}`,
    attempts: 0,
    nextAttemptAt: 1_000,
    failures: [],
    status: 'pending',
    ...overrides,
  };
}

const failures: Failure[] = [
  { class: 'connect', requestSent: 'no', origin: 'primary', message: 'ECONNREFUSED' },
  {
    class: 'rate-limited',
    requestSent: 'yes',
    origin: 'backup',
    status: 429,
    retryAfterMs: 2_500,
    message: 'HTTP 429',
  },
  { class: 'response-timeout', requestSent: 'unknown', origin: 'backup', message: 'no response in 3000 ms' },
];

/** A body of exactly these bytes, as a plain Uint8Array. */
const bytes = () => new Uint8Array(BYTES);

/** Asserts `body` is a plain Uint8Array (not a Buffer, not a string) holding exactly `BYTES`. */
function expectBytes(body: unknown): void {
  expect(body).toBeInstanceOf(Uint8Array);
  expect(Object.getPrototypeOf(body)).toBe(Uint8Array.prototype);
  expect([...(body as Uint8Array)]).toEqual(BYTES);
}

/**
 * The suite every `OutboxStore` runs (src/stores/outbox-store.ts documents what it checks). Call it at the
 * top level of a test file; `open` runs before each test and must give an empty store.
 *
 * @example
 * ```ts
 * describeOutboxStore('memoryStore', async () => ({ store: memoryStore(), cleanup: async () => {} }), {
 *   persistent: false,
 * });
 * ```
 */
export function describeOutboxStore(
  name: string,
  open: () => Promise<OpenedStore>,
  options: { persistent?: boolean } = {},
): void {
  describe(`${name} (OutboxStore contract)`, () => {
    let opened: OpenedStore;
    let store: OutboxStore;
    /** Every handle a test opened: closed after it, before cleanup. */
    let handles: OutboxStore[];

    beforeEach(async () => {
      opened = await open();
      store = opened.store;
      handles = [store];
    });

    afterEach(async () => {
      for (const handle of handles) await handle.close();
      await opened.cleanup();
    });

    /** Another handle on the same storage, closed after the test. */
    async function reopen(): Promise<OutboxStore> {
      if (opened.reopen === undefined) throw new Error(`${name}: this test needs reopen`);
      const other = await opened.reopen();
      handles.push(other);
      return other;
    }

    describe('entries', () => {
      it('gets an added entry back, equal to what was added', async () => {
        const entry = makeEntry('a', { orderKey: 'cart-1', attempts: 2, nextAttemptAt: 5_000 });
        await store.add(entry);
        expect(await store.get('a')).toEqual(entry);
      });

      it('writes nothing for a request that gave up before the write, and resolves false', async () => {
        const gaveUp = new AbortController();
        gaveUp.abort();
        expect(await store.add(makeEntry('a'), [], gaveUp.signal)).toBe(false);
        expect(await store.list()).toEqual([]);
        // A request still waiting for its write has it written.
        await store.add(makeEntry('b'), [], new AbortController().signal);
        expect((await store.list()).map((entry) => entry.id)).toEqual(['b']);
      });

      it('gets undefined for an id that was never added', async () => {
        await store.add(makeEntry('a'));
        expect(await store.get('b')).toBeUndefined();
      });

      it('lists entries in the order they were added, not by id', async () => {
        for (const id of ['c', 'a', 'b']) await store.add(makeEntry(id));
        expect((await store.list()).map((entry) => entry.id)).toEqual(['c', 'a', 'b']);
      });

      it('lists nothing when empty', async () => {
        expect(await store.list()).toEqual([]);
      });

      it('rejects adding an entry whose id exists, and keeps the first one', async () => {
        await store.add(makeEntry('a', { attempts: 1 }));
        const add = store.add(makeEntry('a', { attempts: 7 }));
        await expect(add).rejects.toThrow(FailwiseError);
        await expect(add).rejects.toThrow(/"a" exists already/);
        expect((await store.get('a'))?.attempts).toBe(1);
        expect(await store.list()).toHaveLength(1);
      });

      it('replaces an entry on update and keeps its place in the order', async () => {
        for (const id of ['a', 'b', 'c']) await store.add(makeEntry(id));
        const updated = makeEntry('b', { attempts: 3, nextAttemptAt: 9_000, failures: [failures[0]!] });
        await store.update(updated);
        expect(await store.get('b')).toEqual(updated);
        expect((await store.list()).map((entry) => [entry.id, entry.attempts])).toEqual([
          ['a', 0],
          ['b', 3],
          ['c', 0],
        ]);
      });

      it('rejects updating an id that is not there, and adds nothing', async () => {
        await store.add(makeEntry('a'));
        await store.remove('a');
        const update = store.update(makeEntry('a', { attempts: 1 }));
        await expect(update).rejects.toThrow(FailwiseError);
        await expect(update).rejects.toThrow(/no entry with id "a" to update/);
        expect(await store.list()).toEqual([]);
      });

      it('removes an entry, and removing one that is not there resolves', async () => {
        for (const id of ['a', 'b', 'c']) await store.add(makeEntry(id));
        await store.remove('b');
        await store.remove('b');
        await store.remove('never-added');
        expect(await store.get('b')).toBeUndefined();
        expect((await store.list()).map((entry) => entry.id)).toEqual(['a', 'c']);
      });

      it('adds an id again after it was removed, at the end of the order', async () => {
        for (const id of ['a', 'b']) await store.add(makeEntry(id));
        await store.remove('a');
        await store.add(makeEntry('a', { attempts: 4 }));
        expect((await store.list()).map((entry) => [entry.id, entry.attempts])).toEqual([
          ['b', 0],
          ['a', 4],
        ]);
      });

      it('lists dead entries with their reason, beside pending ones', async () => {
        await store.add(makeEntry('a'));
        await store.add(makeEntry('b', { status: 'dead', deadReason: 'attempts-exhausted', attempts: 3 }));
        await store.update(makeEntry('a', { status: 'dead', deadReason: 'not-retryable' }));
        await store.add(makeEntry('c'));
        expect((await store.list()).map(({ id, status, deadReason }) => [id, status, deadReason])).toEqual([
          ['a', 'dead', 'not-retryable'],
          ['b', 'dead', 'attempts-exhausted'],
          ['c', 'pending', undefined],
        ]);
      });
    });

    describe('copies', () => {
      it('keeps what was added when the caller mutates the entry afterwards', async () => {
        const entry = makeEntry('a', { request: { ...makeEntry('a').request, body: bytes() } });
        await store.add(entry);
        entry.attempts = 99;
        entry.request.headers['x-changed'] = 'yes';
        (entry.request.body as Uint8Array)[0] = 42;
        entry.failures.push(failures[0]!);
        const stored = await store.get('a');
        expect(stored?.attempts).toBe(0);
        expect(stored?.request.headers).toEqual({ 'content-type': 'application/json' });
        expect(stored?.failures).toEqual([]);
        expectBytes(stored?.request.body);
      });

      it('returns a new object on every get and list, which the caller may mutate freely', async () => {
        await store.add(makeEntry('a', { failures: [failures[1]!] }));
        const first = (await store.get('a'))!;
        const second = (await store.get('a'))!;
        expect(first).not.toBe(second);
        first.attempts = 99;
        first.failures[0]!.message = 'changed';
        const [listed] = await store.list();
        listed!.request.path = '/changed';
        const again = (await store.get('a'))!;
        expect(again.attempts).toBe(0);
        expect(again.failures[0]?.message).toBe('HTTP 429');
        expect(again.request.path).toBe('/v1/orders?ref=a');
      });

      it('keeps what was given to update when the caller mutates it afterwards', async () => {
        await store.add(makeEntry('a'));
        const updated = makeEntry('a', { attempts: 1 });
        await store.update(updated);
        updated.attempts = 50;
        expect((await store.get('a'))?.attempts).toBe(1);
      });
    });

    describe('bodies and failures', () => {
      it('gives a string body back as the same string', async () => {
        const text = 'héllo, 世界 🌍\u0000 "quoted" \\ end';
        await store.add(makeEntry('a', { request: { ...makeEntry('a').request, body: text } }));
        await store.add(makeEntry('b', { request: { ...makeEntry('b').request, body: '' } }));
        const [a, b] = await store.list();
        expect(a?.request.body).toBe(text);
        expect(b?.request.body).toBe('');
      });

      it('gives a Uint8Array body back as a Uint8Array of the same bytes', async () => {
        await store.add(makeEntry('a', { request: { ...makeEntry('a').request, body: bytes() } }));
        expectBytes((await store.get('a'))?.request.body);
        expectBytes((await store.list())[0]?.request.body);
      });

      it('gives an empty Uint8Array body back as an empty Uint8Array', async () => {
        await store.add(makeEntry('a', { request: { ...makeEntry('a').request, body: new Uint8Array(0) } }));
        const body = (await store.get('a'))?.request.body;
        expect(body).toBeInstanceOf(Uint8Array);
        expect((body as Uint8Array).byteLength).toBe(0);
      });

      it('keeps only the viewed bytes of a Uint8Array that views part of a larger buffer', async () => {
        const view = new Uint8Array(new Uint8Array([9, 9, ...BYTES, 9]).buffer, 2, BYTES.length);
        await store.add(makeEntry('a', { request: { ...makeEntry('a').request, body: view } }));
        expectBytes((await store.get('a'))?.request.body);
      });

      it('keeps a request without a body without one', async () => {
        const { body: _body, ...request } = makeEntry('a').request;
        await store.add(makeEntry('a', { request: { ...request, method: 'DELETE', idempotent: true } }));
        const stored = await store.get('a');
        expect(stored?.request.body).toBeUndefined();
        expect(stored?.request).toEqual({ ...request, method: 'DELETE', idempotent: true });
      });

      it("keeps a request's own policy, and refuses one that is not an object", async () => {
        const policy = { attempts: { max: 1 }, backoff: { maxMs: 900 }, retryableStatuses: [503] };
        await store.add(makeEntry('a', { request: { ...makeEntry('a').request, policy } }));
        expect((await store.get('a'))?.request.policy).toEqual(policy);
        await expect(
          store.add(makeEntry('b', { request: { ...makeEntry('b').request, policy: 5 as never } })),
        ).rejects.toThrow(/request\.policy/);
      });

      it('changes a body from bytes to a string and back on update', async () => {
        await store.add(makeEntry('a', { request: { ...makeEntry('a').request, body: bytes() } }));
        await store.update(makeEntry('a', { request: { ...makeEntry('a').request, body: 'text' } }));
        expect((await store.get('a'))?.request.body).toBe('text');
        await store.update(makeEntry('a', { request: { ...makeEntry('a').request, body: bytes() } }));
        expectBytes((await store.get('a'))?.request.body);
      });

      it('gives the failures array back in order, with every field', async () => {
        await store.add(makeEntry('a', { failures, attempts: 3 }));
        expect((await store.get('a'))?.failures).toEqual(failures);
        expect((await store.list())[0]?.failures).toEqual(failures);
      });
    });

    describe('replacing (add with replaces)', () => {
      const draft = (id: string, overrides: Partial<OutboxEntry> = {}) =>
        makeEntry(id, { replaceKey: 'draft-7', ...overrides });

      it('removes a pending entry with the same replaceKey and the attempts the caller saw, in the add', async () => {
        await store.add(draft('a', { attempts: 2 }));
        await store.add(makeEntry('b'));
        expect(await store.add(draft('c'), [{ id: 'a', attempts: 2 }])).toEqual(['a']);
        expect(await store.get('a')).toBeUndefined();
        expect((await store.list()).map((entry) => entry.id)).toEqual(['b', 'c']);
        expect(await store.get('c')).toEqual(draft('c'));
      });

      it('leaves one counted since, a dead one, one of another replaceKey and a missing one, and adds', async () => {
        await store.add(draft('counted', { attempts: 1 }));
        await store.update(draft('counted', { attempts: 2 })); // a runner counted a send of it meanwhile
        await store.add(draft('dead', { status: 'dead', deadReason: 'attempts-exhausted' }));
        await store.add(makeEntry('other', { replaceKey: 'draft-8' }));
        await store.add(makeEntry('keyless'));
        const replaces = [
          { id: 'counted', attempts: 1 },
          { id: 'dead', attempts: 0 },
          { id: 'other', attempts: 0 },
          { id: 'keyless', attempts: 0 },
          { id: 'never-added', attempts: 0 },
        ];
        expect(await store.add(draft('new'), replaces)).toEqual([]);
        expect((await store.list()).map((entry) => entry.id)).toEqual([
          'counted',
          'dead',
          'other',
          'keyless',
          'new',
        ]);
      });

      it('removes every listed one that is replaceable, and nothing when the add is refused', async () => {
        for (const id of ['a', 'b', 'c']) await store.add(draft(id));
        const add = store.add(draft('c'), [{ id: 'a', attempts: 0 }]);
        await expect(add).rejects.toThrow(/"c" exists already/);
        expect((await store.list()).map((entry) => entry.id)).toEqual(['a', 'b', 'c']);
        expect(
          await store.add(draft('d'), [
            { id: 'a', attempts: 0 },
            { id: 'b', attempts: 0 },
          ]),
        ).toEqual(['a', 'b']);
        expect((await store.list()).map((entry) => entry.id)).toEqual(['c', 'd']);
      });

      it('refuses replaces for an entry without a replaceKey, or of bad shape, with an ArgumentError', async () => {
        await store.add(draft('a'));
        await expect(store.add(makeEntry('b'), [{ id: 'a', attempts: 0 }])).rejects.toThrow(
          /replaces: only an entry with a replaceKey replaces others/,
        );
        await expect(store.add(draft('b'), [{ id: 'a' } as never])).rejects.toThrow(ArgumentError);
        await expect(store.add(draft('b'), [{ id: 'b', attempts: 0 }])).rejects.toThrow(
          /replaces: expected a list of \{ id, attempts \} of other entries/,
        );
        await expect(store.add(makeEntry('b', { replaceKey: 5 as never }))).rejects.toThrow(
          /entry\.replaceKey: expected a string or undefined/,
        );
        expect((await store.list()).map((entry) => entry.id)).toEqual(['a']);
      });
    });

    describe('lease', () => {
      it('grants a free lease', async () => {
        expect(await store.acquireLease('a', 1_000, 0)).toBe(true);
      });

      it('refuses another owner while the lease is unexpired', async () => {
        expect(await store.acquireLease('a', 1_000, 0)).toBe(true);
        expect(await store.acquireLease('b', 1_000, 1)).toBe(false);
        expect(await store.acquireLease('b', 1_000, 999)).toBe(false);
      });

      it('grants it to another owner once now reaches the expiry time', async () => {
        expect(await store.acquireLease('a', 1_000, 0)).toBe(true);
        expect(await store.acquireLease('b', 500, 1_000)).toBe(true);
        // b holds it now, until 1500.
        expect(await store.acquireLease('a', 1_000, 1_499)).toBe(false);
      });

      it('renews for the owner that holds it, moving the expiry to now + ttlMs', async () => {
        expect(await store.acquireLease('a', 1_000, 0)).toBe(true);
        expect(await store.acquireLease('a', 1_000, 800)).toBe(true);
        // Without the renewal this would expire at 1000.
        expect(await store.acquireLease('b', 1_000, 1_500)).toBe(false);
        expect(await store.acquireLease('b', 1_000, 1_800)).toBe(true);
      });

      it('renews for its owner even after it expired, when nobody took it', async () => {
        expect(await store.acquireLease('a', 100, 0)).toBe(true);
        expect(await store.acquireLease('a', 100, 5_000)).toBe(true);
        expect(await store.acquireLease('b', 100, 5_050)).toBe(false);
      });

      it('is released only by the owner that holds it', async () => {
        expect(await store.acquireLease('a', 1_000, 0)).toBe(true);
        await store.releaseLease('b');
        expect(await store.acquireLease('b', 1_000, 10)).toBe(false);
        await store.releaseLease('a');
        expect(await store.acquireLease('b', 1_000, 20)).toBe(true);
        expect(await store.acquireLease('a', 1_000, 30)).toBe(false);
      });

      it('lets releasing a lease nobody holds resolve', async () => {
        await store.releaseLease('a');
        expect(await store.acquireLease('a', 1_000, 0)).toBe(true);
      });
    });

    describe('bad input', () => {
      it('rejects an entry with a bad field with an ArgumentError naming the field', async () => {
        const bad = { ...makeEntry('a'), attempts: -1 };
        await expect(store.add(bad)).rejects.toThrow(ArgumentError);
        await expect(store.add(bad)).rejects.toThrow(/entry\.attempts: expected an integer >= 0 \(got -1\)/);
        const badBody = makeEntry('a', {
          request: { ...makeEntry('a').request, body: 42 as unknown as string },
        });
        await expect(store.add(badBody)).rejects.toThrow(
          /entry\.request\.body: expected a string, a Uint8Array or undefined \(got 42\)/,
        );
        await expect(store.update(null as unknown as OutboxEntry)).rejects.toThrow(
          /entry: expected an OutboxEntry object \(got null\)/,
        );
        expect(await store.list()).toEqual([]);
      });

      it('rejects bad lease arguments with an ArgumentError naming the argument', async () => {
        await expect(store.acquireLease('', 1_000, 0)).rejects.toThrow(/owner: expected a non-empty string/);
        await expect(store.acquireLease('a', 0, 0)).rejects.toThrow(
          /ttlMs: expected a finite number > 0 \(got 0\)/,
        );
        await expect(store.acquireLease('a', 1_000, Number.NaN)).rejects.toThrow(
          /now: expected a finite number \(got NaN\)/,
        );
        expect(await store.acquireLease('b', 1_000, 0)).toBe(true);
      });

      it('rejects an empty id with an ArgumentError', async () => {
        await expect(store.get('')).rejects.toThrow(/id: expected a non-empty string/);
        await expect(store.remove('')).rejects.toThrow(ArgumentError);
      });
    });

    describe('close', () => {
      it('rejects every call after close() with an error saying the store is closed', async () => {
        await store.add(makeEntry('a'));
        await store.close();
        const calls: [string, () => Promise<unknown>][] = [
          ['add', () => store.add(makeEntry('b'))],
          ['update', () => store.update(makeEntry('a'))],
          ['remove', () => store.remove('a')],
          ['get', () => store.get('a')],
          ['list', () => store.list()],
          ['acquireLease', () => store.acquireLease('a', 1_000, 0)],
          ['releaseLease', () => store.releaseLease('a')],
        ];
        for (const [method, call] of calls) {
          const error = await call().then(
            () => undefined,
            (rejection: unknown) => rejection,
          );
          expect(error, method).toBeInstanceOf(FailwiseError);
          expect((error as Error).message, method).toMatch(new RegExp(`\\.${method}: the store is closed`));
        }
      });

      it('closes a store that was never used, and closing twice resolves', async () => {
        await store.close();
        await store.close();
        await expect(store.list()).rejects.toThrow(/the store is closed/);
      });
    });

    // Stores that keep nothing across a restart (memoryStore) say `persistent: false`: no such tests there.
    if (options.persistent !== false)
      describe('persistence (with reopen)', () => {
        it('keeps every entry, in order and exactly, after close and reopen', async () => {
          await store.add(makeEntry('c', { request: { ...makeEntry('c').request, body: bytes() } }));
          await store.add(makeEntry('a', { failures, attempts: 3, orderKey: 'cart-1' }));
          await store.add(makeEntry('gone'));
          await store.add(makeEntry('b', { status: 'dead', deadReason: 'expired' }));
          await store.update(makeEntry('a', { failures, attempts: 4, nextAttemptAt: 7_000 }));
          await store.remove('gone');
          const before = await store.list();
          await store.close();

          const reopened = await reopen();
          const after = await reopened.list();
          expect(after.map((entry) => entry.id)).toEqual(['c', 'a', 'b']);
          expect(after).toEqual(before);
          expectBytes(after[0]?.request.body);
          expect(after[1]).toEqual(makeEntry('a', { failures, attempts: 4, nextAttemptAt: 7_000 }));
          expect(after[2]?.deadReason).toBe('expired');
          // The order goes on after the reopen, and a removed id may come back.
          await reopened.add(makeEntry('gone'));
          await expect(reopened.add(makeEntry('a'))).rejects.toThrow(/"a" exists already/);
          expect((await reopened.list()).map((entry) => entry.id)).toEqual(['c', 'a', 'b', 'gone']);
        });

        it('keeps a replacement after close and reopen: the replaced entry stays gone', async () => {
          await store.add(makeEntry('a', { replaceKey: 'k' }));
          await store.add(makeEntry('b', { replaceKey: 'k' }), [{ id: 'a', attempts: 0 }]);
          await store.close();
          const reopened = await reopen();
          expect(await reopened.list()).toEqual([makeEntry('b', { replaceKey: 'k' })]);
        });

        it('shares entries and the lease with a second handle open at the same time', async () => {
          const other = await reopen();
          await store.add(makeEntry('a'));
          expect(await other.get('a')).toEqual(makeEntry('a'));
          await other.update(makeEntry('a', { attempts: 2 }));
          expect((await store.get('a'))?.attempts).toBe(2);

          expect(await store.acquireLease('one', 1_000, 0)).toBe(true);
          expect(await other.acquireLease('two', 1_000, 500)).toBe(false);
          await store.releaseLease('one');
          expect(await other.acquireLease('two', 1_000, 600)).toBe(true);
          expect(await store.acquireLease('one', 1_000, 700)).toBe(false);
        });

        it('gives up the leases taken through a handle when it is closed', async () => {
          const other = await reopen();
          expect(await store.acquireLease('one', 60_000, 0)).toBe(true);
          expect(await other.acquireLease('two', 60_000, 10)).toBe(false);
          await store.close();
          expect(await other.acquireLease('two', 60_000, 20)).toBe(true);
        });
      });
  });
}
