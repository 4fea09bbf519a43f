/**
 * A real HTTP origin on 127.0.0.1 with injected faults, for the drill. Each request is read whole, recorded
 * (on the drill's simulated clock) and answered as the scenario's `behave` says: a status, a hang, or a
 * dropped connection, applying the write first or not. Writes are deduplicated by Idempotency-Key, as the
 * IETF draft describes, so a replay with the same key is answered without being applied twice.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { isSafeMethod } from '../policy/methods.js';
import type { OriginConfig } from '../runtime/client-options.js';

/** A request as the origin received it. */
export interface ServedRequest {
  origin: string;
  /** 1 for the first request this origin received. */
  n: number;
  at: number;
  method: string;
  path: string;
  idempotencyKey: string | undefined;
  authorization: string | undefined;
  body: string;
  /** A probe is `HEAD /` (the default probe). */
  probe: boolean;
  /** 1 for the first connection this origin accepted: which connection carried the request. */
  connection: number;
  /** What the origin did, once it decided. */
  reply: string;
  applied: boolean;
}

/** The client's view of a drill origin: its URL, with `http:` allowed (loopback only). */
export function originConfig(
  origin: Pick<DrillOrigin, 'id' | 'url'>,
  extra: Omit<OriginConfig, 'id' | 'url'> = {},
): OriginConfig {
  return { id: origin.id, url: origin.url, allowInsecure: true, ...extra };
}

export type Reply =
  | { kind: 'respond'; status: number; headers?: Record<string, string>; body?: string; apply?: boolean }
  /** Reads the request and never answers; the client's attempt timeout ends it. */
  | { kind: 'hang'; apply?: boolean }
  /** Reads the request and closes the connection without a response. */
  | { kind: 'drop'; apply?: boolean };

export type Behaviour = (request: ServedRequest) => Reply;

export const reply = {
  ok: (status = 200): Reply => ({ kind: 'respond', status }),
  status: (status: number, options: { retryAfter?: string | undefined } = {}): Reply => ({
    kind: 'respond',
    status,
    ...(options.retryAfter === undefined ? {} : { headers: { 'retry-after': options.retryAfter } }),
  }),
  hang: (options: { apply?: boolean } = {}): Reply => ({ kind: 'hang', ...options }),
  drop: (options: { apply?: boolean } = {}): Reply => ({ kind: 'drop', ...options }),
};

/** Always answers 200 (201 for a write), applying writes. */
export const healthy: Behaviour = (request) => reply.ok(isSafeMethod(request.method) ? 200 : 201);

export interface DrillOrigin {
  id: string;
  url: string;
  port: number;
  /** What the origin does with the next request; a scenario swaps it to make the origin fail or recover. */
  behave: Behaviour;
  readonly served: readonly ServedRequest[];
  readonly writesApplied: number;
  /** Requests read and deliberately left unanswered (`hang`), not yet closed by the client. */
  readonly held: number;
  /**
   * Answers the hung request number `n` now with `status` (a slow server that does answer in the end); false
   * when that request is not hung or its client let go of it.
   */
  answer(n: number, status: number): boolean;
  /** Stops accepting connections: later connections are refused, as when the process died. */
  stop(): Promise<void>;
  /** Listens again on the same port. */
  restart(): Promise<void>;
  close(): Promise<void>;
}

const header = (req: IncomingMessage, name: string) => {
  const value = req.headers[name];
  return Array.isArray(value) ? value.join(', ') : value;
};

export async function startDrillOrigin(
  id: string,
  /** The drill's simulated time, for `ServedRequest.at`. */
  now: () => number,
  options: { behave?: Behaviour; idempotencyHeader?: string } = {},
): Promise<DrillOrigin> {
  const keyHeader = (options.idempotencyHeader ?? 'idempotency-key').toLowerCase();
  const served: ServedRequest[] = [];
  const appliedKeys = new Set<string>();
  const sockets = new Set<Socket>();
  const connectionOf = new WeakMap<Socket, number>();
  const hung = new Map<number, ServerResponse>();
  let connections = 0;
  let writesApplied = 0;
  let held = 0;
  let port = 0;

  let behave = options.behave ?? healthy;
  const handle = (req: IncomingMessage, res: ServerResponse, body: string) => {
    const path = req.url ?? '/';
    const method = req.method ?? 'GET';
    const request: ServedRequest = {
      origin: id,
      n: served.length + 1,
      at: now(),
      method,
      path,
      idempotencyKey: header(req, keyHeader),
      authorization: header(req, 'authorization'),
      body,
      probe: method === 'HEAD' && path === '/',
      connection: connectionOf.get(req.socket) ?? 0,
      reply: '',
      applied: false,
    };
    served.push(request);
    const decided = behave(request);
    const write = !isSafeMethod(method);
    const apply = decided.apply ?? (decided.kind === 'respond' && decided.status < 300);
    if (write && apply) {
      const key = request.idempotencyKey;
      if (key === undefined || !appliedKeys.has(key)) {
        if (key !== undefined) appliedKeys.add(key);
        writesApplied += 1;
        request.applied = true;
      }
    }
    const applied = request.applied ? ' applied' : '';
    switch (decided.kind) {
      case 'hang':
        request.reply = `hang${applied}`;
        held += 1;
        hung.set(request.n, res);
        res.on('close', () => {
          held -= 1;
          hung.delete(request.n);
        });
        return;
      case 'drop':
        request.reply = `drop${applied}`;
        req.socket.destroy();
        return;
      case 'respond': {
        const retryAfter = decided.headers?.['retry-after'];
        request.reply = `${decided.status}${retryAfter === undefined ? '' : ` retry-after ${retryAfter}`}${applied}`;
        res.writeHead(decided.status, { 'content-type': 'application/json', ...decided.headers });
        res.end(decided.body ?? JSON.stringify({ origin: id, n: request.n }));
      }
    }
  };

  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => handle(req, res, Buffer.concat(chunks).toString()));
  });
  server.on('connection', (socket: Socket) => {
    connections += 1;
    connectionOf.set(socket, connections);
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  const listen = () =>
    new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, '127.0.0.1', () => {
        server.off('error', reject);
        port = (server.address() as AddressInfo).port;
        resolve();
      });
    });
  const stop = () =>
    new Promise<void>((resolve) => {
      for (const socket of sockets) socket.destroy();
      if (!server.listening) return resolve();
      server.close(() => resolve());
    });
  await listen();

  return {
    id,
    url: `http://127.0.0.1:${port}`,
    port,
    get behave() {
      return behave;
    },
    set behave(next: Behaviour) {
      behave = next;
    },
    get served() {
      return served;
    },
    get writesApplied() {
      return writesApplied;
    },
    get held() {
      return held;
    },
    answer(n, status) {
      const res = hung.get(n);
      const request = served[n - 1];
      if (res === undefined || request === undefined || res.writableEnded || res.destroyed) return false;
      request.reply = `${request.reply}, then ${status}`;
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ origin: id, n }));
      return true;
    },
    stop,
    restart: listen,
    close: stop,
  };
}
