import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import type { IncomingMessage } from 'node:http';
import { createRequire } from 'node:module';
import { createServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { StatelyInspectionEvent } from '@statelyai/inspect';
import { chromium } from 'playwright-core';
import { afterAll, afterEach, describe, expect, it, vi } from 'vitest';
import {
  MISSING_INSPECT_PACKAGE_MESSAGE,
  STATELY_INSPECTOR_URL,
  startLiveInspection,
} from '../../src/drill/live-inspection.js';
import { runScenario } from '../../src/drill/run-scenario.js';
import { defaultPolicy } from '../../src/policy/defaults.js';
import { scenarios } from '../../src/drill/scenarios/index.js';
import {
  chromiumArgs,
  chromiumExecutablePath,
  chromiumSkipReason,
  useChromium,
} from '../helpers/chromium.js';

// Live inspection end to end: `npm run inspect` in a child process with a real WebSocket viewer (the `ws`
// package, as @statelyai/inspect uses it), the relay in-process, its bridge page in Chromium, and the
// snippets of docs/inspect.md run as written: the Node ones in-process (only the port, the file name and
// the network replaced), the browser one bundled into a Chromium page (failwise imported from the source;
// the hosted UI and the API replaced by Playwright routes). Every wait is on an event (a message, a line
// of output, an exit), bounded by WAIT_MS.

const WAIT_MS = 15_000;
const root = fileURLToPath(new URL('../../', import.meta.url));
const cli = fileURLToPath(new URL('../../src/drill/inspect-cli.ts', import.meta.url));

/** The `ws` client, resolved as @statelyai/inspect resolves it; the package has no types of its own. */
interface WsClient {
  on(event: 'open', listener: () => void): this;
  on(event: 'message', listener: (data: Buffer) => void): this;
  on(event: 'close', listener: (code: number, reason: Buffer) => void): this;
  on(event: 'error', listener: (error: Error) => void): this;
  on(event: 'unexpected-response', listener: (request: unknown, response: IncomingMessage) => void): this;
  close(): void;
}
const requireHere = createRequire(import.meta.url);
const { WebSocket } = createRequire(requireHere.resolve('@statelyai/inspect'))('ws') as {
  WebSocket: new (url: string, options?: { headers?: Record<string, string> }) => WsClient;
};

/** `promise`, or a rejection naming `what` after WAIT_MS; the timer never outlives the race. */
async function within<T>(promise: Promise<T>, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([
      promise,
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`${what}: no answer within ${WAIT_MS} ms`)), WAIT_MS);
      }),
    ]);
  } finally {
    clearTimeout(timer);
  }
}

interface Viewer {
  messages: StatelyInspectionEvent[];
  opened: Promise<void>;
  closed: Promise<{ code: number; reason: string }>;
  /** Resolves with the first message (received or to come) that `matches`. */
  waitFor(matches: (message: StatelyInspectionEvent) => boolean): Promise<StatelyInspectionEvent>;
  close(): void;
}

function connectViewer(url: string, headers?: Record<string, string>): Viewer {
  const socket = new WebSocket(url, headers === undefined ? {} : { headers });
  const messages: StatelyInspectionEvent[] = [];
  const waits: Array<{
    matches: (m: StatelyInspectionEvent) => boolean;
    resolve: (m: StatelyInspectionEvent) => void;
  }> = [];
  socket.on('message', (data) => {
    const message = JSON.parse(data.toString('utf8')) as StatelyInspectionEvent;
    messages.push(message);
    for (const wait of [...waits])
      if (wait.matches(message)) {
        waits.splice(waits.indexOf(wait), 1);
        wait.resolve(message);
      }
  });
  const opened = new Promise<void>((resolve, reject) => {
    socket.on('open', resolve);
    socket.on('error', reject);
    socket.on('unexpected-response', (_, response) =>
      reject(new Error(`refused: ${response.statusCode} ${response.statusMessage}`)),
    );
  });
  const closed = new Promise<{ code: number; reason: string }>((resolve) =>
    socket.on('close', (code, reason) => resolve({ code, reason: reason.toString('utf8') })),
  );
  return {
    messages,
    opened,
    closed,
    waitFor: (matches) =>
      new Promise((resolve) => {
        const seen = messages.find(matches);
        if (seen) resolve(seen);
        else waits.push({ matches, resolve });
      }),
    close: () => socket.close(),
  };
}

