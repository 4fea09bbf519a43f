/**
 * Real servers on 127.0.0.1 for transport tests: an HTTP(S) server that records each request and
 * the writes it applied, a raw TCP server for misbehaving peers, a port nobody listens on, and a
 * self-signed certificate made with the `openssl` CLI. Every server tracks its open sockets so a
 * test can wait (by event, never by sleeping) until the client has let go of them. `useLoopback()`
 * closes a test's servers and transports after it.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import * as http from 'node:http';
import * as https from 'node:https';
import * as net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterEach } from 'vitest';
import type { Transport } from '../../src/transports/transport.js';

const execFileAsync = promisify(execFile);

export interface RecordedRequest {
  method: string;
  /** Path and query, as the server saw them. */
  url: string;
  headers: http.IncomingHttpHeaders;
  body: string;
}

export interface HandlerContext {
  req: http.IncomingMessage;
  res: http.ServerResponse;
  /** The whole request body, read before the handler runs. */
  body: string;
  /** Records that the server applied this request's write (counted in `appliedWrites`). */
  markApplied(): void;
}

export type Handler = (context: HandlerContext) => void;

interface TrackedServer {
  /** Sockets the server holds open now. */
  readonly openSockets: number;
  /** Every socket the server has accepted, in order. */
  readonly sockets: readonly net.Socket[];
  /** Resolves once the server holds no open socket. */
  waitForNoSockets(): Promise<void>;
  /** Resolves with the next socket accepted (or the first one if one already arrived and none was awaited). */
  nextSocket(): Promise<net.Socket>;
  /** Destroys every socket and stops listening. */
  close(): Promise<void>;
}

export interface LoopbackServer extends TrackedServer {
  url: string;
  port: number;
  requests: RecordedRequest[];
  readonly appliedWrites: number;
  /** Resolves when the next request's body has been read, just before its handler runs. */
  nextRequest(): Promise<RecordedRequest>;
}

export interface RawServer extends TrackedServer {
  port: number;
}

export interface TlsMaterial {
  key: Buffer;
  cert: Buffer;
}

function track(server: net.Server): TrackedServer {
  const sockets: net.Socket[] = [];
  const open = new Set<net.Socket>();
  let idleWaiters: Array<() => void> = [];
  let socketWaiters: Array<(socket: net.Socket) => void> = [];
  let unclaimed: net.Socket[] = [];
  // A TLS server reports the raw TCP socket on 'connection' and the TLS one on 'secureConnection'.
  server.on('connection', (socket: net.Socket) => {
    sockets.push(socket);
    open.add(socket);
    socket.on('error', () => undefined);
    socket.on('close', () => {
      open.delete(socket);
      if (open.size === 0) {
        const waiters = idleWaiters;
        idleWaiters = [];
        for (const wake of waiters) wake();
      }
    });
    const waiter = socketWaiters.shift();
    if (waiter === undefined) unclaimed.push(socket);
    else waiter(socket);
  });
  return {
    get openSockets() {
      return open.size;
    },
    sockets,
    waitForNoSockets: () =>
      open.size === 0 ? Promise.resolve() : new Promise<void>((resolve) => idleWaiters.push(resolve)),
    nextSocket: () => {
      const ready = unclaimed.shift();
      if (ready !== undefined) return Promise.resolve(ready);
      return new Promise<net.Socket>((resolve) => socketWaiters.push(resolve));
    },
    close: () => {
      for (const socket of open) socket.destroy();
      unclaimed = [];
      socketWaiters = [];
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

function listen(server: net.Server): Promise<number> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      if (address === null || typeof address === 'string') {
        reject(new Error('loopback-server: no TCP address'));
        return;
      }
      resolve(address.port);
    });
  });
}

