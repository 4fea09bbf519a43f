import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { BrowserContext, CDPSession, Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';

import { chromiumSkipReason, useChromium } from '../helpers/chromium.js';
import { switchableOrigin, type SwitchableOrigin } from '../helpers/switchable-origin.js';

// failwise/service-worker in real headless Chromium: a page (the app) and its service worker, both bundled from
// failwise's source, share one indexedDbStore and its Web Lock. The API origin is a loopback server the test
// takes down (connections refused) and brings back on the same port. A durable write made while it is down is
// stored by the page; the page is closed; the worker, woken by a Background Sync `sync` event the test fires
// through the DevTools protocol (ServiceWorker.dispatchSyncEvent, as Chromium fires it when the network is back),
// sends it once, with no page of the app open. Without Background Sync (deleted in the page, as in Firefox and
// Safari), the next page start sends it. Every wait is bounded; the browser and servers close after the file.

const here = dirname(fileURLToPath(import.meta.url));

/** The policy the page and the worker share: one attempt a send, and the outbox's next try 1 s after a failure. */
const POLICY = `{ attempts: { max: 1 }, budgetMs: 3000, durable: { initialMs: 1000, maxMs: 1000 } }`;

const pageScript = `
import { createFailoverClient } from '../../src/index.js';
import { indexedDbStore } from '../../src/browser.js';

const clientOf = (api, background) =>
  createFailoverClient({
    origins: [{ id: 'api', url: api, allowInsecure: true }],
    store: indexedDbStore('notes'),
    policy: ${POLICY},
    ...(background ? { background: 'service-worker' } : {}),
  });

globalThis.app = {
  async registerWorker(api) {
    await navigator.serviceWorker.register('/sw.js?api=' + encodeURIComponent(api), { type: 'module' });
    await navigator.serviceWorker.ready;
  },
  removeBackgroundSync() {
    delete ServiceWorkerRegistration.prototype.sync;
    delete globalThis.SyncManager;
    return 'sync' in ServiceWorkerRegistration.prototype;
  },
  /** A durable write with a background client; what became of it, and the sync tags the page then sees. */
  async writeNote(api, idempotencyKey, body) {
    const client = clientOf(api, true);
    const outcome = await client.request({ method: 'POST', path: '/v1/notes', body, lifetime: 'durable', idempotencyKey });
    const stored = await client.outbox.size();
    await client.close();
    const registration = await navigator.serviceWorker.ready;
    let tags = [];
    for (let i = 0; i < 40 && registration.sync && !tags.includes('failwise-outbox'); i++) {
      await new Promise((resolve) => setTimeout(resolve, 50));
      tags = await registration.sync.getTags();
    }
    return { status: outcome.status, stored, tags };
  },
  /** A client on the store that stays open, sending as the outbox does; \`stopClient\` closes it. */
  startClient(api) {
    globalThis.running = clientOf(api, false);
  },
  async stopClient() {
    const left = await globalThis.running.outbox.size();
    await globalThis.running.close();
    return left;
  },
  /** A page start: a client on the store, drained, then closed. */
  async startAndDrain(api) {
    const client = clientOf(api, false);
    const result = await client.outbox.drain({ timeLimitMs: 5000 });
    const left = await client.outbox.size();
    await client.close();
    return { result, left };
  },
};
`;

const workerScript = `
import { serviceWorkerOutbox } from '../../src/service-worker.js';
import { indexedDbStore } from '../../src/browser.js';

const api = new URL(self.location.href).searchParams.get('api');
self.addEventListener('install', () => self.skipWaiting());
self.addEventListener('activate', (event) => event.waitUntil(self.clients.claim()));
serviceWorkerOutbox(self, {
  origins: [{ id: 'api', url: api, allowInsecure: true }],
  store: indexedDbStore('notes'),
  policy: ${POLICY},
  timeLimitMs: 500,
});
`;

interface AppInPage {
  registerWorker(api: string): Promise<void>;
  removeBackgroundSync(): boolean;
  writeNote(
    api: string,
    key: string,
    body: string,
  ): Promise<{ status: string; stored: number; tags: string[] }>;
  startAndDrain(api: string): Promise<{ result: unknown; left: number }>;
  startClient(api: string): void;
  stopClient(): Promise<number>;
}
declare const app: AppInPage;

/** The page's errors, but the browser's own line for each refused connection to the origin while it is down. */
const unexpected = (errors: string[]) =>
  errors.filter((e) => !e.includes('Failed to load resource: net::ERR_CONNECTION_REFUSED'));

/** Waits `ms` of real time: the browser's own work (a worker starting, a sync firing) has no other signal here. */
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe.skipIf(chromiumSkipReason !== undefined)('failwise/service-worker in Chromium', () => {
  const chromium = useChromium({
    entry: { contents: pageScript, resolveDir: here },
    scripts: { 'sw.js': { contents: workerScript, resolveDir: here } },
    timeoutMs: 20_000,
  });
  let origin: SwitchableOrigin;
  const contexts: BrowserContext[] = [];

  beforeAll(async () => {
    origin = await switchableOrigin();
  });
  afterEach(async () => {
    for (const context of contexts.splice(0)) await context.close();
  });
  afterAll(async () => {
    await origin.close();
  });

  /** A page of the app, its worker registered; its context is closed after the test. */
  async function openAppPage() {
    const opened = await chromium.openPage();
    contexts.push(opened.context);
    await opened.page.evaluate((api) => app.registerWorker(api), origin.url);
    return opened;
  }

  /** With the origin down, the page writes a note: what its client answered. */
  async function writeWhileDown(page: Page, key: string, body: string) {
    await origin.down();
    return page.evaluate(([api, k, b]) => app.writeNote(api!, k!, b!), [origin.url, key, body]);
  }

  /** A DevTools session on a blank tab of `context` (not the app's: no page of the app is open), and the app's registration. */
  async function devTools(context: BrowserContext): Promise<{ session: CDPSession; registrationId: string }> {
    const blank = await context.newPage();
    const session = await context.newCDPSession(blank);
    let registrationId: string | undefined;
    const seen = new Promise<void>((resolve) => {
      session.on('ServiceWorker.workerRegistrationUpdated', ({ registrations }) => {
        const ours = registrations.find((r) => r.scopeURL.startsWith(chromium.url) && !r.isDeleted);
        if (!ours) return;
        registrationId = ours.registrationId;
        resolve();
      });
    });
    await session.send('ServiceWorker.enable');
    await Promise.race([seen, sleep(5_000)]);
    if (registrationId === undefined) throw new Error('no service worker registration seen within 5 s');
    return { session, registrationId };
  }

  it('sends a write stored while the origin was down, once, from the worker on a sync event, with every page of the app closed', async () => {
    const { context, page, errors } = await openAppPage();
    const written = await writeWhileDown(page, 'note-key-1', '{"text":"written in a tunnel"}');
    expect(written).toEqual({ status: 'deferred', stored: 1, tags: ['failwise-outbox'] });
    expect(unexpected(errors)).toEqual([]);
    await page.close();

    const { session, registrationId } = await devTools(context);
    // The worker Chromium started for the page's own sync (which failed: the origin was down) is stopped, so
    // that nothing of it runs on: the next start is the sync event's.
    await session.send('ServiceWorker.stopAllWorkers');
    await sleep(1_200); // the entry's next try (1 s after its last failure) is due by now
    await origin.up();
    expect(origin.writes).toEqual([]);
    await session.send('ServiceWorker.dispatchSyncEvent', {
      origin: new URL(chromium.url).origin,
      registrationId,
      tag: 'failwise-outbox',
      lastChance: false,
    });
    await origin.waitForWrites(1, 10_000);
    await sleep(1_500); // a second send, if any, would come within this
    expect(origin.writes).toEqual([{ key: 'note-key-1', body: '{"text":"written in a tunnel"}' }]);
    expect(context.pages().map((p) => p.url())).toEqual(['about:blank']);
  }, 60_000);

  it('sends a write once when an open page and the worker both go for it: they share one lease', async () => {
    origin.writes.length = 0;
    const { context, page, errors } = await openAppPage();
    const written = await writeWhileDown(page, 'note-key-3', '{"text":"two senders"}');
    expect(written).toMatchObject({ status: 'deferred', stored: 1 });
    // The page keeps a client open (it retries every second), and the worker gets a sync event as the
    // origin comes back: both want to send the entry.
    await page.evaluate((api) => app.startClient(api), origin.url);
    const { session, registrationId } = await devTools(context);
    await sleep(1_200);
    await origin.up();
    await session.send('ServiceWorker.dispatchSyncEvent', {
      origin: new URL(chromium.url).origin,
      registrationId,
      tag: 'failwise-outbox',
      lastChance: false,
    });
    await origin.waitForWrites(1, 10_000);
    await sleep(2_500); // both senders have had a turn by now
    expect(origin.writes).toEqual([{ key: 'note-key-3', body: '{"text":"two senders"}' }]);
    expect(await page.evaluate(() => app.stopClient())).toBe(0);
    expect(unexpected(errors)).toEqual([]);
  }, 60_000);

  it('without Background Sync, sends the write when a page of the app starts again', async () => {
    origin.writes.length = 0;
    const { context, page, errors } = await openAppPage();
    expect(await page.evaluate(() => app.removeBackgroundSync())).toBe(false);
    const written = await writeWhileDown(page, 'note-key-2', '{"text":"no sync here"}');
    expect(written).toEqual({ status: 'deferred', stored: 1, tags: [] });
    expect(unexpected(errors)).toEqual([]);
    await page.close();
    await origin.up();
    await sleep(1_200);
    expect(origin.writes).toEqual([]);

    const next = await chromium.openPage(context);
    const drained = await next.page.evaluate((api) => app.startAndDrain(api), origin.url);
    expect(drained).toEqual({ result: { sent: 1, failed: 0, pending: 0 }, left: 0 });
    expect(origin.writes).toEqual([{ key: 'note-key-2', body: '{"text":"no sync here"}' }]);
    expect(next.errors).toEqual([]);
  }, 60_000);
});
