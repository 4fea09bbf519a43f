// A body that streams is handed over when its headers arrive, flows with flat memory, and the
// attempt timeout applies to the wait for headers only. Real loopback servers, both built-in transports.
import * as http from 'node:http';
import type { Socket } from 'node:net';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { describe, expect, it } from 'vitest';
import { simulatedClock } from '../../src/clock/simulated-clock.js';
import { createFailoverClient } from '../../src/runtime/create-failover-client.js';
import { BUFFER_LIMIT_BYTES, bodyPlan } from '../../src/transports/buffered-response.js';
import { nodeHttpTransport } from '../../src/transports/node-http-transport.js';
import type { Transport } from '../../src/transports/transport.js';
import type { Clock } from '../../src/clock/clock.js';
import type { PolicyInput } from '../../src/policy/policy.js';
import type { DecisionEvent } from '../../src/index.js';
import { undiciFetchTransport } from '../../src/transports/undici-fetch-errors.js';
import { useLoopback } from '../helpers/loopback-server.js';
import { closed } from '../helpers/transport-assertions.js';

/**
 * Each is given the client's clock, which times a handed-over body's idle timeout. With `onHeaders`, it is told when
 * a response's headers have reached the transport (fetch resolved; the first bytes on node:http's socket, which its
 * parser reads in the same turn), so a test moves the clock only once the body is being read.
 */
const transports: [string, (clock: Clock, onHeaders?: () => void) => Transport][] = [
  [
    'fetchTransport',
    (clock, onHeaders) =>
      undiciFetchTransport({
        clock,
        ...(onHeaders && {
          fetch: (input, init) => fetch(input, init).then((response) => (onHeaders(), response)),
        }),
      }),
  ],
  [
    'nodeHttpTransport',
    (clock, onHeaders) =>
      nodeHttpTransport({ clock, ...(onHeaders && { agents: { http: watchingAgent(onHeaders) } }) }),
  ],
];

/** An http agent that calls `onFirstBytes` when a socket of its receives its first bytes. */
function watchingAgent(onFirstBytes: () => void): http.Agent {
  const agent = new http.Agent({ keepAlive: false });
  const connect = agent.createConnection.bind(agent);
  agent.createConnection = (options, callback) => {
    const socket = connect(options, callback);
    socket?.once('data', onFirstBytes);
    return socket;
  };
  return agent;
}

// A full garbage collection on demand, without starting the test process with --expose-gc.
setFlagsFromString('--expose-gc');
const collectGarbage = runInNewContext('gc') as () => void;

/** Reads from a body reader until `text` has come, or the body ends; what came. */
async function readUntil(reader: ReadableStreamDefaultReader<Uint8Array>, text: string): Promise<string> {
  const decoder = new TextDecoder();
  let seen = '';
  while (!seen.includes(text)) {
    const { value, done } = await reader.read();
    if (done) break;
    seen += decoder.decode(value, { stream: true });
  }
  return seen;
}

describe('bodyPlan: which bodies are read within the attempt and which are handed over as streams', () => {
  const headers = (entries: Record<string, string>) => new Headers(entries);
  it.each([
    [
      'server-sent events',
      'GET',
      200,
      { 'content-type': 'text/event-stream; charset=utf-8' },
      false,
      'stream',
    ],
    ['no Content-Length (chunked)', 'GET', 200, {}, false, 'read-up-to-cap'],
    [
      'a length over 1 MiB',
      'GET',
      200,
      { 'content-length': String(BUFFER_LIMIT_BYTES + 1) },
      false,
      'stream',
    ],
    ['a length of 1 MiB', 'GET', 200, { 'content-length': String(BUFFER_LIMIT_BYTES) }, false, 'read'],
    ['a short body', 'GET', 200, { 'content-length': '12' }, false, 'read'],
    ['an empty body', 'GET', 200, { 'content-length': '0' }, false, 'read'],
    ['a short body the request asks to stream', 'GET', 200, { 'content-length': '12' }, true, 'stream'],
    [
      'chunked JSON the request asks to stream',
      'GET',
      200,
      { 'content-type': 'application/json' },
      true,
      'stream',
    ],
    ['a 204 (no body)', 'GET', 204, {}, true, 'none'],
    ['a HEAD (no body)', 'HEAD', 200, {}, true, 'none'],
    ['a length that is not a number', 'GET', 200, { 'content-length': 'many' }, false, 'read-up-to-cap'],
  ])('%s', (_, method, status, entries, wanted, expected) => {
    expect(bodyPlan(method, status, headers(entries), wanted)).toBe(expected);
  });
  it('is 1 MiB', () => expect(BUFFER_LIMIT_BYTES).toBe(1_048_576));
});

