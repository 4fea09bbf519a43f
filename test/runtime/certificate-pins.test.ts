/**
 * `origins[].pins` at the client (docs/transports.md, "Certificate pins"): what createFailoverClient refuses, and a
 * pin mismatch on the primary failing over at once, end to end, against real TLS servers on 127.0.0.1
 * whose certificates the test makes with openssl (test/helpers/test-pki.ts). Time is a simulated clock,
 * moved only while nothing is on the wire. test/transports/pins.test.ts covers the transport itself.
 */
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  createFailoverClient,
  fetchTransport,
  PolicyError,
  simulatedClock,
  type DecisionEvent,
  type FailoverClient,
  type OriginConfig,
  type Outcome,
  type Transport,
} from 'failwise';
import { nodeHttpTransport } from 'failwise/node';
import { useLoopback, type LoopbackServer } from '../helpers/loopback-server.js';
import { makeTestPki, type TestPki } from '../helpers/test-pki.js';

let pki: TestPki;
beforeAll(async () => {
  pki = await makeTestPki();
});

/** A well-formed pin that no key here has. */
const SOME_PIN = `sha256/${Buffer.alloc(32, 1).toString('base64')}`;
const OTHER_PIN = `sha256/${Buffer.alloc(32, 2).toString('base64')}`;

/** The lines of the PolicyError `make` throws. */
function policyErrorLines(make: () => unknown): string[] {
  try {
    make();
  } catch (error) {
    expect(error).toBeInstanceOf(PolicyError);
    return (error as Error).message.split('\n');
  }
  throw new Error('expected createFailoverClient to throw');
}

describe('createFailoverClient with origins[].pins', () => {
  const transport = nodeHttpTransport();
  const make = (origins: readonly OriginConfig[], options: { transport?: Transport } = { transport }) =>
    createFailoverClient({ origins, ...options });

  it('refuses a client where some origins have pins and others do not, naming those without', () => {
    const lines = policyErrorLines(() =>
      make([
        { id: 'primary', url: 'https://api.example.test', pins: [SOME_PIN] },
        { id: 'backup', url: 'https://backup.example.test' },
        { id: 'replica', url: 'https://replica.example.test', accepts: 'reads' },
      ]),
    );
    expect(lines).toEqual([
      'origins[1].pins: origin "backup" has no pins while "primary" has: every origin needs pins, or failing over to it would be an outage',
      'origins[2].pins: origin "replica" has no pins while "primary" has: every origin needs pins, or failing over to it would be an outage',
    ]);
  });

  it('names each pin that is not "sha256/" and the base64 of 32 bytes', () => {
    const lines = policyErrorLines(() =>
      make([
        {
          id: 'primary',
          url: 'https://api.example.test',
          pins: [
            SOME_PIN,
            SOME_PIN.replace('sha256/', 'sha1/'),
            SOME_PIN.slice(0, -2) + '=',
            // 32 bytes end in a character whose low 2 bits are 0: "B" would carry bits beyond the digest.
            SOME_PIN.slice(0, -2) + 'B=',
            42,
          ] as never,
        },
        { id: 'backup', url: 'https://backup.example.test', pins: [] },
        { id: 'replica', url: 'https://replica.example.test', pins: OTHER_PIN as never },
      ]),
    );
    const expected = (j: number, got: string) =>
      `origins[0].pins[${j}]: expected "sha256/" and the base64 of a 32-byte SPKI SHA-256 digest (44 characters), got ${got}`;
    expect(lines).toEqual([
      expected(1, JSON.stringify(SOME_PIN.replace('sha256/', 'sha1/'))),
      expected(2, JSON.stringify(SOME_PIN.slice(0, -2) + '=')),
      expected(3, JSON.stringify(SOME_PIN.slice(0, -2) + 'B=')),
      expected(4, 'number'),
      'origins[1].pins: expected a non-empty array of "sha256/<base64>" pins',
      'origins[2].pins: expected a non-empty array of "sha256/<base64>" pins',
    ]);
  });

  it('refuses pins on an http: origin (allowInsecure), which shows no certificate', () => {
    expect(
      policyErrorLines(() =>
        make([
          { id: 'primary', url: 'https://api.example.test', pins: [SOME_PIN] },
          { id: 'dev', url: 'http://127.0.0.1:8080', allowInsecure: true, pins: [SOME_PIN] },
        ]),
      ),
    ).toEqual(['origins[1].pins: pins need an https: URL: an http: origin shows no certificate']);
  });

  it('refuses the default transport and any transport that does not say checksPins: true', () => {
    const origins = [
      { id: 'primary', url: 'https://api.example.test', pins: [SOME_PIN] },
      { id: 'backup', url: 'https://backup.example.test', pins: [OTHER_PIN, SOME_PIN] },
    ];
    expect(policyErrorLines(() => make(origins, {}))).toEqual([
      'transport: the default fetchTransport cannot check certificate pins, and origins "primary", "backup" have pins; use nodeHttpTransport() from failwise/node',
    ]);
    expect(policyErrorLines(() => make(origins, { transport: fetchTransport() }))).toEqual([
      'transport: transport "fetch" does not check certificate pins (no checksPins: true), and origins "primary", "backup" have pins; use nodeHttpTransport() from failwise/node',
    ]);
    // A wrapper that forgets to pass checksPins on is refused too: it may not hand the pins to what checks them.
    const wrapper: Transport = { name: 'logged', send: (request) => transport.send(request) };
    expect(policyErrorLines(() => make(origins, { transport: wrapper }))).toHaveLength(1);
  });

  it('accepts pins on every https: origin with a transport that checks them', async () => {
    const client = make([
      { id: 'primary', url: 'https://api.example.test', pins: [SOME_PIN] },
      { id: 'backup', url: 'https://backup.example.test', pins: [OTHER_PIN] },
    ]);
    await client.close();
  });
});

