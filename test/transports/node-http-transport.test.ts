/**
 * nodeHttpTransport against real servers on 127.0.0.1. What every transport must do is in the
 * shared contract (./transport-contract.ts), run here with all the checks this transport can meet:
 * exact phases and codes, its own connect timeout, and sockets it owns. This file keeps what is
 * specific to it: keep-alive agents and close(), the `lookup`, `clock` and `tls` options, and what
 * Node's http module refuses before sending. DNS failures come from an injected `lookup`, so no test
 * touches a network resolver. Each test also checks that the transport let go of what it held.
 */
import * as http from 'node:http';
import type { LookupFunction } from 'node:net';
import { describe, expect, it } from 'vitest';
import type { Clock } from '../../src/clock/clock.js';
import {
  nodeHttpTransport,
  type NodeHttpTransportOptions,
} from '../../src/transports/node-http-transport.js';
import type { Transport } from '../../src/transports/transport.js';
import { selfSignedCert, useLoopback } from '../helpers/loopback-server.js';
import {
  attempt,
  countingClock,
  expectError,
  expectRedacted,
  expectResponse,
  SECRET_QUERY,
} from '../helpers/transport-assertions.js';
import { describeTransportContract, NODE_SOCKET_CODES } from './transport-contract.js';

describeTransportContract('nodeHttpTransport', ({ clock }) => nodeHttpTransport({ clock }), {
  codes: {
    ...NODE_SOCKET_CODES,
    plainTextServer: 'EPROTO',
    closedBeforeResponse: 'ECONNRESET',
    bodyCut: 'ECONNRESET',
  },
  exactResults: true,
  connectTimeout: true,
  tlsResetPhase: 'tls',
  ownsConnections: true,
});

/** A clock whose timers run only when the test says so. */
function manualClock(): Clock & { pending(): number; fireAll(): void } {
  const timers = new Map<number, () => void>();
  let nextId = 0;
  return {
    now: () => 0,
    setTimeout(fn) {
      nextId += 1;
      timers.set(nextId, () => fn());
      return nextId;
    },
    clearTimeout(handle) {
      timers.delete(handle as number);
    },
    pending: () => timers.size,
    fireAll() {
      const due = [...timers.values()];
      timers.clear();
      for (const run of due) run();
    },
  };
}

/** `dns.lookup` failing the way getaddrinfo does for an unknown name, at once or (like the real one) later. */
function notFoundLookup(timing: 'sync' | 'async'): LookupFunction {
  return (hostname, _options, callback) => {
    const error: NodeJS.ErrnoException = Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), {
      code: 'ENOTFOUND',
      errno: -3008,
      syscall: 'getaddrinfo',
    });
    if (timing === 'sync') callback(error, '', 4);
    else setImmediate(() => callback(error, '', 4));
  };
}

/** `dns.lookup` answering 127.0.0.1 for every name, in both of its calling styles. */
const loopbackLookup: LookupFunction = (_hostname, options, callback) => {
  if (options.all === true) callback(null, [{ address: '127.0.0.1', family: 4 }]);
  else callback(null, '127.0.0.1', 4);
};

