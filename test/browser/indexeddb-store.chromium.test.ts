import { randomUUID } from 'node:crypto';
import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { BrowserContext, Page } from 'playwright-core';
import { afterEach, describe, expect, it } from 'vitest';

import type { OutboxEntry, StoredRequest } from '../../src/stores/outbox-store.js';
import { chromiumSkipReason, useChromium, type OpenedPage } from '../helpers/chromium.js';
import { makeEntry } from '../stores/store-contract.js';

// indexedDbStore in real headless Chromium: the page's bundled script opens the store on the browser's own
// IndexedDB and Web Locks (no option passed, so both are the defaults: globalThis.indexedDB and
// navigator.locks) and exposes it on `globalThis.storeProbe`; the test drives it with page.evaluate. Two
// tabs are two pages of one browser context, so they share the origin's storage and lock manager, as two
// tabs of one site do. Nothing here is faked. test/stores/indexeddb-store.test.ts runs the full contract
// in Node on fake-indexeddb; this file checks what only a browser can: real structured clone, a reload, a
// second tab, and the Web Lock seen by another tab. Playwright's contexts are off the record (their
// storage lives in memory for the context's life), so a browser restart, and the flush to disk that
// `durability: 'strict'` asks for, are not covered here.

/** A body as it crosses page.evaluate: tagged, so bytes stay bytes and the page reports their type. */
type WireBody =
  | { kind: 'none' }
  | { kind: 'string'; text: string }
  /** `plain`: the page saw a Uint8Array whose prototype is Uint8Array.prototype. `view`: sent as a view. */
  | { kind: 'bytes'; bytes: number[]; plain: boolean; view?: boolean }
  | { kind: 'other'; type: string };

type WireEntry = Omit<OutboxEntry, 'request'> & { request: Omit<StoredRequest, 'body'> & { body: WireBody } };

type StoreMethod = 'add' | 'update' | 'remove' | 'get' | 'list' | 'acquireLease' | 'releaseLease' | 'close';

interface ErrorInPage {
  name: string;
  message: string;
  /** `instanceof FailwiseError` in the page (the bundle's own class). */
  failwise: boolean;
  typeError: boolean;
}

type CallResult = { ok: true; value?: unknown } | { ok: false; error: ErrorInPage };

interface LockSeen {
  name: string;
  mode: string;
  clientId: string;
}

/** What the page script keeps on `globalThis.storeProbe`. */
interface StoreProbe {
  /** Opens a store on `name` (replacing the page's current one without closing it). */
  open(name: string, lease: 'default' | 'record'): void;
  /** Calls a method of the current store; entries and bodies travel as `WireEntry`. Never rejects. */
  call(method: StoreMethod, args: unknown[]): Promise<CallResult>;
  /** `navigator.locks.query()`, as the browser reports the origin's locks. */
  locks(): Promise<{ held: LockSeen[]; pending: LockSeen[] }>;
  /** This tab's Web Locks client id (read from a lock it takes for the purpose). */
  clientId(): Promise<string>;
  /** `indexedDB.databases()`: the origin's databases as the browser lists them. */
  databases(): Promise<{ name: string; version: number }[]>;
  /** The lease record in the database, read with a connection of its own. */
  leaseRecord(name: string): Promise<unknown>;
}
type ProbeGlobal = { storeProbe: StoreProbe };