describe('a pin mismatch on the primary', { timeout: 20_000 }, () => {
  const { serve } = useLoopback();
  const clients: FailoverClient[] = [];
  // Registered after useLoopback's hook: vitest runs after-hooks in reverse, so clients close before servers.
  afterEach(async () => {
    await Promise.all(clients.splice(0).map((client) => client.close()));
  });

  /** nodeHttpTransport, watched so the test moves the clock only while nothing is on the wire. */
  function watchedNodeTransport() {
    const inner = nodeHttpTransport({ tls: { ca: pki.caCert } });
    const onTheWire = new Set<Promise<unknown>>();
    const transport: Transport = {
      name: inner.name,
      checksPins: inner.checksPins === true,
      send(request) {
        const sent = inner.send(request);
        onTheWire.add(sent);
        const done = () => void onTheWire.delete(sent);
        sent.then(done, done);
        return sent;
      },
      close: () => inner.close?.(),
    };
    const quiet = async () => {
      for (;;) {
        await new Promise<void>((resolve) => setImmediate(resolve));
        if (onTheWire.size === 0) return;
        await Promise.allSettled([...onTheWire]);
      }
    };
    return { transport, quiet };
  }

  it('fails over to the backup at once (one tls failure, no retry on the primary), even for a write without a key', async () => {
    const clock = simulatedClock();
    const servers: Record<string, LoopbackServer> = {
      primary: await serve(({ res }) => res.end('from primary'), { tls: pki.leaf }),
      backup: await serve(({ res, body }) => res.end(`backup took ${body}`), { tls: pki.leaf }),
    };
    const events: DecisionEvent[] = [];
    const net = watchedNodeTransport();
    const client = createFailoverClient({
      origins: [
        // The primary's pin is a key its certificate chain does not hold; the backup's is its CA's.
        { id: 'primary', url: servers.primary!.url, pins: [pki.pins.unrelated] },
        { id: 'backup', url: servers.backup!.url, pins: [pki.pins.ca] },
      ],
      clock,
      transport: net.transport,
      onEvent: (event) => events.push(event),
    });
    clients.push(client);
    /** Runs the clock forward 50 ms at a time, each step once nothing is on the wire, until `done` says so. */
    const advanceUntil = async (done: () => boolean, limitMs: number) => {
      for (const end = clock.now() + limitMs; !done() && clock.now() < end;) {
        await net.quiet();
        if (!done()) await clock.increment(50);
      }
      await net.quiet();
    };

    let outcome: Outcome | undefined;
    void client.request({ method: 'POST', path: '/orders', body: 'order-1' }).then((o) => (outcome = o));
    await advanceUntil(() => outcome !== undefined, 10_000);

    expect(outcome).toMatchObject({ status: 'succeeded', origin: 'backup', attempts: 2 });
    if (outcome?.status === 'succeeded') expect(await outcome.response.text()).toBe('backup took order-1');
    // The primary's TLS handshake happened, but no request reached it: the pin check ran before a byte went out.
    expect(servers.primary!.sockets).toHaveLength(1);
    expect(servers.primary!.requests).toEqual([]);
    expect(servers.backup!.requests.map((r) => `${r.method} ${r.url} ${r.body}`)).toEqual([
      'POST /orders order-1',
    ]);
    // Class tls fails over at once (failoverCriterion in src/policy/health-evidence.ts), not after
    // policy.health.failoverAfter (5) failures; the request's retry then goes to the backup.
    expect(events.filter((e) => e.type === 'attempt-failed')).toMatchObject([
      { origin: 'primary', attempt: 1, failureClass: 'tls' },
    ]);
    expect(events.filter((e) => e.type === 'health-changed')).toMatchObject([
      { from: 'healthy', to: 'failedOver', criterion: 'tls', origin: 'backup' },
    ]);
    expect(client.health()).toMatchObject({ state: 'failedOver', activeOrigin: 'backup' });

    // The failback probe checks the pins too: after minFailedOverMs (30 s) it meets the same mismatch, sends
    // nothing, and traffic stays on the backup.
    const probeFailed = () =>
      events.some((e) => e.type === 'health-changed' && e.criterion === 'probe-failed');
    await advanceUntil(probeFailed, 40_000);
    expect(probeFailed()).toBe(true);
    expect(servers.primary!.sockets).toHaveLength(2);
    expect(servers.primary!.requests).toEqual([]);
    expect(client.health()).toMatchObject({ state: 'failedOver', activeOrigin: 'backup' });
  });
});