/** An HTTP server (HTTPS when `tls` is given) on 127.0.0.1 that reads each body, records it, then calls `handler`. */
export async function startServer(
  handler: Handler,
  options: { tls?: TlsMaterial } = {},
): Promise<LoopbackServer> {
  const requests: RecordedRequest[] = [];
  let appliedWrites = 0;
  let requestWaiters: Array<(request: RecordedRequest) => void> = [];
  const onRequest = (req: http.IncomingMessage, res: http.ServerResponse): void => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const recorded: RecordedRequest = {
        method: req.method ?? '',
        url: req.url ?? '',
        headers: req.headers,
        body: Buffer.concat(chunks).toString('utf8'),
      };
      requests.push(recorded);
      const waiters = requestWaiters;
      requestWaiters = [];
      for (const wake of waiters) wake(recorded);
      handler({ req, res, body: recorded.body, markApplied: () => void appliedWrites++ });
    });
  };
  const server =
    options.tls === undefined
      ? http.createServer(onRequest)
      : https.createServer({ ...options.tls }, onRequest);
  const tracked = track(server);
  const port = await listen(server);
  return {
    ...trackedView(tracked),
    url: `${options.tls === undefined ? 'http' : 'https'}://127.0.0.1:${port}`,
    port,
    requests,
    get appliedWrites() {
      return appliedWrites;
    },
    nextRequest: () => new Promise<RecordedRequest>((resolve) => requestWaiters.push(resolve)),
  };
}

/** A raw TCP server: `onSocket` decides what the peer does (reset, hang, answer garbage...). */
export async function startRawServer(onSocket: (socket: net.Socket) => void): Promise<RawServer> {
  const server = net.createServer(onSocket);
  const tracked = track(server);
  const port = await listen(server);
  return { ...trackedView(tracked), port };
}

// Getters do not survive object spread: copy the tracked server's members by hand.
function trackedView(tracked: TrackedServer): TrackedServer {
  return {
    get openSockets() {
      return tracked.openSockets;
    },
    get sockets() {
      return tracked.sockets;
    },
    waitForNoSockets: tracked.waitForNoSockets,
    nextSocket: tracked.nextSocket,
    close: tracked.close,
  };
}

/** A port on 127.0.0.1 that was just listened on and closed: connecting to it is refused. */
export async function closedPort(): Promise<number> {
  const server = net.createServer();
  const port = await listen(server);
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/**
 * A self-signed certificate for `127.0.0.1` and `localhost`, made with the `openssl` CLI in a temp
 * directory that is removed again. EC keys keep it fast.
 */
export async function selfSignedCert(): Promise<TlsMaterial> {
  const dir = await mkdtemp(join(tmpdir(), 'failwise-tls-'));
  try {
    const keyPath = join(dir, 'key.pem');
    const certPath = join(dir, 'cert.pem');
    await execFileAsync('openssl', [
      'req',
      '-x509',
      '-newkey',
      'ec',
      '-pkeyopt',
      'ec_paramgen_curve:prime256v1',
      '-nodes',
      '-keyout',
      keyPath,
      '-out',
      certPath,
      '-days',
      '2',
      '-subj',
      '/CN=localhost',
      '-addext',
      'subjectAltName=DNS:localhost,IP:127.0.0.1',
    ]);
    return { key: await readFile(keyPath), cert: await readFile(certPath) };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

export interface Loopback {
  /** `startServer`, closed after the test. */
  serve(...args: Parameters<typeof startServer>): Promise<LoopbackServer>;
  /** `startRawServer`, closed after the test. */
  serveRaw(...args: Parameters<typeof startRawServer>): Promise<RawServer>;
  /** Calls the transport's `close()` after the test; returns it. */
  closeAfter<T extends Transport>(transport: T): T;
}

/**
 * Servers and transports that are closed after each test of the calling `describe`: the transports
 * first (so their pooled sockets are let go), then the servers, which destroy any socket left.
 */
export function useLoopback(): Loopback {
  const servers: Array<LoopbackServer | RawServer> = [];
  const transports: Transport[] = [];
  afterEach(async () => {
    for (const transport of transports.splice(0)) await transport.close?.();
    await Promise.all(servers.splice(0).map((server) => server.close()));
  });
  const keep = <S extends LoopbackServer | RawServer>(server: S): S => {
    servers.push(server);
    return server;
  };
  return {
    serve: async (...args) => keep(await startServer(...args)),
    serveRaw: async (...args) => keep(await startRawServer(...args)),
    closeAfter: (transport) => {
      transports.push(transport);
      return transport;
    },
  };
}
