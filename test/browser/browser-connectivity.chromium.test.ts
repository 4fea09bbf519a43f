import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { chromiumSkipReason, useChromium } from '../helpers/chromium.js';

// browserConnectivity in real headless Chromium: the page's bundled script makes a source with the
// defaults (window, navigator) and records every hint, with what current() said as the hint arrived.
// Playwright's context.setOffline() drives Chromium's own network emulation, which sets navigator.onLine
// and fires the window events; nothing here is faked.

/** What the page script keeps on `globalThis.connectivityProbe`. */
interface ConnectivityProbe {
  /** Hints from the source, in order. */
  hints: string[];
  /** `current()` as seen inside the listener, one per hint. */
  statesAtHints: string[];
  /** `online` / `offline` events as a plain window listener saw them (the browser's own account). */
  windowEvents: string[];
  /** `navigator.connection.type` when the page started, then at each of its `change` events. */
  connectionTypes: string[];
  current(): string;
  unsubscribe(): void;
}

const pageScript = `
import { browserConnectivity } from '../../src/connectivity/browser-connectivity.js';

const source = browserConnectivity();
const probe = { hints: [], statesAtHints: [], windowEvents: [], connectionTypes: [], current: () => source.current() };
const typeNow = () => String(navigator.connection?.type);
probe.connectionTypes.push(typeNow());
navigator.connection?.addEventListener('change', () => probe.connectionTypes.push(typeNow()));
// Added before the source subscribes, so when this listener has run the source's has too (same dispatch).
for (const type of ['online', 'offline']) window.addEventListener(type, () => probe.windowEvents.push(type));
probe.unsubscribe = source.subscribe((hint) => {
  probe.hints.push(hint);
  probe.statesAtHints.push(source.current());
});
globalThis.connectivityProbe = probe;
`;

/** The probe's recorded data and `current()` now, read in the page. */
const readProbe = (page: Page) =>
  page.evaluate(() => {
    const probe = (globalThis as unknown as { connectivityProbe: ConnectivityProbe }).connectivityProbe;
    return {
      hints: [...probe.hints],
      statesAtHints: [...probe.statesAtHints],
      windowEvents: [...probe.windowEvents],
      connectionTypes: [...probe.connectionTypes],
      current: probe.current(),
    };
  });

/** Waits until the window has seen `count` online/offline events. */
const waitForWindowEvents = (page: Page, count: number) =>
  page.waitForFunction(
    (n) =>
      (globalThis as unknown as { connectivityProbe: ConnectivityProbe }).connectivityProbe.windowEvents
        .length >= n,
    count,
  );

/** Hints without `changed`: Chromium may add those (Network Information API) around a switch. */
const onOffHints = (hints: string[]) => hints.filter((hint) => hint !== 'changed');

describe.skipIf(chromiumSkipReason !== undefined)('browserConnectivity in headless Chromium', () => {
  const chromium = useChromium({
    entry: { contents: pageScript, resolveDir: dirname(fileURLToPath(import.meta.url)) },
  });

  it('hints offline then online as the browser loses and regains the network', async () => {
    const { context, page, errors } = await chromium.openPage();

    const start = await readProbe(page);
    expect(start).toMatchObject({ hints: [], statesAtHints: [], windowEvents: [], current: 'online' });

    await context.setOffline(true);
    await waitForWindowEvents(page, 1);
    const offline = await readProbe(page);
    expect(offline.windowEvents).toEqual(['offline']);
    expect(onOffHints(offline.hints)).toEqual(['offline']);
    expect(offline.statesAtHints[offline.hints.indexOf('offline')]).toBe('offline');
    expect(offline.current).toBe('offline');

    await context.setOffline(false);
    await waitForWindowEvents(page, 2);
    const online = await readProbe(page);
    expect(online.windowEvents).toEqual(['offline', 'online']);
    expect(onOffHints(online.hints)).toEqual(['offline', 'online']);
    expect(online.statesAtHints[online.hints.indexOf('online')]).toBe('online');
    expect(online.current).toBe('online');

    expect(errors).toEqual([]);
  });

  it("hints changed on navigator.connection's change event only when its type changed (Network Information API)", async () => {
    const { context, page, errors } = await chromium.openPage();
    expect(await page.evaluate(() => 'connection' in navigator)).toBe(true);

    await context.setOffline(true);
    await waitForWindowEvents(page, 1);
    await context.setOffline(false);
    await waitForWindowEvents(page, 2);
    const { hints, connectionTypes } = await readProbe(page);
    // Chromium fires `change` around each switch; a `changed` hint is owed only where the type it reports is a
    // string that differs from the one before (without a type, a new network cannot be told from a new estimate).
    expect(connectionTypes.length).toBeGreaterThan(1);
    const owed = connectionTypes.filter(
      (type, i) => i > 0 && type !== 'undefined' && type !== connectionTypes[i - 1],
    ).length;
    expect(hints.filter((hint) => hint === 'changed')).toHaveLength(owed);
    expect(onOffHints(hints)).toEqual(['offline', 'online']);

    expect(errors).toEqual([]);
  });

  it('hints nothing after the last subscriber leaves, while current() still reads navigator.onLine', async () => {
    const { context, page, errors } = await chromium.openPage();
    await page.evaluate(() =>
      (globalThis as unknown as { connectivityProbe: ConnectivityProbe }).connectivityProbe.unsubscribe(),
    );

    await context.setOffline(true);
    await waitForWindowEvents(page, 1);
    const offline = await readProbe(page);
    expect(offline.windowEvents).toEqual(['offline']);
    expect(offline.hints).toEqual([]);
    expect(offline.current).toBe('offline');

    await context.setOffline(false);
    await waitForWindowEvents(page, 2);
    const online = await readProbe(page);
    expect(online.hints).toEqual([]);
    expect(online.current).toBe('online');

    expect(errors).toEqual([]);
  });
});
