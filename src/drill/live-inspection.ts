/**
 * Live inspection for `npm run inspect`: a loopback relay that serves a page embedding the Stately
 * inspector, and a WebSocket inspector (`createWebSocketInspector` from `@statelyai/inspect`) that sends
 * every machine's inspection events to it. The relay keeps what it relayed and replays it to each viewer
 * that joins, so a browser opened late still sees every actor from its creation.
 *
 * Why not `createInspectorServer` from `@statelyai/inspect/server` (0.7.2, read and run): it listens on
 * every interface, replays only the last 200 messages, crashes the process on EADDRINUSE (an `error`
 * event nobody listens to), cannot say whether a viewer is connected, and its `stop()` leaves connected
 * viewers' sockets open, so the process cannot exit while a browser tab is open. This relay speaks the
 * same protocol (JSON text frames, one inspection event each), so the same page and any `ws` client work.
 */
import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createRequire } from 'node:module';
import type { Duplex } from 'node:stream';
import { setTimeout as nextMacrotask } from 'node:timers/promises';
import type * as StatelyInspect from '@statelyai/inspect';
import type { InspectionEvent, Observer } from 'xstate';

/** The port `npm run inspect` serves on unless `--port` says otherwise. */
export const DEFAULT_INSPECT_PORT = 4242;

/** The package live inspection needs (0.7.x: this code was written against 0.7.2's behaviour). */
export const INSPECT_PACKAGE = '@statelyai/inspect';
export const MISSING_INSPECT_PACKAGE_MESSAGE =
  'live inspection needs @statelyai/inspect, which is not installed: run `npm install --save-dev @statelyai/inspect@~0.7.2`';

/** The hosted inspector UI the page embeds; there is no offline build of it. */
export const STATELY_INSPECTOR_URL = 'https://stately.ai/inspect';

/** How many relayed messages the relay keeps for viewers that join later; the oldest go first. */
const REPLAY_LIMIT = 20_000;
/** Bounds every wait on the other end of a socket (the inspector's handshake, a close), in real ms. */
const SOCKET_WAIT_MS = 5_000;

export interface LiveInspectionOptions {
  /** The loopback port to serve the page and the relay on; 0 picks a free one. @default DEFAULT_INSPECT_PORT */
  port?: number;
  /** Loads `@statelyai/inspect`; for tests of the missing-package error. @default a dynamic import */
  loadInspectPackage?: () => Promise<InspectPackage>;
}

export interface LiveInspection {
  /** The inspection observer to give a client (`inspect` option) or `createActor`. */
  inspect: Observer<InspectionEvent>;
  /** The page to open in a browser: it embeds the Stately inspector and feeds it from the relay. */
  url: string;
  /** The relay's WebSocket address for other viewers (a `ws` client): the same messages the page gets. */
  relayUrl: string;
  /** Viewers connected now (pages or WebSocket clients), not counting the inspector that feeds the relay. */
  viewers(): number;
  /** Inspection messages relayed so far. */
  relayed(): number;
  /** Resolves when a viewer is connected (at once if one is); rejects when `signal` aborts or on `stop()`. */
  waitForViewer(options?: { signal?: AbortSignal }): Promise<void>;
  /**
   * Sends what is still queued, closes the inspector, then every viewer (after it has received everything)
   * and the server. Afterwards no socket or timer is left. Safe to call twice.
   */
  stop(): Promise<void>;
}

type InspectPackage = Pick<typeof StatelyInspect, 'createWebSocketInspector'>;

/** Starts the relay on 127.0.0.1 and an inspector connected to it; see the file comment. */
export async function startLiveInspection(options: LiveInspectionOptions = {}): Promise<LiveInspection> {
  const { createWebSocketInspector } = await loadOptional(
    options.loadInspectPackage ?? (() => import('@statelyai/inspect')),
  );
  const { WebSocketServer } = await loadOptional(loadWs);
  const relay = await startRelay(WebSocketServer, options.port ?? DEFAULT_INSPECT_PORT);
  const inspector = createWebSocketInspector({ url: relay.sourceUrl });
  try {
    // Until its socket is open, the inspector's stop() starts a reconnect loop (every 5 s, forever).
    await relay.sourceReady;
  } catch (error) {
    inspector.stop();
    await relay.close();
    throw error;
  }

  let stopping: Promise<void> | undefined;
  return {
    inspect: inspector.inspect,
    url: relay.pageUrl,
    relayUrl: relay.viewerUrl,
    viewers: relay.viewers,
    relayed: relay.relayed,
    waitForViewer: relay.waitForViewer,
    stop: () =>
      (stopping ??= (async () => {
        // The inspector converts and sends each event in a setTimeout(0) of its own: let those run first.
        await nextMacrotask(0);
        inspector.stop();
        await relay.close();
      })()),
  };
}