describe('nodeHttpTransport', { timeout: 5_000 }, () => {
  const { serve, serveRaw, closeAfter } = useLoopback();
  const transport = (options: NodeHttpTransportOptions = {}): Transport =>
    closeAfter(nodeHttpTransport(options));

  it('is named node:http', () => {
    expect(transport().name).toBe('node:http');
  });

  it('keeps the connection for the next attempt and closes it on close()', async () => {
    const server = await serve(({ res }) => res.end('ok'));
    const made = transport();
    expectResponse(await made.send(attempt(server.url)));
    expectResponse(await made.send(attempt(server.url)));
    expect(server.sockets).toHaveLength(1);
    await made.close?.();
    await server.waitForNoSockets();
  });

  it('opens a connection per attempt with keepAlive false', async () => {
    const server = await serve(({ res }) => res.end('ok'));
    const made = transport({ keepAlive: false });
    expectResponse(await made.send(attempt(server.url)));
    await server.waitForNoSockets();
    expectResponse(await made.send(attempt(server.url)));
    expect(server.sockets).toHaveLength(2);
  });

  describe('reset() (the network changed)', () => {
    it('destroys the pooled keep-alive socket, so the next attempt opens a new connection', async () => {
      const server = await serve(({ res }) => res.end('ok'));
      const made = transport();
      expectResponse(await made.send(attempt(server.url)));
      made.reset?.();
      await server.waitForNoSockets();
      expectResponse(await made.send(attempt(server.url)));
      expect(server.sockets).toHaveLength(2);
    });

    it('lets an attempt in flight finish on its socket, then destroys that socket instead of pooling it', async () => {
      let answer: (() => void) | undefined;
      // The write is answered when the test says; every other request at once.
      const server = await serve(({ req, res }) => {
        if (req.method === 'POST') answer = () => res.end('written');
        else res.end('ok');
      });
      const made = transport();
      const sending = made.send(attempt(server.url, { method: 'POST', body: 'order' }));
      await server.nextRequest();
      made.reset?.();
      answer?.();
      expect(await expectResponse(await sending).text()).toBe('written');
      await server.waitForNoSockets();
      expectResponse(await made.send(attempt(server.url)));
      expect(server.sockets).toHaveLength(2);
    });

    it('empties an app-given agent without destroying it', async () => {
      const server = await serve(({ res }) => res.end('ok'));
      const agent = new http.Agent({ keepAlive: true });
      const made = transport({ agents: { http: agent } });
      expectResponse(await made.send(attempt(server.url)));
      made.reset?.();
      await server.waitForNoSockets();
      expectResponse(await made.send(attempt(server.url)));
      // The agent still pools: a second attempt after the reset reuses the new connection.
      expectResponse(await made.send(attempt(server.url)));
      expect(server.sockets).toHaveLength(2);
      agent.destroy();
    });

    it('does nothing before the first attempt', async () => {
      const server = await serve(({ res }) => res.end('ok'));
      const made = transport();
      made.reset?.();
      expectResponse(await made.send(attempt(server.url)));
      expect(server.sockets).toHaveLength(1);
    });
  });

  it('resolves host names with the given lookup', async () => {
    const server = await serve(({ req, res }) => res.end(req.headers.host));
    const result = await transport({ lookup: loopbackLookup }).send(
      attempt(`http://api.test:${server.port}/`),
    );
    expect(await expectResponse(result).text()).toBe(`api.test:${server.port}`);
  });

  it.each([
    ['https', 'sync'],
    ['https', 'async'],
    ['http', 'sync'],
    ['http', 'async'],
  ] as const)(
    'reports dns with requestSent no when the lookup fails (%s, %s lookup)',
    async (scheme, timing) => {
      const clock = countingClock();
      const result = expectError(
        await transport({ lookup: notFoundLookup(timing), clock }).send(
          attempt(`${scheme}://api.test:8443/x${SECRET_QUERY}`),
        ),
      );
      expect(result).toEqual({
        kind: 'error',
        phase: 'dns',
        requestSent: 'no',
        code: 'ENOTFOUND',
        message: 'ENOTFOUND resolving api.test',
      });
      expect(clock.pending()).toBe(0);
    },
  );

  it('times the connect timeout on the injected clock', async () => {
    const server = await serveRaw((socket) => socket.resume());
    const clock = manualClock();
    const sending = transport({ clock }).send(
      attempt(`https://127.0.0.1:${server.port}/x`, { connectTimeoutMs: 60_000 }),
    );
    await server.nextSocket();
    expect(clock.pending()).toBe(1);
    clock.fireAll();
    expect(expectError(await sending)).toMatchObject({ phase: 'connect-timeout', requestSent: 'no' });
    await server.waitForNoSockets();
  });

  it('clears the connect timer once connected, so a slow response is not a connect-timeout', async () => {
    const clock = manualClock();
    let answer: (() => void) | undefined;
    const server = await serve(({ res }) => {
      answer = () => res.end('late');
    });
    const sending = transport({ clock }).send(attempt(server.url, { connectTimeoutMs: 60_000 }));
    await server.nextRequest();
    expect(clock.pending()).toBe(0);
    answer?.();
    expect(await expectResponse(await sending).text()).toBe('late');
  });

  it('trusts the certificate authorities given in tls.ca', async () => {
    const material = await selfSignedCert();
    const server = await serve(({ res }) => res.end('secure'), { tls: material });
    const result = await transport({ tls: { ca: material.cert } }).send(attempt(server.url));
    expect(await expectResponse(result).text()).toBe('secure');
  });

  it('reports an unsupported protocol without sending', async () => {
    const result = expectError(await transport().send(attempt('ftp://127.0.0.1/file')));
    expect(result).toMatchObject({
      phase: 'unknown',
      requestSent: 'no',
      message: 'node:http: unsupported protocol ftp:',
    });
  });

  describe('messages (rule 9)', () => {
    it('leave out a header value Node refuses', async () => {
      const server = await serve(({ res }) => res.end());
      const result = expectError(
        await transport().send(
          attempt(`${server.url}/x${SECRET_QUERY}`, { headers: { authorization: 'Bearer secret-header\n' } }),
        ),
      );
      expect(result).toMatchObject({ phase: 'unknown', requestSent: 'no', code: 'ERR_INVALID_CHAR' });
      expectRedacted(result.message);
      expect(server.sockets).toHaveLength(0);
    });
  });
});