/** What a viewer saw, arranged by actor: its `@xstate.actor` message, snapshots and events in order. */
function actorsOf(messages: readonly StatelyInspectionEvent[]) {
  const actors = messages.flatMap((m) => (m.type === '@xstate.actor' ? [m] : []));
  return actors.map((actor) => ({
    name: actor.name,
    definitionId:
      actor.definition === undefined ? undefined : (JSON.parse(actor.definition) as { id?: string }).id,
    sessionId: actor.sessionId,
    rootId: actor.rootId,
    parentId: actor.parentId,
    snapshots: messages.flatMap((m) =>
      m.type === '@xstate.snapshot' && m.sessionId === actor.sessionId
        ? [m.snapshot as { value?: unknown; status?: string }]
        : [],
    ),
    events: messages.flatMap((m) =>
      m.type === '@xstate.event' && m.sessionId === actor.sessionId ? [m.event.type] : [],
    ),
  }));
}

/** The three machines of one client, as a viewer tells them apart: by name and definition id. */
function expectTheThreeMachines(messages: readonly StatelyInspectionEvent[]) {
  const actors = actorsOf(messages);
  const byName = (name: string) => actors.filter((actor) => actor.name === name);
  for (const name of ['request', 'originHealth', 'outbox']) {
    const [first] = byName(name);
    expect(first, `an @xstate.actor message for ${name}`).toBeDefined();
    // A root actor: named after its machine's id, its own system's root, no parent.
    expect(first).toMatchObject({ definitionId: name, rootId: first?.sessionId, parentId: undefined });
    expect(first?.events[0], `${name} starts with xstate.init`).toBe('xstate.init');
  }
  const [request] = byName('request');
  const transports = byName('transport');
  expect(transports.length).toBeGreaterThan(0);
  expect(transports.every((child) => child.parentId === request?.sessionId)).toBe(true);
  return {
    actors,
    byName,
    request: request!,
    health: byName('originHealth')[0]!,
    outbox: byName('outbox')[0]!,
  };
}

/** Counts by message type. */
const countTypes = (messages: readonly StatelyInspectionEvent[]) =>
  messages.reduce<Record<string, number>>(
    (counts, m) => ({ ...counts, [m.type]: (counts[m.type] ?? 0) + 1 }),
    {},
  );

interface Cli {
  child: ChildProcess;
  stdout(): string;
  stderr(): string;
  exited: Promise<number | null>;
  /** Resolves when stdout matches `pattern`. */
  output(pattern: RegExp): Promise<RegExpExecArray>;
}

const children: ChildProcess[] = [];
afterEach(() => {
  // A failed test must not leave its child running.
  for (const child of children.splice(0)) if (child.exitCode === null) child.kill('SIGKILL');
});

function startCli(args: readonly string[]): Cli {
  const child = spawn(process.execPath, ['--import', 'tsx', cli, ...args], {
    cwd: root,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.push(child);
  let stdout = '';
  let stderr = '';
  const waits: Array<{ pattern: RegExp; resolve: (match: RegExpExecArray) => void }> = [];
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
    stdout += chunk;
    for (const wait of [...waits]) {
      const match = wait.pattern.exec(stdout);
      if (match) {
        waits.splice(waits.indexOf(wait), 1);
        wait.resolve(match);
      }
    }
  });
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  return {
    child,
    stdout: () => stdout,
    stderr: () => stderr,
    exited,
    output: (pattern) =>
      new Promise((resolve) => {
        const match = pattern.exec(stdout);
        if (match) resolve(match);
        else waits.push({ pattern, resolve });
      }),
  };
}

