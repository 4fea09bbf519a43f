/**
 * Real headless Chromium for browser tests. `useChromium({ entry })` bundles a TypeScript entry for the
 * browser with esbuild (so a Node built-in in browser code fails the build), serves it in a blank page
 * from a loopback HTTP server on 127.0.0.1 (a random port), and launches Debian's Chromium through
 * playwright-core. Every step has a timeout, and afterAll closes the browser and the server, so a test
 * file that uses it ends by itself.
 *
 * Chromium is `/usr/bin/chromium` (Debian's package; `.ci/run` installs it), or `FAILWISE_CHROMIUM`. Where
 * it is missing, `chromiumSkipReason` says so and tests `describe.skipIf(chromiumSkipReason !== undefined)`;
 * under CI (`CI` set) it is never a skip: the launch fails and the tests with it.
 */
import { existsSync } from 'node:fs';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import { build } from 'esbuild';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { afterAll, beforeAll } from 'vitest';

export const chromiumExecutablePath = process.env['FAILWISE_CHROMIUM'] ?? '/usr/bin/chromium';

/**
 * How Chromium runs here: headless, as root (no sandbox), with no GPU, and making no connection of its
 * own (no QUIC, no first-run, background, component-update or sync traffic): this machine's closed network
 * refuses those, many at a time. Playwright adds a new, empty `--user-data-dir` to every launch itself
 * (and refuses one in `args`).
 */
export const chromiumArgs: readonly string[] = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

/** Why browser tests skip here, or `undefined` when they run (always under CI). */
export const chromiumSkipReason: string | undefined =
  existsSync(chromiumExecutablePath) || process.env['CI']
    ? undefined
    : `no Chromium at ${chromiumExecutablePath}: apt-get install chromium (as .ci/run does) or set FAILWISE_CHROMIUM`;
if (chromiumSkipReason !== undefined) console.warn(`Skipping browser tests: ${chromiumSkipReason}`);

export interface ChromiumOptions {
  /**
   * The page's script: a TypeScript file, or source text whose imports resolve from `resolveDir`.
   * Bundled for the browser as an ES module and loaded by the page at `/`.
   */
  entry: string | { contents: string; resolveDir: string };
  /**
   * More scripts, each bundled like `entry` and served at `/<name>` (its query ignored) from the same origin:
   * a service worker, for one.
   */
  scripts?: Record<string, string | { contents: string; resolveDir: string }>;
  /**
   * Bounds each step: bundling, launching, opening a page, and every Playwright action and wait.
   * @default 15_000
   */
  timeoutMs?: number;
}

export interface OpenedPage {
  /** The page's own context: its own storage and network conditions (`context.setOffline`). */
  context: BrowserContext;
  page: Page;
  /** Uncaught errors and `console.error` lines from the page, in order. */
  errors: string[];
}

export interface ChromiumHarness {
  /** The page's address on 127.0.0.1 (after beforeAll). */
  readonly url: string;
  /** The running browser (after beforeAll). */
  readonly browser: Browser;
  /**
   * Opens the page in a new context and waits until it has loaded (its script has run). Given `context`,
   * opens it there instead, as another tab sharing that context's storage (IndexedDB, Web Locks).
   */
  openPage(context?: BrowserContext): Promise<OpenedPage>;
}

