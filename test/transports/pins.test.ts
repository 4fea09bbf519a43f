/**
 * Certificate pins (`request.pins`, from `origins[].pins`) against real TLS servers on 127.0.0.1 whose
 * certificates the test makes with openssl (test/helpers/test-pki.ts): a CA and a leaf for 127.0.0.1
 * signed by it, plus an unrelated key. Every pin is computed by openssl, not by failwise. What the
 * servers RECEIVED is asserted: a refused pin must leave the server without a request.
 */
import * as https from 'node:https';
import type * as net from 'node:net';
import * as tls from 'node:tls';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PIN_MISMATCH_CODE, PIN_UNVERIFIABLE_CODE } from '../../src/transports/certificate-pins.js';
import { fetchTransport } from '../../src/transports/fetch-transport.js';
import { isTlsCause } from '../../src/transports/network-error.js';
import {
  nodeHttpTransport,
  type NodeHttpTransportOptions,
} from '../../src/transports/node-http-transport.js';
import type { Transport } from '../../src/transports/transport.js';
import { useLoopback, type LoopbackServer } from '../helpers/loopback-server.js';
import { makeTestPki, type TestPki } from '../helpers/test-pki.js';
import { attempt, expectError, expectResponse } from '../helpers/transport-assertions.js';

describe('nodeHttpTransport certificate pins', { timeout: 10_000 }, () => {
  const { serve, closeAfter } = useLoopback();
  let pki: TestPki;
  beforeAll(async () => {
    pki = await makeTestPki();
  });
  const transport = (options: NodeHttpTransportOptions = {}): Transport =>
    closeAfter(nodeHttpTransport({ tls: { ca: pki.caCert }, ...options }));
  const pinnedServer = (): Promise<LoopbackServer> =>
    serve(({ res, body }) => res.end(`got ${body}`), { tls: pki.leaf });
  const post = (url: string, pins: readonly string[]) =>
    attempt(`${url}/orders`, { method: 'POST', body: 'order-1', pins });

  /** The result of an attempt refused by its pins: nothing sent, and the server saw no request. */
  async function expectPinMismatch(server: LoopbackServer, made: Transport, pins: readonly string[]) {
    const result = expectError(await made.send(post(server.url, pins)));
    expect(result).toEqual({
      kind: 'error',
      phase: 'tls',
      requestSent: 'no',
      code: 'CERT_PIN_MISMATCH',
      message: `CERT_PIN_MISMATCH: no certificate in the chain of 127.0.0.1:${server.port} matches the origin's pins`,
    });
  }

  it('says it checks pins', () => {
    expect(transport().checksPins).toBe(true);
  });

  it('classes its pin codes as TLS failures wherever they surface', () => {
    expect(PIN_MISMATCH_CODE).toBe('CERT_PIN_MISMATCH');
    expect(PIN_UNVERIFIABLE_CODE).toBe('CERT_PIN_UNVERIFIABLE');
    expect(isTlsCause({ code: PIN_MISMATCH_CODE })).toBe(true);
    expect(isTlsCause({ code: PIN_UNVERIFIABLE_CODE })).toBe(true);
  });

  it("sends over a connection whose leaf certificate's key matches a pin", async () => {
    const server = await pinnedServer();
    const result = await transport().send(post(server.url, [pki.pins.leaf]));
    expect(await expectResponse(result).text()).toBe('got order-1');
  });

  it('matches a pin of the CA that signed the leaf, as OkHttp matches any certificate of the chain', async () => {
    const server = await pinnedServer();
    const result = await transport().send(post(server.url, [pki.pins.ca]));
    expect(await expectResponse(result).text()).toBe('got order-1');
  });

  it('matches when any one of several pins does (a backup pin for rotation)', async () => {
    const server = await pinnedServer();
    const result = await transport().send(post(server.url, [pki.pins.unrelated, pki.pins.leaf]));
    expect(expectResponse(result).status).toBe(200);
  });

  it('fails with phase tls and sends nothing when no certificate of the chain matches', async () => {
    const server = await pinnedServer();
    await expectPinMismatch(server, transport(), [pki.pins.unrelated]);
    await server.waitForNoSockets();
    expect(server.requests).toEqual([]);
    expect(server.sockets).toHaveLength(1);
  });

  it('sends not one byte of the request over a connection whose pins do not match', async () => {
    // A bare TLS server that counts the decrypted bytes it receives and never answers.
    let received = 0;
    const closed: Array<Promise<void>> = [];
    const server = tls.createServer(pki.leaf, (socket) => {
      socket.on('data', (chunk: Buffer) => (received += chunk.length));
    });
    server.on('tlsClientError', () => undefined);
    // The TCP connection, which may close before the server's side of the handshake completes.
    server.on('connection', (raw: net.Socket) => {
      raw.on('error', () => undefined);
      closed.push(new Promise((resolve) => raw.once('close', () => resolve())));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const { port } = server.address() as { port: number };
      const made = transport();
      const mismatch = expectError(await made.send(post(`https://127.0.0.1:${port}`, [pki.pins.unrelated])));
      expect(mismatch).toMatchObject({ phase: 'tls', requestSent: 'no', code: 'CERT_PIN_MISMATCH' });
      await Promise.all(closed);
      expect(closed).toHaveLength(1);
      expect(received).toBe(0);
      // The same request with a matching pin does reach this server (then the test gives up waiting).
      const controller = new AbortController();
      const sending = made.send({
        ...post(`https://127.0.0.1:${port}`, [pki.pins.leaf]),
        signal: controller.signal,
      });
      while (received === 0) await new Promise((resolve) => setImmediate(resolve));
      controller.abort();
      expect(expectError(await sending)).toMatchObject({ message: 'aborted' });
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });

  it('keeps the CA check: a matching pin does not make an untrusted certificate acceptable', async () => {
    const server = await pinnedServer();
    const result = expectError(await transport({ tls: {} }).send(post(server.url, [pki.pins.leaf])));
    expect(result).toMatchObject({
      phase: 'tls',
      requestSent: 'no',
      code: 'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
    });
    expect(server.requests).toEqual([]);
  });

  it('checks pins with rejectUnauthorized false too, where Node skips checkServerIdentity', async () => {
    const server = await pinnedServer();
    const made = transport({ tls: { rejectUnauthorized: false } });
    await expectPinMismatch(server, made, [pki.pins.unrelated]);
    expect(server.requests).toEqual([]);
    const result = await made.send(post(server.url, [pki.pins.leaf]));
    expect(await expectResponse(result).text()).toBe('got order-1');
  });

  it('reuses a checked connection for the same pins and checks it again for other pins', async () => {
    const server = await pinnedServer();
    const made = transport();
    expectResponse(await made.send(post(server.url, [pki.pins.leaf])));
    expectResponse(await made.send(post(server.url, [pki.pins.ca, pki.pins.leaf])));
    expect(server.sockets).toHaveLength(1);
    await expectPinMismatch(server, made, [pki.pins.unrelated]);
    expect(server.requests).toHaveLength(2);
  });

  it('does not let an unpinned request open the connection a pinned one then uses', async () => {
    const server = await pinnedServer();
    const made = transport();
    expectResponse(await made.send(attempt(server.url)));
    await expectPinMismatch(server, made, [pki.pins.unrelated]);
    expect(server.requests).toHaveLength(1);
  });

  describe('with an https agent of the app', () => {
    let agents: https.Agent[] = [];
    afterAll(() => {
      for (const agent of agents) agent.destroy();
      agents = [];
    });
    const agent = (options: https.AgentOptions) => {
      const made = new https.Agent(options);
      agents.push(made);
      return made;
    };

    it('refuses a resumed TLS session, which shows no certificate to check (CERT_PIN_UNVERIFIABLE)', async () => {
      const server = await pinnedServer();
      const made = transport({ agents: { https: agent({ keepAlive: false }) } });
      expectResponse(await made.send(post(server.url, [pki.pins.leaf])));
      await server.waitForNoSockets();
      const result = expectError(await made.send(post(server.url, [pki.pins.leaf])));
      expect(result).toEqual({
        kind: 'error',
        phase: 'tls',
        requestSent: 'no',
        code: 'CERT_PIN_UNVERIFIABLE',
        message: `CERT_PIN_UNVERIFIABLE: the TLS session with 127.0.0.1:${server.port} was resumed and shows no certificates to check the pins against`,
      });
      expect(server.requests).toHaveLength(1);
    });

    it('checks every connection of an agent made with maxCachedSessions: 0', async () => {
      const server = await pinnedServer();
      const made = transport({ agents: { https: agent({ keepAlive: false, maxCachedSessions: 0 }) } });
      expectResponse(await made.send(post(server.url, [pki.pins.leaf])));
      await server.waitForNoSockets();
      expectResponse(await made.send(post(server.url, [pki.pins.leaf])));
      await expectPinMismatch(server, made, [pki.pins.unrelated]);
      expect(server.requests).toHaveLength(2);
      expect(server.sockets).toHaveLength(3);
    });
  });

  it('refuses pins on an http: URL without sending: plain http has no certificate', async () => {
    const server = await serve(({ res }) => res.end('plain'));
    const result = expectError(await transport().send(post(server.url, [pki.pins.leaf])));
    expect(result).toEqual({
      kind: 'error',
      phase: 'unknown',
      requestSent: 'no',
      message: 'node:http: certificate pins need an https: URL',
    });
    expect(server.sockets).toHaveLength(0);
  });
});

describe('fetchTransport certificate pins', () => {
  it('does not say it checks pins, and sends nothing for a request with pins', async () => {
    let calls = 0;
    const made = fetchTransport({
      fetch: () => {
        calls += 1;
        return Promise.resolve(new Response('unpinned'));
      },
    });
    expect(made.checksPins).not.toBe(true);
    const pin = `sha256/${Buffer.alloc(32, 7).toString('base64')}`;
    const result = expectError(await made.send(attempt('https://api.example.com/x', { pins: [pin] })));
    expect(result).toEqual({
      kind: 'error',
      phase: 'unknown',
      requestSent: 'no',
      message: 'fetch: cannot check certificate pins; use nodeHttpTransport',
    });
    expect(calls).toBe(0);
    expectResponse(await made.send(attempt('https://api.example.com/x')));
    expect(calls).toBe(1);
  });
});