const PAGE_LINE = /Open (http:\/\/127\.0\.0\.1:(\d+)\/) in a browser/;

describe('npm run inspect (src/drill/inspect-cli.ts)', () => {
  it('waits for a viewer, streams every machine of the scenario to it, and exits 0 by itself with --exit', async () => {
    const run = startCli(['--scenario', 'response-timeout', '--port', '0', '--pace', '0', '--exit']);
    const [, page, port] = await within(run.output(PAGE_LINE), 'the page line');
    expect(page).toBe(`http://127.0.0.1:${port}/`);
    await within(run.output(/Waiting for a viewer/), 'the waiting line');
    expect(run.stdout()).not.toContain('PASS');

    const viewer = connectViewer(`ws://127.0.0.1:${port}/`);
    const [code, closed] = await within(Promise.all([run.exited, viewer.closed]), 'the end of the run');

    expect(run.stderr()).toBe('');
    expect(code).toBe(0);
    expect(run.stdout()).toMatch(/Viewer connected\.\n[\s\S]*PASS response-timeout: 3\/3 checks passed/);
    expect(closed).toEqual({ code: 1001, reason: 'failwise inspect stopped' });

    const { messages } = viewer;
    expect(new Set(messages.map((m) => m.type))).toEqual(
      new Set(['@xstate.actor', '@xstate.snapshot', '@xstate.event']),
    );
    const { request, health, outbox } = expectTheThreeMachines(messages);
    // The request timed out once (its attempt timer), waited, and succeeded on the second attempt.
    expect(request.snapshots.map((s) => s.value)).toContain('succeeded');
    expect(request.snapshots.at(-1)).toMatchObject({ value: 'succeeded', status: 'done' });
    expect(request.events.filter((type) => type === 'xstate.done.actor.transport')).toHaveLength(1);
    expect(request.events.some((type) => type.startsWith('xstate.after.attemptTimeout'))).toBe(true);
    expect(health.events).toEqual(expect.arrayContaining(['attempt.failed', 'attempt.succeeded']));
    // The last events of the run (the client closing) reached the viewer before the relay closed it.
    expect(health.snapshots.at(-1)?.status).toBe('stopped');
    expect(outbox.snapshots.at(-1)).toMatchObject({ value: 'closed', status: 'done' });
    const relayed = /Closed; (\d+) inspection messages relayed\./.exec(run.stdout());
    expect(Number(relayed?.[1])).toBe(messages.length);
  });

  it('runs the default scenario at once with --no-wait, stays up after the verdict, and closes on SIGTERM', async () => {
    const expected = (scenarios.find((s) => s.name === 'failover-failback') ?? scenarios[0])!.name;
    const run = startCli(['--port', '0', '--pace', '0', '--no-wait']);
    await within(run.output(/Still serving .* Ctrl-C to stop\./), 'the still-serving line');
    expect(run.stdout()).toContain(`failwise inspect: ${expected}: `);
    expect(run.stdout()).toContain(`PASS ${expected}: `);
    expect(run.stdout()).not.toContain('Waiting for a viewer');
    expect(run.child.exitCode).toBe(null);

    run.child.kill('SIGTERM');
    expect(await within(run.exited, 'the exit after SIGTERM')).toBe(0);
    expect(run.stdout()).toMatch(/inspection messages relayed/);
  });

  it('rejects bad arguments with exit code 2 and says what is wrong', () => {
    const runSync = (...args: string[]) =>
      spawnSync(process.execPath, ['--import', 'tsx', cli, ...args], {
        cwd: root,
        encoding: 'utf8',
        timeout: WAIT_MS,
      });

    const unknown = runSync('--scenario', 'no-such-scenario');
    expect(unknown.status).toBe(2);
    expect(unknown.stderr).toContain(
      `inspect: unknown scenario 'no-such-scenario'; the scenarios are: ${scenarios.map((s) => s.name).join(', ')}\n`,
    );
    expect(unknown.stderr).toContain('usage: npm run inspect -- [--scenario NAME]');

    const pace = runSync('--pace=-1');
    expect(pace.status).toBe(2);
    expect(pace.stderr).toContain(
      `inspect: --pace must be a number >= 0 (real ms per simulated second), got '-1'`,
    );

    const port = runSync('--port', '70000');
    expect(port.status).toBe(2);
    expect(port.stderr).toContain(`inspect: --port must be an integer from 0 to 65535, got '70000'`);

    const flag = runSync('--open');
    expect(flag.status).toBe(2);
    expect(flag.stderr).toContain(`inspect: Unknown option '--open'`);
    // Nothing was started: no page line.
    expect(flag.stdout).toBe('');
  });
});