describe.each(transports)('streaming through client.fetch over %s', (_, makeTransport) => {
  const loopback = useLoopback();

  /**
   * A client on a simulated clock (its timers fire only when the test moves it) of one loopback origin; `policy` is
   * laid over the test's own, and the decision events are kept. With `watchHeaders`, `headers` resolves once the
   * first response's headers reached the transport.
   */
  function clientOf(url: string, policy: PolicyInput = {}, watchHeaders = false) {
    const clock = simulatedClock();
    let headersCame!: () => void;
    const headers = new Promise<void>((resolve) => (headersCame = resolve));
    const transport = loopback.closeAfter(
      makeTransport(clock, watchHeaders ? () => headersCame() : undefined),
    );
    const events: DecisionEvent[] = [];
    const client = createFailoverClient({
      origins: [{ id: 'primary', url, allowInsecure: true }],
      clock,
      transport,
      // No wait between attempts: a retry goes out without the test moving the clock.
      policy: {
        timeouts: { attemptMs: 1_000 },
        budgetMs: 5_000,
        backoff: { initialMs: 0, maxMs: 0, jitter: 'none' },
        ...policy,
      },
      onEvent: (event) => events.push(event),
    });
    return { clock, client, events, headers };
  }

  it('hands over an event stream when its headers arrive; past the attempt timeout and the budget it still flows; the caller’s abort ends it', async () => {
    let stream: http.ServerResponse | undefined;
    let closed = false;
    const server = await loopback.serve(({ req, res }) => {
      stream = res;
      res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-store' });
      res.write('data: one\n\n');
      req.socket.once('close', () => (closed = true));
    });
    const { clock, client } = clientOf(server.url);
    const controller = new AbortController();
    const response = await client.fetch('/events', { signal: controller.signal });
    expect(response.status).toBe(200);
    const reader = response.body!.getReader();
    expect(await readUntil(reader, 'data: one')).toContain('data: one');

    // Far past attemptMs and budgetMs on the client's clock: nothing cuts a stream that has been handed over.
    await clock.increment(60_000);
    stream!.write('data: two\n\n');
    expect(await readUntil(reader, 'data: two')).toContain('data: two');

    controller.abort();
    await expect(reader.read()).rejects.toThrow();
    await server.waitForNoSockets();
    expect(closed).toBe(true);
    expect(server.requests).toHaveLength(1);
    await client.close();
  });

  it('passes a 50 MB download of unknown length through with memory that stays flat', async () => {
    const chunk = Buffer.alloc(64 * 1024, 'x');
    const total = 50 * 1024 * 1024;
    const server = await loopback.serve(({ res }) => {
      res.writeHead(200, { 'content-type': 'application/octet-stream' }); // no Content-Length: chunked
      let sent = 0;
      const pump = (): void => {
        while (sent < total) {
          sent += chunk.length;
          if (!res.write(chunk)) return void res.once('drain', pump);
        }
        res.end();
      };
      pump();
    });
    const { client } = clientOf(server.url);
    // What is still reachable, not garbage waiting for a collection: measured after a full gc.
    const retained = () => {
      collectGarbage();
      const usage = process.memoryUsage();
      return usage.heapUsed + usage.arrayBuffers;
    };
    const before = retained();
    let peak = 0;
    const response = await client.fetch('/download');
    const reader = response.body!.getReader();
    let received = 0;
    for (let reads = 1; ; reads++) {
      const { value, done } = await reader.read();
      if (done) break;
      received += value.byteLength;
      if (reads % 50 === 0) peak = Math.max(peak, retained() - before);
    }
    expect(received).toBe(total);
    // Held whole, the body alone would be 50 MB; streamed, what the pipes buffer ahead of the reader (about
    // 10 MB in undici's, seen; under 1 MB in node:http's).
    expect(peak).toBeLessThan(16 * 1024 * 1024);
    await client.close();
    // 16 full collections with a 50 MB stream in flight: seconds on a quiet machine, over 20 on a loaded one.
  }, 90_000);

  it('hands a short body over before it is complete when the request asks (`stream: true`)', async () => {
    let finish: (() => void) | undefined;
    const server = await loopback.serve(({ res }) => {
      res.writeHead(200, { 'content-length': '10', 'content-type': 'text/plain' });
      res.write('01234');
      finish = () => res.end('56789');
    });
    const { client } = clientOf(server.url);
    const response = await client.fetch('/part', { stream: true });
    // The server has sent only half: the response came with its headers.
    finish!();
    expect(await response.text()).toBe('0123456789');
    await client.close();
  });
  it('reads a chunked body within the attempt: cut mid-way, the attempt fails connection-lost and is retried, and the app gets the whole body', async () => {
    const server = await loopback.serve(({ req, res }) => {
      res.writeHead(200, { 'content-type': 'application/json' }); // no Content-Length: chunked
      if (server.requests.length === 1) res.write('{"items":[1,2,', () => req.socket.destroy());
      else res.end('{"items":[1,2,3]}');
    });
    const { client, events } = clientOf(server.url);
    const outcome = await client.request({ path: '/items' });
    expect(outcome).toMatchObject({ status: 'succeeded', attempts: 2 });
    expect(events.filter((event) => event.type === 'attempt-failed')).toEqual([
      expect.objectContaining({ attempt: 1, failureClass: 'connection-lost' }),
    ]);
    expect(await (outcome as { response: Response }).response.json()).toEqual({ items: [1, 2, 3] });
    expect(server.requests).toHaveLength(2);
    await client.close();
  });

  /**
   * A server whose answer trickles ('x' every 10 ms, real time) until its socket closes; `writing` resolves with that
   * socket once it began.
   */
  async function trickling(headers: http.OutgoingHttpHeaders) {
    let began!: (socket: Socket) => void;
    const writing = new Promise<Socket>((resolve) => (began = resolve));
    const server = await loopback.serve(({ req, res }) => {
      res.writeHead(200, headers);
      let writes = 0;
      // Bounded: 1000 writes (10 s) at most, whatever happens to the client.
      const drip = setInterval(() => {
        if (++writes > 1_000 || res.destroyed) return clearInterval(drip);
        res.write('x');
        began(req.socket);
      }, 10);
      req.socket.once('close', () => clearInterval(drip));
    });
    return { server, writing };
  }

  it.each([
    ['chunked', { 'content-type': 'text/plain' }],
    ['with a Content-Length', { 'content-type': 'text/plain', 'content-length': '100000' }],
  ])(
    'ends a request whose body keeps trickling (%s) at its deadline (deadlineMs 500): failed, the connection closed',
    async (_, answerHeaders) => {
      const { server, writing } = await trickling(answerHeaders);
      const { clock, client, headers } = clientOf(server.url, {}, true);
      const pending = client.request({ path: '/slow', deadlineMs: 500 });
      const socket = await writing;
      // The response's headers are in: the attempt is reading its body when the deadline comes.
      await headers;
      await clock.increment(500);
      const outcome = await pending;
      expect(outcome).toMatchObject({
        status: 'failed',
        reason: 'budget-exhausted',
        attempts: 1,
        failure: { class: 'response-timeout' },
      });
      // The transport let go of the connection: the trickle stops.
      await closed(socket);
      await client.close();
    },
  );

  it('cuts a chunked body that stalls mid-way at the attempt timeout (attemptMs) and retries', async () => {
    const server = await loopback.serve(({ res }) => {
      res.writeHead(200, { 'content-type': 'text/plain' }); // chunked
      if (server.requests.length > 1) return void res.end('whole');
      res.write('x'); // and no more: the first answer never ends
    });
    const { clock, client, events, headers } = clientOf(server.url, {}, true);
    const pending = client.request({ path: '/slow' });
    // The response's headers are in: the attempt is reading its body when its timeout comes.
    await headers;
    await clock.increment(1_000);
    const outcome = await pending;
    expect(outcome).toMatchObject({ status: 'succeeded', attempts: 2 });
    expect(events.filter((event) => event.type === 'attempt-failed')).toEqual([
      expect.objectContaining({ attempt: 1, failureClass: 'response-timeout', elapsedMs: 1_000 }),
    ]);
    expect(await (outcome as { response: Response }).response.text()).toBe('whole');
    await client.close();
  });

  /** 40 chunks of 64 KiB (2.5 MiB), chunk k filled with the byte k: a body where a lost or repeated chunk shows. */
  const bigChunks = Array.from({ length: 40 }, (_, k) => Buffer.alloc(64 * 1024, k));

  it('hands over a body of unknown length once it goes past 1 MiB: the bytes read within the attempt first, none lost', async () => {
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    const server = await loopback.serve(({ res }) => {
      res.writeHead(200, { 'content-type': 'application/octet-stream' }); // chunked
      // 1.5 MiB, then nothing until the test has its response: the attempt cannot have waited for the end.
      for (const chunk of bigChunks.slice(0, 24)) res.write(chunk);
      void released.then(() => {
        for (const chunk of bigChunks.slice(24)) res.write(chunk);
        res.end();
      });
    });
    const { client } = clientOf(server.url);
    const response = await client.fetch('/download');
    release();
    const body = Buffer.from(await response.arrayBuffer());
    expect(body.length).toBe(40 * 64 * 1024);
    expect(body.equals(Buffer.concat(bigChunks))).toBe(true);
    await client.close();
  });

  /** Reads from a body reader until `bytes` bytes have come. */
  async function readBytes(reader: ReadableStreamDefaultReader<Uint8Array>, bytes: number): Promise<number> {
    let received = 0;
    while (received < bytes) {
      const { value, done } = await reader.read();
      if (done) break;
      received += value.byteLength;
    }
    return received;
  }

  it('errors a handed-over event stream that goes quiet for timeouts.idleMs (not a millisecond earlier) and closes its connection', async () => {
    let stream: http.ServerResponse | undefined;
    const server = await loopback.serve(({ res }) => {
      stream = res;
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write('data: one\n\n');
    });
    const { clock, client } = clientOf(server.url, { timeouts: { attemptMs: 1_000, idleMs: 5_000 } });
    const response = await client.fetch('/events');
    const reader = response.body!.getReader();
    expect(await readUntil(reader, 'data: one')).toContain('data: one');
    // A chunk within idleMs of the app asking starts the wait again.
    const next = reader.read();
    await clock.increment(4_999);
    stream!.write('data: two\n\n');
    expect(new TextDecoder().decode((await next).value)).toContain('data: two');
    let ended: unknown;
    const quiet = reader.read().then(
      () => (ended = 'a chunk'),
      (error: unknown) => (ended = error),
    );
    await clock.increment(4_999);
    expect(ended).toBeUndefined();
    await clock.increment(1);
    await quiet;
    expect(ended).toMatchObject({ name: 'TimeoutError' });
    expect((ended as Error).message).toMatch(
      /^no data from 127\.0\.0\.1:\d+ for 5000 ms while reading the response body/,
    );
    await closed(stream!.socket!);
    expect(clock.pending()).toBe(0);
    await client.close();
  });

  it.each([
    ['`stream: true` on a chunked JSON body', { stream: true }, 'application/json', 1],
    ['a body of unknown length past 1 MiB', {}, 'application/octet-stream', 24],
  ])(
    'makes text() reject with a TimeoutError when %s goes quiet for timeouts.idleMs',
    async (_, init, type, chunks) => {
      let socket: Socket | undefined;
      const server = await loopback.serve(({ req, res }) => {
        socket = req.socket;
        res.writeHead(200, { 'content-type': type }); // chunked, and never ended
        for (const chunk of bigChunks.slice(0, chunks)) res.write(chunk);
      });
      const { clock, client } = clientOf(server.url, { timeouts: { attemptMs: 1_000, idleMs: 5_000 } });
      const response = await client.fetch('/quiet', init);
      const [forText, forBytes] = response.body!.tee();
      // Everything the server wrote has come before the clock moves, so the quiet starts at the app's last wait.
      expect(await readBytes(forBytes.getReader(), chunks * 64 * 1024)).toBe(chunks * 64 * 1024);
      const text = new Response(forText).text();
      text.catch(() => undefined);
      await clock.increment(5_000);
      await expect(text).rejects.toMatchObject({ name: 'TimeoutError' });
      await closed(socket!);
      await client.close();
    },
  );
});