const pageScript = `
import { FailwiseError } from '../../src/errors/failwise-error.js';
import { indexedDbStore } from '../../src/stores/indexeddb-store.js';

let store;

const bodyToWire = (body) => {
  if (body === undefined) return { kind: 'none' };
  if (typeof body === 'string') return { kind: 'string', text: body };
  if (body instanceof Uint8Array) {
    return { kind: 'bytes', bytes: Array.from(body), plain: Object.getPrototypeOf(body) === Uint8Array.prototype };
  }
  return { kind: 'other', type: Object.prototype.toString.call(body) };
};
const bodyFromWire = (wire) => {
  if (wire.kind === 'none') return undefined;
  if (wire.kind === 'string') return wire.text;
  if (wire.kind !== 'bytes') throw new Error('storeProbe: cannot send a body of kind ' + wire.kind);
  if (!wire.view) return new Uint8Array(wire.bytes);
  // A view of the middle of a larger buffer: only the viewed bytes are the body.
  return new Uint8Array(new Uint8Array([9, 9, ...wire.bytes, 9]).buffer, 2, wire.bytes.length);
};
const entryToWire = (entry) => ({ ...entry, request: { ...entry.request, body: bodyToWire(entry.request.body) } });
const entryFromWire = (wire) => {
  const { body, ...request } = wire.request;
  const decoded = bodyFromWire(body);
  return { ...wire, request: decoded === undefined ? request : { ...request, body: decoded } };
};
const describeError = (error) => ({
  name: error?.name ?? typeof error,
  message: error?.message ?? String(error),
  failwise: error instanceof FailwiseError,
  typeError: error instanceof TypeError,
});
const lockInfo = ({ name, mode, clientId }) => ({ name, mode, clientId });

globalThis.storeProbe = {
  open(name, lease) {
    store = lease === 'record' ? indexedDbStore(name, { locks: null }) : indexedDbStore(name);
  },
  async call(method, args) {
    try {
      if (store === undefined) throw new Error('storeProbe: open a store first');
      const input = method === 'add' || method === 'update' ? [entryFromWire(args[0])] : args;
      const value = await store[method](...input);
      if (method === 'list') return { ok: true, value: value.map(entryToWire) };
      if (method === 'get') return { ok: true, value: value === undefined ? undefined : entryToWire(value) };
      return { ok: true, value };
    } catch (error) {
      return { ok: false, error: describeError(error) };
    }
  },
  async locks() {
    const { held = [], pending = [] } = await navigator.locks.query();
    return { held: held.map(lockInfo), pending: pending.map(lockInfo) };
  },
  clientId() {
    const name = 'storeProbe-client-id-' + crypto.randomUUID();
    return navigator.locks.request(name, async () => {
      const { held = [] } = await navigator.locks.query();
      return held.find((lock) => lock.name === name).clientId;
    });
  },
  async databases() {
    return (await indexedDB.databases()).map(({ name, version }) => ({ name, version }));
  },
  leaseRecord(name) {
    return new Promise((resolve, reject) => {
      const opening = indexedDB.open(name);
      opening.onerror = () => reject(opening.error);
      opening.onsuccess = () => {
        const db = opening.result;
        const read = db.transaction('lease', 'readonly').objectStore('lease').get('lease');
        read.onerror = () => reject(read.error);
        read.onsuccess = () => {
          db.close();
          resolve(read.result);
        };
      };
    });
  },
};
`;

/** Bounds every page.evaluate, which has no timeout of its own: a hung IndexedDB call fails the test. */
const CALL_TIMEOUT_MS = 5_000;

async function bounded<T>(promise: Promise<T>, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([
      promise,
      new Promise<never>((_, reject) => {
        timer = setTimeout(
          () => reject(new Error(`${what} took longer than ${CALL_TIMEOUT_MS} ms`)),
          CALL_TIMEOUT_MS,
        );
      }),
    ]);
  } finally {
    clearTimeout(timer);
  }
}

/** Bytes that are not valid UTF-8, with zeros and a 0xff: a text round trip would change them. */
const BYTES = [0, 1, 127, 128, 0xc3, 0x28, 0xfe, 0xff, 0];
/** A string that a lossy encoding would change: a NUL, a lone surrogate, an astral character, JSON. */
const TEXT = '{"note":"h\u00e9llo \u2713 \ud83d\ude00"}\u0000tail\ud800';

const toWire = (entry: OutboxEntry): WireEntry => {
  const { body } = entry.request;
  return {
    ...entry,
    request: {
      ...entry.request,
      body:
        body === undefined
          ? { kind: 'none' }
          : typeof body === 'string'
            ? { kind: 'string', text: body }
            : { kind: 'bytes', bytes: [...body], plain: true },
    },
  };
};