/** Registers beforeAll/afterAll hooks in the calling `describe` that bundle, serve and launch; see the file comment. */
export function useChromium(options: ChromiumOptions): ChromiumHarness {
  const timeoutMs = options.timeoutMs ?? 15_000;
  let server: http.Server | undefined;
  let browser: Browser | undefined;
  let url: string | undefined;

  beforeAll(async () => {
    const script = await withTimeout(bundle(options.entry), timeoutMs, 'bundling the page script');
    const scripts = new Map<string, string>([['/main.js', script]]);
    for (const [name, entry] of Object.entries(options.scripts ?? {}))
      scripts.set(`/${name}`, await withTimeout(bundle(entry), timeoutMs, `bundling ${name}`));
    server = await withTimeout(serve(scripts), timeoutMs, 'starting the page server');
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
    browser = await chromium.launch({
      executablePath: chromiumExecutablePath,
      args: [...chromiumArgs],
      timeout: timeoutMs,
    });
  }, 3 * timeoutMs);

  afterAll(async () => {
    // Closing the browser closes its contexts; the server then has no client left.
    const closingBrowser = browser?.close();
    browser = undefined;
    if (closingBrowser) await withTimeout(closingBrowser, timeoutMs, 'closing Chromium');
    const closingServer = server;
    server = undefined;
    if (closingServer) {
      closingServer.closeAllConnections();
      await withTimeout(
        new Promise<void>((resolve, reject) =>
          closingServer.close((error) => (error ? reject(error) : resolve())),
        ),
        timeoutMs,
        'closing the page server',
      );
    }
  }, 3 * timeoutMs);

  const runningUrl = (): string => {
    if (url === undefined) throw new Error('useChromium: the page server is not running (before beforeAll?)');
    return url;
  };
  const runningBrowser = (): Browser => {
    if (browser === undefined) throw new Error('useChromium: Chromium is not running (before beforeAll?)');
    return browser;
  };

  return {
    get url() {
      return runningUrl();
    },
    get browser() {
      return runningBrowser();
    },
    async openPage(inContext?: BrowserContext) {
      const context = inContext ?? (await runningBrowser().newContext());
      if (inContext === undefined) context.setDefaultTimeout(timeoutMs);
      const page = await context.newPage();
      const errors: string[] = [];
      page.on('pageerror', (error) => errors.push(`pageerror: ${error.message}`));
      page.on('console', (message) => {
        if (message.type() === 'error') errors.push(`console.error: ${message.text()}`);
      });
      await page.goto(runningUrl(), { waitUntil: 'load', timeout: timeoutMs });
      return { context, page, errors };
    },
  };
}

/**
 * The entry bundled as one browser ES module (inline source map, so page errors point at the source), with no
 * split: each `import()` is inlined, as a service worker needs (it may not import() at all).
 */
async function bundle(entry: ChromiumOptions['entry']): Promise<string> {
  const result = await build({
    ...(typeof entry === 'string'
      ? { entryPoints: [entry] }
      : { stdin: { ...entry, sourcefile: 'page-entry.ts', loader: 'ts' as const } }),
    bundle: true,
    write: false,
    platform: 'browser',
    format: 'esm',
    target: 'es2022',
    sourcemap: 'inline',
    logLevel: 'silent',
  });
  const [output] = result.outputFiles;
  if (output === undefined) throw new Error('useChromium: esbuild produced no output');
  return output.text;
}

const PAGE = `<!doctype html>
<html><head><meta charset="utf-8"><title>failwise browser test</title><link rel="icon" href="data:,">
<script type="module" src="/main.js"></script></head><body></body></html>
`;

/** Serves the page at `/` and each script at its path (`/main.js` the page's) on 127.0.0.1, a port the system picks. */
async function serve(scripts: ReadonlyMap<string, string>): Promise<http.Server> {
  const server = http.createServer((req, res) => {
    const path = new URL(req.url ?? '/', 'http://127.0.0.1').pathname;
    const body = path === '/' ? PAGE : scripts.get(path);
    if (body === undefined) {
      res.writeHead(404, { 'content-type': 'text/plain' }).end('not found');
      return;
    }
    res
      .writeHead(200, {
        'content-type': path === '/' ? 'text/html; charset=utf-8' : 'text/javascript; charset=utf-8',
        'cache-control': 'no-store',
      })
      .end(body);
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      server.off('error', reject);
      resolve();
    });
  });
  return server;
}

/** `promise`, or a rejection naming `what` after `ms`; the timer never outlives the race. */
async function withTimeout<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([
      promise,
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`useChromium: ${what} took longer than ${ms} ms`)), ms);
      }),
    ]);
  } finally {
    clearTimeout(timer);
  }
}