describe('startLiveInspection', () => {
  const responseTimeout = scenarios.find((s) => s.name === 'response-timeout')!;

  it('relays a scenario to a viewer, replays all of it to a late one, and stop() leaves no socket or timer', async () => {
    const resources = () =>
      process
        .getActiveResourcesInfo()
        .filter((name) => /^(TCPServerWrap|TCPSocketWrap|Timeout)$/.test(name))
        .sort();
    const count = (names: string[], name: string) => names.filter((n) => n === name).length;
    /** Nothing beyond `baseline`; closed handles finish closing on a later turn, so look turn by turn, bounded. */
    const nothingBeyond = async (baseline: string[]) => {
      const within = (now: string[]) => now.every((name) => count(now, name) <= count(baseline, name));
      for (let turn = 0; turn < 1_000 && !within(resources()); turn++)
        await new Promise((resolve) => setImmediate(resolve));
      return within(resources()) || resources();
    };
    const before = resources();

    const live = await startLiveInspection({ port: 0 });
    expect(live.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/$/);
    expect(live.relayUrl).toBe(live.url.replace('http:', 'ws:'));
    expect(live.viewers()).toBe(0);
    const early = connectViewer(live.relayUrl);
    await within(live.waitForViewer(), 'the first viewer');
    expect(live.viewers()).toBe(1);

    const report = await runScenario(responseTimeout, { inspect: live.inspect });
    expect(report.verdict).toBe('pass');
    // The request's end is in the relay's history once the early viewer has it.
    await within(
      early.waitFor(
        (m) => m.type === '@xstate.snapshot' && (m.snapshot as { value?: unknown }).value === 'succeeded',
      ),
      'the succeeded snapshot',
    );
    const late = connectViewer(live.relayUrl);
    await within(late.opened, 'the late viewer');
    expect(live.viewers()).toBe(2);

    await live.stop();
    await within(Promise.all([early.closed, late.closed]), 'the viewers closing');
    expect(live.viewers()).toBe(0);
    expect(live.relayed()).toBe(early.messages.length);
    expect(late.messages).toEqual(early.messages);
    const { health } = expectTheThreeMachines(early.messages);
    expect(health.snapshots.at(-1)?.status).toBe('stopped');
    expect(await nothingBeyond(before)).toBe(true);
    await live.stop(); // twice is fine
  });

  it('waitForViewer rejects when its signal aborts or when the relay stops', async () => {
    const live = await startLiveInspection({ port: 0 });
    const controller = new AbortController();
    const aborted = live.waitForViewer({ signal: controller.signal });
    controller.abort();
    await expect(aborted).rejects.toThrow('live inspection: stopped waiting for a viewer');

    const stopped = expect(live.waitForViewer()).rejects.toThrow(
      'live inspection: stopped before a viewer connected',
    );
    await live.stop();
    await stopped;
    await expect(live.waitForViewer()).rejects.toThrow('live inspection: stopped before a viewer connected');
  });

  it('serves the bridge page and refuses a WebSocket from another site', async () => {
    const live = await startLiveInspection({ port: 0 });
    try {
      const page = await fetch(live.url);
      expect(page.headers.get('content-type')).toBe('text/html; charset=utf-8');
      const html = await page.text();
      expect(html).toContain(`<iframe id="inspector" src="${STATELY_INSPECTOR_URL}">`);
      expect(html).toContain(`new WebSocket('ws://' + location.host + '/')`);
      expect((await fetch(new URL('/other', live.url))).status).toBe(404);

      const foreign = connectViewer(live.relayUrl, { origin: 'https://elsewhere.example' });
      await expect(within(foreign.opened, 'the refusal')).rejects.toThrow('refused: 403 Forbidden');
      const own = connectViewer(live.relayUrl, { origin: new URL(live.url).origin });
      await within(own.opened, 'the page origin');
      expect(live.viewers()).toBe(1);
    } finally {
      await live.stop();
    }
  });

  it('says which port is taken', async () => {
    const first = await startLiveInspection({ port: 0 });
    const port = Number(new URL(first.url).port);
    try {
      await expect(startLiveInspection({ port })).rejects.toThrow(
        `live inspection: port ${port} on 127.0.0.1 is in use; pass another (--port N), or 0 for any free port`,
      );
    } finally {
      await first.stop();
    }
  });

  it('says what to install when @statelyai/inspect is missing', async () => {
    const missing = '@statelyai/inspect-is-not-installed';
    await expect(
      startLiveInspection({ port: 0, loadInspectPackage: () => import(missing) as never }),
    ).rejects.toThrow(MISSING_INSPECT_PACKAGE_MESSAGE);
    expect(MISSING_INSPECT_PACKAGE_MESSAGE).toBe(
      'live inspection needs @statelyai/inspect, which is not installed: run `npm install --save-dev @statelyai/inspect@~0.7.2`',
    );
  });

  describe.skipIf(chromiumSkipReason !== undefined)('the bridge page in Chromium', () => {
    it('connects to the relay as a viewer, holds the messages until the inspector UI is ready, then posts them all', async () => {
      const live = await startLiveInspection({ port: 0 });
      const browser = await chromium.launch({
        executablePath: chromiumExecutablePath,
        args: [...chromiumArgs],
        timeout: WAIT_MS,
      });
      try {
        const page = await browser.newPage();
        page.setDefaultTimeout(WAIT_MS);
        // stately.ai is out of reach here: a stand-in UI records what the page posts to it, and says it is
        // ready (`@statelyai.connected`, as the real UI does) only when the test tells it to.
        await page.route(`${STATELY_INSPECTOR_URL}**`, (route) =>
          route.fulfill({
            contentType: 'text/html',
            body: `<script>window.received = []; addEventListener('message', (e) => received.push(e.data));</script>`,
          }),
        );
        await page.goto(live.url, { waitUntil: 'load' });
        await within(live.waitForViewer(), 'the page connecting');
        const report = await runScenario(responseTimeout, { inspect: live.inspect });
        expect(report.verdict).toBe('pass');
        // stop() sends the last events, then closes the page's connection; the page keeps what it got.
        await live.stop();
        const relayed = live.relayed();
        await page.waitForFunction(`waiting.length === ${relayed}`);
        const ui = page.frame({ url: (url) => url.href.startsWith(STATELY_INSPECTOR_URL) })!;
        expect(await ui.evaluate('received.length')).toBe(0);

        await ui.evaluate(`parent.postMessage({ type: '@statelyai.connected' }, '*')`);
        await ui.waitForFunction(`received.length === ${relayed}`);
        const received = await ui.evaluate<StatelyInspectionEvent[]>('received');
        expect(received[0]?.type).toBe('@xstate.actor');
        expectTheThreeMachines(received);
        expect(await page.evaluate('waiting.length')).toBe(0);
      } finally {
        await browser.close();
        await live.stop();
      }
    });
  });
});