const withBody = (entry: OutboxEntry, body: string | Uint8Array | undefined): OutboxEntry => {
  const { body: _old, ...request } = entry.request;
  return { ...entry, request: body === undefined ? request : { ...request, body } };
};

const closedMessage = (method: string) =>
  `indexedDbStore.${method}: the store is closed; open a new one to use it again`;

/** One tab: a page with the probe, and its store's methods as seen from Node. */
function storeTab(page: Page, context: BrowserContext) {
  const attempt = (method: StoreMethod, ...args: unknown[]): Promise<CallResult> =>
    bounded(
      page.evaluate(([m, a]) => (globalThis as unknown as ProbeGlobal).storeProbe.call(m, a), [
        method,
        args,
      ] as [StoreMethod, unknown[]]),
      `store.${method} in the page`,
    );
  const value = async (method: StoreMethod, ...args: unknown[]): Promise<unknown> => {
    const result = await attempt(method, ...args);
    if (!result.ok) {
      throw new Error(`store.${method} rejected in the page: ${result.error.name}: ${result.error.message}`);
    }
    return result.value;
  };
  return {
    page,
    context,
    attempt,
    open: (name: string, lease: 'default' | 'record' = 'default') =>
      bounded(
        page.evaluate(([n, l]) => (globalThis as unknown as ProbeGlobal).storeProbe.open(n, l), [
          name,
          lease,
        ] as [string, 'default' | 'record']),
        'opening the store in the page',
      ),
    add: (entry: OutboxEntry) => value('add', toWire(entry)),
    /** Adds an entry given as the page receives it (a body sent as a view, say). */
    addWire: (entry: WireEntry) => value('add', entry),
    update: (entry: OutboxEntry) => value('update', toWire(entry)),
    remove: (id: string) => value('remove', id),
    get: (id: string) => value('get', id) as Promise<WireEntry | undefined>,
    list: () => value('list') as Promise<WireEntry[]>,
    ids: async () => ((await value('list')) as WireEntry[]).map((entry) => entry.id),
    acquireLease: (owner: string, ttlMs: number, now: number) =>
      value('acquireLease', owner, ttlMs, now) as Promise<boolean>,
    releaseLease: (owner: string) => value('releaseLease', owner),
    close: () => value('close'),
    locks: () =>
      bounded(
        page.evaluate(() => (globalThis as unknown as ProbeGlobal).storeProbe.locks()),
        'navigator.locks.query() in the page',
      ),
    clientId: () =>
      bounded(
        page.evaluate(() => (globalThis as unknown as ProbeGlobal).storeProbe.clientId()),
        'reading the Web Locks client id in the page',
      ),
    databases: () =>
      bounded(
        page.evaluate(() => (globalThis as unknown as ProbeGlobal).storeProbe.databases()),
        'indexedDB.databases() in the page',
      ),
    leaseRecord: (name: string) =>
      bounded(
        page.evaluate((n) => (globalThis as unknown as ProbeGlobal).storeProbe.leaseRecord(n), name),
        'reading the lease record in the page',
      ),
  };
}

/** The names of the locks the browser reports held for the origin. */
const heldNames = async (tab: ReturnType<typeof storeTab>) =>
  (await tab.locks()).held.map((lock) => lock.name);

