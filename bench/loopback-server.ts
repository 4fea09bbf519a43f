/**
 * The loopback origin of sections 4 and 5, run in a child process (`startLoopbackServer`) so that it
 * has a core of its own and its work is not timed as the client's. It listens on 127.0.0.1, port 0,
 * and answers 204, except a request whose query has `fail=<id>`: the first request with that id gets a
 * 503, every later one a 204; and a request for `/json`, which gets `JSON_BODY` (200, with its length). It tells its port over IPC, counts what it answered, and closes (every
 * connection with it) when told to or when its parent goes away.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';

/**
 * What `/json` answers: a list of 20 items, about 1 KB, the size of an ordinary API answer. A 204 has no body to
 * read, so it leaves out what reading one costs a client.
 */
export const JSON_BODY = JSON.stringify({
  items: Array.from({ length: 20 }, (_, i) => ({
    id: i,
    name: `item ${i}`,
    price: i * 3.5,
    inStock: i % 3 !== 0,
  })),
});

/** Whether `value` is what `/json` answers, parsed: the check on every JSON round's answers. */
const EXPECTED_ITEMS = (JSON.parse(JSON_BODY) as { items: unknown[] }).items.length;
export const isJsonAnswer = (value: unknown): boolean =>
  (value as { items?: unknown[] } | null)?.items?.length === EXPECTED_ITEMS;

export interface ServerCounts {
  requests: number;
  unavailable: number;
}

type Message =
  { type: 'listening'; port: number } | ({ type: 'counts' } & ServerCounts) | { type: 'idle-closed' };

export interface LoopbackServer {
  port: number;
  /** What the server answered since the last call, then zero. */
  counts(): Promise<ServerCounts>;
  /**
   * Closes the server's idle keep-alive connections, then waits a moment for this process to see them
   * closed: the next round then opens fresh connections rather than meet one the server's keep-alive
   * timeout (5 s) is closing just then.
   */
  closeIdle(): Promise<void>;
  close(): Promise<void>;
}

/** Starts the server in a child process; rejects if it is not listening within 10 s. */
export async function startLoopbackServer(): Promise<LoopbackServer> {
  // The child runs with this process's flags (`--import tsx`), so it can run this file as it is.
  const child: ChildProcess = fork(fileURLToPath(import.meta.url), ['--serve'], { stdio: 'inherit' });
  const next = <T extends Message['type']>(type: T) =>
    new Promise<Extract<Message, { type: T }>>((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new Error(`bench: loopback server sent no ${type} in 10 s`)),
        10_000,
      );
      const onMessage = (message: Message) => {
        if (message.type !== type) return;
        clearTimeout(timer);
        child.off('message', onMessage);
        resolve(message as Extract<Message, { type: T }>);
      };
      child.on('message', onMessage);
    });
  const { port } = await next('listening');
  return {
    port,
    async counts() {
      const reply = next('counts');
      child.send({ type: 'counts' });
      const { requests, unavailable } = await reply;
      return { requests, unavailable };
    },
    async closeIdle() {
      const reply = next('idle-closed');
      child.send({ type: 'close-idle' });
      await reply;
      await new Promise((resolve) => setTimeout(resolve, 200));
    },
    async close() {
      if (child.exitCode !== null) return;
      const exited = once(child, 'exit');
      child.send({ type: 'close' });
      await exited;
    },
  };
}

/** `JSON_BODY`'s length in bytes: its `Content-Length`. */
export const JSON_BYTES = Buffer.byteLength(JSON_BODY);

function serve(): void {
  const failedOnce = new Set<string>();
  let counts: ServerCounts = { requests: 0, unavailable: 0 };
  const server = createServer((request, response) => {
    counts.requests++;
    if (request.url === '/json') {
      response
        .writeHead(200, { 'content-type': 'application/json', 'content-length': JSON_BYTES })
        .end(JSON_BODY);
      return;
    }
    const query = request.url?.split('?')[1];
    const id = query && new URLSearchParams(query).get('fail');
    if (id && !failedOnce.has(id)) {
      failedOnce.add(id);
      counts.unavailable++;
      response.writeHead(503).end();
    } else {
      if (id) failedOnce.delete(id);
      response.writeHead(204).end();
    }
  });
  const close = () => {
    process.off('message', onMessage);
    server.close(() => process.disconnect?.());
    server.closeAllConnections();
  };
  const onMessage = (message: { type: string }) => {
    if (message.type === 'close') close();
    else if (message.type === 'close-idle') {
      server.closeIdleConnections();
      process.send?.({ type: 'idle-closed' });
    } else if (message.type === 'counts') {
      process.send?.({ type: 'counts', ...counts });
      counts = { requests: 0, unavailable: 0 };
    }
  };
  process.on('message', onMessage);
  process.once('disconnect', () => {
    server.close();
    server.closeAllConnections();
  });
  // The kernel caps the backlog at net.core.somaxconn (4096 here); section 5 opens 3,000 connections at once.
  server.listen({ host: '127.0.0.1', port: 0, backlog: 4096 }, () => {
    process.send?.({ type: 'listening', port: (server.address() as AddressInfo).port });
  });
}

if (process.argv.includes('--serve')) serve();