describe('the Node snippets of docs/inspect.md', () => {
  const doc = readFileSync(new URL('../../docs/inspect.md', import.meta.url), 'utf8');
  const snippet = (containing: string) => {
    const found = [...doc.matchAll(/```ts\n([\s\S]*?)```/g)]
      .map((m) => m[1]!)
      .filter((s) => s.includes(containing));
    expect(found, `one ts block with ${containing}`).toHaveLength(1);
    return found[0]!;
  };
  const dir = mkdtempSync(join(fileURLToPath(new URL('.', import.meta.url)), '.inspect-doc-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  afterEach(() => {
    vi.unstubAllGlobals();
    vi.restoreAllMocks();
  });
  const freePort = () =>
    new Promise<number>((resolve, reject) => {
      const probe = createServer();
      probe.once('error', reject);
      probe.listen(0, '127.0.0.1', () => {
        const { port } = probe.address() as AddressInfo;
        probe.close(() => resolve(port));
      });
    });

  it('the relay set-up runs as written: a viewer of createInspectorServer sees the three machines', async () => {
    const port = await freePort();
    const code = snippet('createInspectorServer(').replaceAll('8080', String(port));
    expect(code).toContain(`createInspectorServer({ port: ${port}, autoOpen: false })`);
    expect(code).toContain(`createWebSocketInspector({ url: 'ws://localhost:${port}' })`);
    let viewer: Viewer | undefined;
    // The API answers once a viewer is connected and has received the inspector's first message.
    vi.stubGlobal('fetch', async () => {
      viewer = connectViewer(`ws://127.0.0.1:${port}`);
      await within(viewer.opened, 'the viewer');
      await within(
        viewer.waitFor(() => true),
        'the first message',
      );
      return new Response('[]', { status: 200, headers: { 'content-type': 'application/json' } });
    });
    const log = vi.spyOn(console, 'log').mockImplementation(() => undefined);
    const file = join(dir, 'node-relay.ts');
    writeFileSync(file, code);
    await within(import(file), 'the snippet');
    expect(log).toHaveBeenCalledWith('succeeded');
    // The package's relay forwards as messages arrive; the client's last events come after the rest.
    const seen = viewer!;
    await within(
      seen.waitFor((m) => m.type === '@xstate.snapshot' && m.snapshot.status === 'stopped'),
      'the stopped originHealth snapshot',
    );
    const { request } = expectTheThreeMachines(seen.messages);
    expect(request.snapshots.at(-1)).toMatchObject({ value: 'succeeded', status: 'done' });
    // Its stop() leaves open viewers connected: close ours, so the relay's server can close.
    seen.close();
    await within(seen.closed, 'the viewer closing');
  });

  it('the offline recording writes the messages the UI would get, up to the client closing', async () => {
    const output = join(dir, 'inspection.json');
    const code = snippet('createInspector({ send').replace(`'inspection.json'`, JSON.stringify(output));
    vi.stubGlobal('fetch', async () => new Response('[]', { status: 200 }));
    const file = join(dir, 'record.ts');
    writeFileSync(file, code);
    await within(import(file), 'the snippet');
    const messages = JSON.parse(readFileSync(output, 'utf8')) as StatelyInspectionEvent[];
    expect(Object.keys(countTypes(messages)).sort()).toEqual([
      '@xstate.actor',
      '@xstate.event',
      '@xstate.snapshot',
    ]);
    const { health } = expectTheThreeMachines(messages);
    expect(health.snapshots.at(-1)?.status).toBe('stopped');
  });
});

