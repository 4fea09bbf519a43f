import * as http from 'node:http';
import type { AddressInfo } from 'node:net';

/** A write the origin received: its idempotency key and body. */
export interface ReceivedWrite {
  key: string | undefined;
  body: string;
}

export interface SwitchableOrigin {
  /** `http://127.0.0.1:<port>`, the same port whether it is up or down. */
  readonly url: string;
  /** Every POST it answered, in order. */
  readonly writes: ReceivedWrite[];
  /** Stops listening and drops every connection: a connection is refused, as from a host that is down. */
  down(): Promise<void>;
  /** Listens again on the same port. */
  up(): Promise<void>;
  /** Resolves once it has received `count` writes; rejects after `timeoutMs`. */
  waitForWrites(count: number, timeoutMs: number): Promise<void>;
  close(): Promise<void>;
}

/**
 * An API origin on 127.0.0.1 that a test takes down (its listening socket closed: connections are refused) and
 * brings back on the same port. It answers every POST 201 and records it, and allows any page origin (CORS), so
 * that a page or service worker on another port may call it.
 */
export async function switchableOrigin(): Promise<SwitchableOrigin> {
  const writes: ReceivedWrite[] = [];
  const waiters = new Set<() => void>();
  const server = http.createServer((req, res) => {
    const cors = {
      'access-control-allow-origin': '*',
      'access-control-allow-methods': 'POST',
      'access-control-allow-headers': 'content-type, idempotency-key',
    };
    if (req.method === 'OPTIONS') return void res.writeHead(204, cors).end();
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (chunk: string) => (body += chunk));
    req.on('end', () => {
      const key = req.headers['idempotency-key'];
      writes.push({ key: Array.isArray(key) ? key.join(',') : key, body });
      for (const wake of [...waiters]) wake();
      res.writeHead(201, { ...cors, 'content-type': 'application/json' }).end('{"ok":true}');
    });
  });
  let port = 0;
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
      if (!server.listening) return resolve();
      server.close(() => resolve());
      server.closeAllConnections();
    });
  await listen();
  return {
    url: `http://127.0.0.1:${port}`,
    writes,
    down: stop,
    up: listen,
    waitForWrites(count, timeoutMs) {
      return new Promise<void>((resolve, reject) => {
        const done = () => {
          if (writes.length < count) return;
          clearTimeout(timer);
          waiters.delete(done);
          resolve();
        };
        const timer = setTimeout(() => {
          waiters.delete(done);
          reject(new Error(`switchableOrigin: ${writes.length} of ${count} writes within ${timeoutMs} ms`));
        }, timeoutMs);
        waiters.add(done);
        done();
      });
    },
    close: stop,
  };
}