describe.skipIf(chromiumSkipReason !== undefined)('indexedDbStore in headless Chromium', () => {
  const chromium = useChromium({
    entry: { contents: pageScript, resolveDir: dirname(fileURLToPath(import.meta.url)) },
  });

  const contexts: BrowserContext[] = [];
  const opened: OpenedPage[] = [];
  /** A tab in a new context, or another tab of `context`; closed after the test. */
  const openTab = async (context?: BrowserContext) => {
    const page = await chromium.openPage(context);
    if (context === undefined) contexts.push(page.context);
    opened.push(page);
    return storeTab(page.page, page.context);
  };
  /** Uncaught errors and console.error lines from every tab of the test. */
  const pageErrors = () => opened.flatMap((page) => page.errors);

  afterEach(async () => {
    opened.length = 0;
    // Closing a context closes its pages; the harness's afterAll closes the browser.
    for (const context of contexts.splice(0)) await bounded(context.close(), 'closing a browser context');
  });

  const uniqueName = () => `failwise-browser-${randomUUID()}`;

  it('adds, updates, gets, lists in order and removes, with string and byte bodies exact', async () => {
    const tab = await openTab();
    const name = uniqueName();
    await tab.open(name);
    expect(await tab.list()).toEqual([]);

    const text = withBody(makeEntry('text'), TEXT);
    const bytes = withBody(makeEntry('bytes'), new Uint8Array(BYTES));
    const none = withBody(makeEntry('none', { orderKey: 'k', idempotencyKey: 'idem-none' }), undefined);
    const empty = withBody(makeEntry('empty'), new Uint8Array(0));
    // Ids added out of their sorted order: the list follows insertion, not the id.
    for (const entry of [text, bytes, none, empty]) await tab.add(entry);
    const view = toWire(withBody(makeEntry('view'), new Uint8Array(BYTES)));
    // Its body a view of the middle of a larger buffer: only the viewed bytes come back.
    await tab.addWire({
      ...view,
      request: { ...view.request, body: { kind: 'bytes', bytes: BYTES, plain: true, view: true } },
    });

    expect(await tab.get('text')).toEqual(toWire(text));
    const gotText = await tab.get('text');
    expect(gotText?.request.body).toEqual({ kind: 'string', text: TEXT });
    expect(await tab.get('bytes')).toEqual(toWire(bytes));
    expect((await tab.get('bytes'))?.request.body).toEqual({ kind: 'bytes', bytes: BYTES, plain: true });
    expect((await tab.get('empty'))?.request.body).toEqual({ kind: 'bytes', bytes: [], plain: true });
    expect((await tab.get('view'))?.request.body).toEqual({ kind: 'bytes', bytes: BYTES, plain: true });
    const gotNone = await tab.get('none');
    expect(gotNone).toEqual(toWire(none));
    expect(gotNone?.request.body).toEqual({ kind: 'none' });
    expect(await tab.get('missing')).toBeUndefined();
    expect(await tab.ids()).toEqual(['text', 'bytes', 'none', 'empty', 'view']);
    // Nothing was given but the name: the database is in the browser's own IndexedDB, at version 1.
    expect(await tab.databases()).toEqual([{ name, version: 1 }]);

    // A duplicate id is refused, and the stored entry is left as it was.
    const duplicate = await tab.attempt('add', toWire(makeEntry('bytes', { attempts: 9 })));
    expect(duplicate).toEqual({
      ok: false,
      error: {
        name: 'FailwiseError',
        message: 'indexedDbStore.add: an entry with id "bytes" exists already',
        failwise: true,
        typeError: false,
      },
    });
    expect(await tab.get('bytes')).toEqual(toWire(bytes));
    expect(await tab.ids()).toEqual(['text', 'bytes', 'none', 'empty', 'view']);

    // An update replaces the entry in place: same position, new fields, body switched to a string.
    const updated = withBody(
      {
        ...bytes,
        attempts: 3,
        nextAttemptAt: 9_000,
        status: 'dead',
        deadReason: 'attempts-exhausted',
        failures: [
          { class: 'connect', requestSent: 'no', origin: 'primary', message: 'ECONNREFUSED' },
          {
            class: 'rate-limited',
            requestSent: 'yes',
            origin: 'backup',
            status: 429,
            retryAfterMs: 2_500,
            message: 'HTTP 429',
          },
        ],
      },
      'now text',
    );
    await tab.update(updated);
    expect(await tab.get('bytes')).toEqual(toWire(updated));
    expect(await tab.ids()).toEqual(['text', 'bytes', 'none', 'empty', 'view']);
    // ... and back to bytes.
    await tab.update(bytes);
    expect(await tab.get('bytes')).toEqual(toWire(bytes));

    const unknown = await tab.attempt('update', toWire(makeEntry('ghost')));
    expect(unknown).toEqual({
      ok: false,
      error: {
        name: 'FailwiseError',
        message: 'indexedDbStore.update: no entry with id "ghost" to update (it was removed or never added)',
        failwise: true,
        typeError: false,
      },
    });
    expect(await tab.get('ghost')).toBeUndefined();

    await tab.remove('bytes');
    expect(await tab.get('bytes')).toBeUndefined();
    expect(await tab.ids()).toEqual(['text', 'none', 'empty', 'view']);
    // Removing what is not there resolves.
    await tab.remove('bytes');
    await tab.remove('never-added');
    // Added again, it goes to the end of the order.
    await tab.add(bytes);
    expect(await tab.ids()).toEqual(['text', 'none', 'empty', 'view', 'bytes']);
    expect(await tab.list()).toEqual([toWire(text), toWire(none), toWire(empty), view, toWire(bytes)]);

    // Bad input is refused with an ArgumentError before IndexedDB sees it.
    expect(await tab.attempt('add', toWire(makeEntry('bad', { attempts: -1 })))).toEqual({
      ok: false,
      error: {
        name: 'ArgumentError',
        message: 'indexedDbStore.add: entry.attempts: expected an integer >= 0 (got -1)',
        failwise: true,
        typeError: false,
      },
    });
    expect(await tab.get('bad')).toBeUndefined();

    await tab.close();
    expect(pageErrors()).toEqual([]);
  });

  it('keeps every entry, in order and exactly, across a reload and in a new tab of the same browser', async () => {
    const tab = await openTab();
    const name = uniqueName();
    await tab.open(name);
    const entries = [
      withBody(makeEntry('c'), new Uint8Array(BYTES)),
      withBody(makeEntry('a'), TEXT),
      withBody(makeEntry('b', { orderKey: 'orders' }), undefined),
    ];
    for (const entry of entries) await tab.add(entry);
    const dead = {
      ...entries[1]!,
      attempts: 5,
      status: 'dead' as const,
      deadReason: 'expired',
      failures: [{ class: 'connect' as const, requestSent: 'no' as const, origin: 'primary', message: 'x' }],
    };
    await tab.update(dead);
    const expected = [toWire(entries[0]!), toWire(dead), toWire(entries[2]!)];
    expect(await tab.list()).toEqual(expected);

    // Closed, then the page reloaded: a new document, a new store on the same database name.
    await tab.close();
    await bounded(tab.page.reload({ waitUntil: 'load' }), 'reloading the page');
    expect(await tab.attempt('list')).toEqual({
      ok: false,
      error: {
        name: 'Error',
        message: 'storeProbe: open a store first',
        failwise: false,
        typeError: false,
      },
    });
    await tab.open(name);
    expect(await tab.list()).toEqual(expected);
    expect(await tab.get('c')).toEqual(toWire(entries[0]!));

    // Written, then the page goes away without close(): what resolved is there for the next tab.
    await tab.remove('a');
    await tab.add(withBody(makeEntry('d'), new Uint8Array([255, 0, 255])));
    const { context } = tab;
    await bounded(tab.page.close(), 'closing the page');
    expect(context.pages()).toEqual([]);

    const next = await openTab(context);
    await next.open(name);
    const after = [expected[0], expected[2], toWire(withBody(makeEntry('d'), new Uint8Array([255, 0, 255])))];
    expect(await next.list()).toEqual(after);
    await next.close();

    // A tab of another context (storage of its own) has no such database: the entries above came from
    // this context's IndexedDB, not from anywhere else.
    const stranger = await openTab();
    await stranger.open(name);
    expect(await stranger.list()).toEqual([]);
    await stranger.close();

    expect(pageErrors()).toEqual([]);
  });

  it('shares the lease between two tabs through a Web Lock: one tab holds it until it lets go or goes away', async () => {
    const a = await openTab();
    const b = await openTab(a.context);
    const name = uniqueName();
    const lockName = `failwise-outbox:${name}`;
    await a.open(name);
    await b.open(name);
    const [clientA, clientB] = [await a.clientId(), await b.clientId()];
    expect(clientA).not.toBe(clientB);
    expect(await heldNames(a)).toEqual([]);

    expect(await a.acquireLease('tab-a', 1_000, 0)).toBe(true);
    // The browser holds the lock for tab A, and both tabs see it; nobody queues for it (ifAvailable).
    for (const tab of [a, b]) {
      expect(await tab.locks()).toEqual({
        held: [{ name: lockName, mode: 'exclusive', clientId: clientA }],
        pending: [],
      });
    }
    // With Web Locks the lease is the lock: no lease record is written to the database.
    expect(await a.leaseRecord(name)).toBeUndefined();

    // Tab B is refused while A holds the lock, even at a time where a record lease would have expired.
    expect(await b.acquireLease('tab-b', 1_000, 0)).toBe(false);
    expect(await b.acquireLease('tab-b', 1_000, 1_000_000)).toBe(false);
    expect((await b.locks()).held).toEqual([{ name: lockName, mode: 'exclusive', clientId: clientA }]);
    expect((await b.locks()).pending).toEqual([]);
    // Within tab A's store, owners are handed the lease by ttl and now, as the record does.
    expect(await a.acquireLease('tab-a', 1_000, 500)).toBe(true);
    expect(await a.acquireLease('tab-a-other', 1_000, 1_499)).toBe(false);

    // A lets go: the lock is free, and B takes it.
    await a.releaseLease('tab-a');
    expect(await heldNames(a)).toEqual([]);
    expect(await b.acquireLease('tab-b', 1_000, 0)).toBe(true);
    expect((await a.locks()).held).toEqual([{ name: lockName, mode: 'exclusive', clientId: clientB }]);
    expect(await a.acquireLease('tab-a', 1_000, 1_000_000)).toBe(false);
    // Releasing for an owner that does not hold it changes nothing.
    await b.releaseLease('tab-a');
    await a.releaseLease('tab-b');
    expect(await heldNames(a)).toEqual([lockName]);

    // B's page goes away without releasing: the browser frees its lock, and A takes it.
    await bounded(b.page.close(), "closing tab B's page");
    await expect.poll(() => heldNames(a), { timeout: CALL_TIMEOUT_MS }).toEqual([]);
    expect(await a.acquireLease('tab-a', 1_000, 0)).toBe(true);
    expect((await a.locks()).held).toEqual([{ name: lockName, mode: 'exclusive', clientId: clientA }]);

    // close() gives the lock up too.
    await a.close();
    expect(await heldNames(a)).toEqual([]);
    expect(pageErrors()).toEqual([]);
  });

  it('frees the Web Lock of a tab whose renderer crashes: another tab takes the lease at once', async () => {
    const a = await openTab();
    const b = await openTab(a.context);
    const name = uniqueName();
    await a.open(name);
    await b.open(name);
    expect(await b.acquireLease('tab-b', 1_000, 0)).toBe(true);
    expect(await a.acquireLease('tab-a', 1_000, 1_000_000)).toBe(false);
    // Tab B's renderer dies as a crash kills it (no unload, no release): the command never answers.
    const cdp = await a.context.newCDPSession(b.page);
    void cdp.send('Page.crash').catch(() => undefined);
    await expect.poll(() => heldNames(a), { timeout: CALL_TIMEOUT_MS }).toEqual([]);
    expect(await a.acquireLease('tab-a', 1_000, 0)).toBe(true);
    await a.close();
  });

  it('gives the lease to exactly one of two tabs asking at the same moment', async () => {
    const a = await openTab();
    const b = await openTab(a.context);
    const name = uniqueName();
    await a.open(name);
    await b.open(name);
    for (let round = 0; round < 5; round++) {
      const granted = await Promise.all([
        a.acquireLease('tab-a', 1_000, 0),
        b.acquireLease('tab-b', 1_000, 0),
      ]);
      expect(granted.filter(Boolean)).toHaveLength(1);
      expect(await heldNames(a)).toEqual([`failwise-outbox:${name}`]);
      await a.releaseLease('tab-a');
      await b.releaseLease('tab-b');
      expect(await heldNames(a)).toEqual([]);
    }
    await a.close();
    await b.close();
    expect(pageErrors()).toEqual([]);
  });

  it('keeps the lease as a record across tabs with locks: null, refused until it expires', async () => {
    const a = await openTab();
    const b = await openTab(a.context);
    const name = uniqueName();
    await a.open(name, 'record');
    await b.open(name, 'record');

    expect(await a.acquireLease('tab-a', 1_000, 0)).toBe(true);
    expect(await a.leaseRecord(name)).toEqual({ owner: 'tab-a', expiresAt: 1_000 });
    expect(await heldNames(a)).toEqual([]);
    expect(await b.acquireLease('tab-b', 1_000, 999)).toBe(false);
    // Expired once now reaches the expiry time.
    expect(await b.acquireLease('tab-b', 1_000, 1_000)).toBe(true);
    expect(await b.leaseRecord(name)).toEqual({ owner: 'tab-b', expiresAt: 2_000 });
    expect(await a.acquireLease('tab-a', 1_000, 1_500)).toBe(false);
    await b.releaseLease('tab-b');
    expect(await a.leaseRecord(name)).toBeUndefined();
    expect(await a.acquireLease('tab-a', 1_000, 1_500)).toBe(true);
    // Closing gives up what the store took.
    await a.close();
    expect(await b.leaseRecord(name)).toBeUndefined();

    // Two tabs racing for the record: IndexedDB's readwrite transactions let exactly one win.
    const c = await openTab(a.context);
    await c.open(name, 'record');
    for (let round = 0; round < 5; round++) {
      const now = 10_000 * (round + 1);
      const granted = await Promise.all([
        b.acquireLease('tab-b', 1_000, now),
        c.acquireLease('tab-c', 1_000, now),
      ]);
      expect(granted.filter(Boolean)).toHaveLength(1);
      await b.releaseLease('tab-b');
      await c.releaseLease('tab-c');
    }
    await b.close();
    await c.close();
    expect(pageErrors()).toEqual([]);
  });

  it('rejects every call after close() with the documented FailwiseError, and closing twice resolves', async () => {
    const tab = await openTab();
    const name = uniqueName();
    await tab.open(name);
    await tab.add(makeEntry('a'));
    expect(await tab.acquireLease('tab', 1_000, 0)).toBe(true);
    expect(await heldNames(tab)).toEqual([`failwise-outbox:${name}`]);

    await tab.close();
    expect(await heldNames(tab)).toEqual([]);
    const calls: [StoreMethod, unknown[]][] = [
      ['add', [toWire(makeEntry('b'))]],
      ['update', [toWire(makeEntry('a'))]],
      ['remove', ['a']],
      ['get', ['a']],
      ['list', []],
      ['acquireLease', ['tab', 1_000, 0]],
      ['releaseLease', ['tab']],
    ];
    for (const [method, args] of calls) {
      expect(await tab.attempt(method, ...args), method).toEqual({
        ok: false,
        error: { name: 'FailwiseError', message: closedMessage(method), failwise: true, typeError: false },
      });
    }
    expect(await tab.attempt('close')).toEqual({ ok: true });
    // The lease is free for a new store, and nothing written before close() was lost.
    await tab.open(name);
    expect(await tab.ids()).toEqual(['a']);
    expect(await tab.acquireLease('other', 1_000, 0)).toBe(true);
    await tab.close();

    // A store closed before its first call never opens the database, and rejects the same way.
    await tab.open(uniqueName());
    expect(await tab.attempt('close')).toEqual({ ok: true });
    expect(await tab.attempt('list')).toEqual({
      ok: false,
      error: { name: 'FailwiseError', message: closedMessage('list'), failwise: true, typeError: false },
    });
    expect(pageErrors()).toEqual([]);
  });
});