/** The browser snippet of docs/inspect.md, with failwise imported from the source (the page is bundled here). */
const browserSnippet = (() => {
  const doc = readFileSync(new URL('../../docs/inspect.md', import.meta.url), 'utf8');
  const found = [...doc.matchAll(/```ts\n([\s\S]*?)```/g)]
    .map((m) => m[1]!)
    .filter((code) => code.includes('createBrowserInspector('));
  return (found.length === 1 ? found[0]! : '')
    .replace(`from 'failwise'`, `from '../../src/index.js'`)
    .replace(`from 'failwise/machines'`, `from '../../src/machines.js'`);
})();
const SERIALIZE_OPTION = `serialize: (event) => JSON.parse(JSON.stringify(event)),`;

/**
 * Opens the bundled page in Chromium with the hosted UI and the API replaced: the stand-in UI says it is
 * ready to the page that opened it, as the real one does, and records what it is sent. Returns what it got
 * once the request's end has arrived or the page has stopped (an error), and the page's errors.
 */
async function inspectInChromium(harness: ReturnType<typeof useChromium>) {
  const context = await harness.browser.newContext();
  context.setDefaultTimeout(WAIT_MS);
  try {
    await context.route(`${STATELY_INSPECTOR_URL}**`, (route) =>
      route.fulfill({
        contentType: 'text/html',
        body: `<script>
          window.received = [];
          addEventListener('message', (e) => received.push(e.data));
          opener.postMessage({ type: '@statelyai.connected' }, '*');
        </script>`,
      }),
    );
    await context.route('https://api.example.com/**', (route) =>
      route.fulfill({
        status: 200,
        contentType: 'application/json',
        headers: { 'access-control-allow-origin': '*' },
        body: '[]',
      }),
    );
    const opened = await harness.openPage(context);
    // The page's script opens the popup as it loads, so it may be there already.
    const ui = context.pages().find((page) => page !== opened.page) ?? (await context.waitForEvent('page'));
    await ui.waitForURL(`${STATELY_INSPECTOR_URL}**`);
    // Waits for the request's end: its `succeeded` snapshot.
    await ui.waitForFunction(
      `received.some((m) => m.type === '@xstate.snapshot' && m.snapshot.value === 'succeeded')`,
    );
    return { received: await ui.evaluate<StatelyInspectionEvent[]>('received'), errors: opened.errors };
  } finally {
    await context.close();
  }
}