/** Runs `load`, turning "@statelyai/inspect is not installed" into a message that says what to install. */
async function loadOptional<T>(load: () => T | Promise<T>): Promise<T> {
  try {
    return await load();
  } catch (error) {
    if (isModuleNotFound(error)) throw new Error(MISSING_INSPECT_PACKAGE_MESSAGE, { cause: error });
    throw error;
  }
}

function isModuleNotFound(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  const code = (error as { code?: unknown }).code;
  return code === 'ERR_MODULE_NOT_FOUND' || code === 'MODULE_NOT_FOUND';
}

/** The part of `ws` the relay uses. `ws` comes with @statelyai/inspect, which ships no types for it. */
interface WsSocket {
  readonly readyState: number;
  send(data: string): void;
  ping(): void;
  close(code?: number, reason?: string): void;
  terminate(): void;
  on(event: 'message', listener: (data: Buffer, isBinary: boolean) => void): this;
  on(event: 'pong' | 'close', listener: () => void): this;
  on(event: 'error', listener: (error: Error) => void): this;
}
interface WsServer {
  handleUpgrade(
    request: IncomingMessage,
    socket: Duplex,
    head: Buffer,
    done: (socket: WsSocket) => void,
  ): void;
  close(): void;
}
type WsServerClass = new (options: { noServer: true }) => WsServer;

/** `ws` as @statelyai/inspect resolves it (its own dependency, wherever the package manager put it). */
function loadWs(): { WebSocketServer: WsServerClass } {
  const here = createRequire(import.meta.url);
  const fromInspect = createRequire(here.resolve(INSPECT_PACKAGE));
  return fromInspect('ws') as { WebSocketServer: WsServerClass };
}

const OPEN = 1;

interface Relay {
  pageUrl: string;
  viewerUrl: string;
  /** Where the inspector connects: a path with a secret, so only it can feed the relay. */
  sourceUrl: string;
  /** Resolves once the inspector's socket is open on both ends. */
  sourceReady: Promise<void>;
  viewers: () => number;
  relayed: () => number;
  waitForViewer: (options?: { signal?: AbortSignal }) => Promise<void>;
  close: () => Promise<void>;
}

async function startRelay(WebSocketServer: WsServerClass, port: number): Promise<Relay> {
  const sourcePath = `/source/${randomUUID()}`;
  const history: string[] = [];
  const viewers = new Set<WsSocket>();
  const viewerWaits = new Set<{ resolve: () => void; reject: (error: Error) => void }>();
  let source: WsSocket | undefined;
  let sourceClosed: Promise<void> | undefined;
  let relayedCount = 0;
  let closed = false;
  let markSourceReady!: () => void;
  const sourceConnected = new Promise<void>((resolve) => (markSourceReady = resolve));

  const server: Server = createServer((request, response) => {
    const path = new URL(request.url ?? '/', 'http://127.0.0.1').pathname;
    if (request.method !== 'GET' || path !== '/') {
      response.writeHead(404, { 'content-type': 'text/plain; charset=utf-8' }).end('not found\n');
      return;
    }
    response
      .writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store' })
      .end(BRIDGE_PAGE);
  });
  const wss = new WebSocketServer({ noServer: true });

  const listening = await new Promise<number>((resolve, reject) => {
    const refuse = (error: NodeJS.ErrnoException) =>
      reject(
        error.code === 'EADDRINUSE'
          ? new Error(
              `live inspection: port ${port} on 127.0.0.1 is in use; pass another (--port N), or 0 for any free port`,
              { cause: error },
            )
          : error,
      );
    server.once('error', refuse);
    server.listen(port, '127.0.0.1', () => {
      server.off('error', refuse);
      resolve((server.address() as AddressInfo).port);
    });
  });
  const base = `127.0.0.1:${listening}`;
  // Only this page (by either loopback name) or a client without an Origin (not a browser) may connect:
  // another site open in the same browser must not read the machines' context.
  const allowedOrigins = new Set([`http://${base}`, `http://localhost:${listening}`]);

  const onSource = (socket: WsSocket) => {
    source = socket;
    sourceClosed = new Promise((resolve) => socket.on('close', resolve));
    // The client answers a ping only once its side is open, so a pong means its `open` has fired.
    socket.on('pong', markSourceReady);
    socket.ping();
    socket.on('message', (data, isBinary) => {
      if (isBinary) return;
      const message = data.toString('utf8');
      relayedCount += 1;
      history.push(message);
      if (history.length > REPLAY_LIMIT) history.shift();
      for (const viewer of viewers) if (viewer.readyState === OPEN) viewer.send(message);
    });
  };

  const onViewer = (socket: WsSocket) => {
    viewers.add(socket);
    socket.on('close', () => viewers.delete(socket));
    // Viewers only listen: what they send is ignored, so no viewer can feed the others.
    for (const message of history) socket.send(message);
    for (const wait of viewerWaits) wait.resolve();
    viewerWaits.clear();
  };

  server.on('upgrade', (request: IncomingMessage, socket: Duplex, head: Buffer) => {
    socket.on('error', () => socket.destroy());
    const path = new URL(request.url ?? '/', 'http://127.0.0.1').pathname;
    const origin = request.headers.origin;
    const isSource = path === sourcePath && source === undefined;
    const refusal = closed
      ? '503 Service Unavailable'
      : origin !== undefined && !allowedOrigins.has(origin)
        ? '403 Forbidden'
        : path !== '/' && !isSource
          ? '404 Not Found'
          : undefined;
    if (refusal !== undefined) {
      socket.end(`HTTP/1.1 ${refusal}\r\nConnection: close\r\nContent-Length: 0\r\n\r\n`);
      return;
    }
    wss.handleUpgrade(request, socket, head, (ws) => {
      ws.on('error', () => ws.terminate());
      if (isSource) onSource(ws);
      else onViewer(ws);
    });
  });

  const close = async () => {
    closed = true;
    for (const wait of viewerWaits)
      wait.reject(new Error('live inspection: stopped before a viewer connected'));
    viewerWaits.clear();
    // The inspector closes its own socket; its close frame comes after every message it sent, so once the
    // relay sees the close, everything has been forwarded to the viewers.
    if (source !== undefined && sourceClosed !== undefined) await closeSocket(source, sourceClosed, false);
    await Promise.all(
      [...viewers].map((viewer) =>
        closeSocket(viewer, new Promise((resolve) => viewer.on('close', resolve)), true),
      ),
    );
    wss.close();
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  };

  return {
    pageUrl: `http://${base}/`,
    viewerUrl: `ws://${base}/`,
    sourceUrl: `ws://${base}${sourcePath}`,
    sourceReady: within(
      sourceConnected,
      SOCKET_WAIT_MS,
      `live inspection: the inspector did not connect to ws://${base} within ${SOCKET_WAIT_MS} ms`,
    ),
    viewers: () => [...viewers].filter((viewer) => viewer.readyState === OPEN).length,
    relayed: () => relayedCount,
    waitForViewer: ({ signal } = {}) =>
      new Promise<void>((resolve, reject) => {
        if (closed) return reject(new Error('live inspection: stopped before a viewer connected'));
        if (viewers.size > 0) return resolve();
        if (signal?.aborted)
          return reject(new Error('live inspection: stopped waiting for a viewer', { cause: signal.reason }));
        const onAbort = () => {
          viewerWaits.delete(wait);
          reject(new Error('live inspection: stopped waiting for a viewer', { cause: signal?.reason }));
        };
        const wait = {
          resolve: () => (signal?.removeEventListener('abort', onAbort), resolve()),
          reject: (error: Error) => (signal?.removeEventListener('abort', onAbort), reject(error)),
        };
        viewerWaits.add(wait);
        signal?.addEventListener('abort', onAbort, { once: true });
      }),
    close,
  };
}

