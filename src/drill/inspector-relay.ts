/**
 * The loopback relay behind `npm run inspect`: an HTTP server on 127.0.0.1 that serves a page embedding the
 * Stately inspector, and a WebSocket endpoint that relays each inspection event from the inspected process
 * (the source) to every viewer, replaying what it relayed to viewers that join later. Same protocol as
 * `createInspectorServer` from `@statelyai/inspect/server` (live-inspection.ts says why it is not used).
 */
import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Duplex } from 'node:stream';

/** The hosted inspector UI the page embeds; there is no offline build of it. */
export const STATELY_INSPECTOR_URL = 'https://stately.ai/inspect';
/** How many relayed messages the relay keeps for viewers that join later; the oldest go first. */
const REPLAY_LIMIT = 20_000;
/** Bounds every wait on the other end of a socket (the inspector's handshake, a close), in real ms. */
const SOCKET_WAIT_MS = 5_000;

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
export interface WsServer {
  handleUpgrade(
    request: IncomingMessage,
    socket: Duplex,
    head: Buffer,
    done: (socket: WsSocket) => void,
  ): void;
  close(): void;
}
export type WsServerClass = new (options: { noServer: true }) => WsServer;

const OPEN = 1;

export interface Relay {
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

export async function startRelay(WebSocketServer: WsServerClass, port: number): Promise<Relay> {
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