describe.skipIf(chromiumSkipReason !== undefined)('the browser snippet of docs/inspect.md', () => {
  const harness = useChromium({
    entry: { contents: browserSnippet, resolveDir: fileURLToPath(new URL('.', import.meta.url)) },
  });

  it('opens the inspector in a popup and posts every machine to it, whole, once it says it is ready', async () => {
    expect(browserSnippet).toContain(SERIALIZE_OPTION);
    const { received, errors } = await inspectInChromium(harness);
    expect(errors).toEqual([]);
    const { request } = expectTheThreeMachines(received);
    expect(request.snapshots.at(-1)).toMatchObject({ value: 'succeeded', status: 'done' });
    expect(JSON.stringify(received)).not.toContain('[...]');
  });
});

describe.skipIf(chromiumSkipReason !== undefined)(
  'createBrowserInspector 0.7.2 with its default serializer (why the snippet sets serialize)',
  () => {
    const harness = useChromium({
      entry: {
        contents: browserSnippet.replace(SERIALIZE_OPTION, ''),
        resolveDir: fileURLToPath(new URL('.', import.meta.url)),
      },
    });

    it("gets every machine (the policy is frozen, the machines hold a copy), cut after each object's tenth key", async () => {
      const { received, errors } = await inspectInChromium(harness);
      expect(errors).toEqual([]);
      const { request } = expectTheThreeMachines(received);
      expect(request.snapshots.at(-1)).toMatchObject({ value: 'succeeded', status: 'done' });
      // The policy's sections past its tenth key arrive as "[...]".
      const cut = Object.entries(defaultPolicy).find(
        ([, value], i) => i >= 10 && typeof value === 'object',
      )![0];
      expect(JSON.stringify(received)).toContain(`"${cut}":"[...]"`);
    });
  },
);