/**
 * Waits for `socket` to close, closing it first when `initiate` (a viewer: its close frame follows what was
 * sent to it); a peer that does not answer within SOCKET_WAIT_MS is cut off.
 */
async function closeSocket(socket: WsSocket, closed: Promise<void>, initiate: boolean): Promise<void> {
  if (initiate && socket.readyState === OPEN) socket.close(1001, 'failwise inspect stopped');
  try {
    await within(closed, SOCKET_WAIT_MS, 'no close');
  } catch {
    socket.terminate();
  }
}

/** `promise`, or a rejection with `message` after `ms`; the timer never outlives the race. */
async function within<T>(promise: Promise<T>, ms: number, message: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([
      promise,
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(message)), ms);
      }),
    ]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * The page a viewer opens: the hosted Stately inspector in an iframe, fed from the relay by postMessage.
 * Messages wait until the inspector says it is ready (`@statelyai.connected`), as in @statelyai/inspect's
 * own bridge page; the WebSocket goes to the host the page came from.
 */
const BRIDGE_PAGE = `<!doctype html>
<html>
<head>
  <meta charset="utf-8">
  <title>failwise: Stately inspector</title>
  <link rel="icon" href="data:,">
  <style>html, body { height: 100%; margin: 0; } iframe { width: 100%; height: 100%; border: 0; }</style>
</head>
<body>
  <iframe id="inspector" src="${STATELY_INSPECTOR_URL}"></iframe>
  <script>
    const frame = document.getElementById('inspector');
    const waiting = [];
    let ready = false;
    window.addEventListener('message', (event) => {
      if (event.source !== frame.contentWindow || event.data?.type !== '@statelyai.connected') return;
      ready = true;
      for (const message of waiting.splice(0)) frame.contentWindow.postMessage(message, '*');
    });
    const relay = new WebSocket('ws://' + location.host + '/');
    relay.onmessage = (event) => {
      const message = JSON.parse(event.data);
      if (ready) frame.contentWindow.postMessage(message, '*');
      else waiting.push(message);
    };
  </script>
</body>
</html>
`;
