import { afterEach, describe, expect, it } from 'vitest';
import {
  createFailoverClient,
  fetchTransport,
  simulatedClock,
  type FailoverClient,
  type FailoverClientOptions,
  type FailoverRequest,
  type Outcome,
  type Route,
  type SimulatedClock,
} from 'failwise';
import { useLoopback, type HandlerContext, type LoopbackServer } from '../helpers/loopback-server.js';
import { watched } from '../helpers/watched-transport.js';

// Routes share what the client knows of its origins. One client with a payment route (one attempt) and a feed
// route (five), against real servers on 127.0.0.1 and a simulated clock for every wait: the primary's failures
// from both routes count toward one failover, one server hold stops both, one retry budget bounds both. The
// assertions are about what the origins SAW (as in failover.loopback.test.ts).

type Behaviour = (context: HandlerContext) => void;

const answer =
  (status: number, headers: Record<string, string> = {}): Behaviour =>
  ({ res }) => {
    res.writeHead(status, headers);
    res.end(status < 400 ? 'ok' : 'not now');
  };

interface TestOrigin {
  server: LoopbackServer;
  /** `"METHOD path @ time"` for every request it received, the time on the simulated clock. */
  seen: string[];
  behave: Behaviour;
}

const routes: Route[] = [
  { id: 'payments', match: { method: 'POST', path: '/v1/payments' }, policy: { attempts: { max: 1 } } },
  { id: 'feed', match: { method: 'GET', path: '/v1/feed' }, policy: { attempts: { max: 5 } } },
];
const payment: FailoverRequest = {
  method: 'POST',
  path: '/v1/payments',
  body: '{"amount":5}',
  idempotencyKey: 'p-1',
};
const feed: FailoverRequest = { path: '/v1/feed?cursor=1' };

const loopback = useLoopback();
const clients: FailoverClient[] = [];
// Registered after useLoopback's hook: vitest runs after-hooks in reverse, so clients close before servers.
afterEach(async () => {
  await Promise.all(clients.splice(0).map((client) => client.close()));
});

async function setup(ids: string[], options: Omit<FailoverClientOptions, 'origins' | 'clock' | 'transport'>) {
  const clock: SimulatedClock = simulatedClock();
  const origins: Record<string, TestOrigin> = {};
  for (const id of ids) {
    const origin = { seen: [] as string[], behave: answer(200) } as TestOrigin;
    origin.server = await loopback.serve((context) => {
      origin.seen.push(`${context.req.method} ${context.req.url} @ ${clock.now()}`);
      origin.behave(context);
    });
    origins[id] = origin;
  }
  const net = watched(fetchTransport());
  const client = createFailoverClient({
    ...options,
    origins: ids.map((id) => ({ id, url: origins[id]!.server.url, allowInsecure: true })),
    clock,
    transport: net.transport,
  });
  clients.push(client);
  /** Waits for every request's outcome, moving the clock 100 ms at a time only while nothing is on the wire. */
  const drive = async (...pending: Promise<Outcome>[]) => {
    let settled = 0;
    for (const one of pending)
      one.then(
        () => settled++,
        () => settled++,
      );
    for (let moved = 0; ; moved += 100) {
      await net.idle();
      if (settled === pending.length) return Promise.all(pending);
      if (moved > 120_000) throw new Error('the requests did not end within 120 s of simulated time');
      await clock.increment(100);
    }
  };
  return { clock, client, origins, drive, idle: net.idle };
}

describe(
  'routes share the client: one payment route (1 attempt) and one feed route (5)',
  { timeout: 15_000 },
  () => {
    it("the primary's failures from both routes count toward one failover", async () => {
      const t = await setup(['primary', 'backup'], {
        routes,
        policy: { backoff: { initialMs: 100, maxMs: 100, jitter: 'none' } },
      });
      const { primary, backup } = t.origins as Record<'primary' | 'backup', TestOrigin>;
      primary.behave = answer(503);

      // Three payments, one attempt each: three failures of the primary in a row, not yet a failover (5).
      for (let i = 0; i < 3; i++)
        expect(await t.drive(t.client.request(payment))).toMatchObject([{ status: 'failed', attempts: 1 }]);
      expect(t.client.health().state).toBe('suspect');
      // Two feed reads: each fails on the primary (the 4th and 5th failure in a row), then succeeds on the backup.
      for (let i = 0; i < 2; i++)
        expect(await t.drive(t.client.request(feed))).toMatchObject([
          { status: 'succeeded', origin: 'backup', attempts: 2 },
        ]);
      expect(t.client.health()).toMatchObject({ state: 'failedOver', activeOrigin: 'backup' });
      expect(primary.seen.map((line) => line.replace(/ @.*/, ''))).toEqual([
        'POST /v1/payments',
        'POST /v1/payments',
        'POST /v1/payments',
        'GET /v1/feed?cursor=1',
        'GET /v1/feed?cursor=1',
      ]);
      // Failed over: the next payment goes to the backup at once.
      expect(await t.drive(t.client.request(payment))).toMatchObject([
        { status: 'succeeded', origin: 'backup' },
      ]);
      expect(primary.seen).toHaveLength(5);
      expect(backup.seen).toHaveLength(3);
    });

    it('one server hold (503 with Retry-After) stops both routes until it ends', async () => {
      // The held payment is released at the hold's end itself (no spread), so that the time below is the hold's.
      const t = await setup(['primary'], { routes, policy: { retryAfter: { releaseSpreadMs: 0 } } });
      const { primary } = t.origins as Record<'primary', TestOrigin>;
      primary.behave = answer(503, { 'retry-after': '5' });
      const read = t.client.request(feed);
      await t.idle();
      primary.behave = answer(200);
      // The feed's 503 holds the primary for 5 s: the payment, made now, waits for the hold's end too.
      const paid = t.client.request(payment);
      const [readOutcome, paidOutcome] = await t.drive(read, paid);
      expect(readOutcome).toMatchObject({ status: 'succeeded', attempts: 2 });
      expect(paidOutcome).toMatchObject({ status: 'succeeded', attempts: 1 });
      expect(primary.seen).toEqual([
        'GET /v1/feed?cursor=1 @ 0',
        'GET /v1/feed?cursor=1 @ 5000',
        'POST /v1/payments @ 5000',
      ]);
    });

    it('one retry budget bounds both: while one request retries, another may not begin to', async () => {
      const t = await setup(['primary'], {
        routes: [
          {
            id: 'payments',
            match: { method: 'POST', path: '/v1/payments' },
            policy: { attempts: { max: 2 } },
          },
          routes[1]!,
        ],
        policy: {
          retryBudget: { percent: 0, minConcurrency: 1 },
          backoff: { initialMs: 100, maxMs: 100, jitter: 'none' },
        },
      });
      const { primary } = t.origins as Record<'primary', TestOrigin>;
      primary.behave = answer(503);
      // The feed read fails first and takes the one retry slot (it waits 100 ms to retry); the payment, failed
      // while the read holds the slot, may not retry.
      const reading = t.client.request(feed);
      await t.idle();
      const [read, paid] = await t.drive(reading, t.client.request(payment));
      expect(read).toMatchObject({ status: 'failed', attempts: 5 });
      expect(paid).toMatchObject({ status: 'failed', reason: 'retry-budget-exhausted', attempts: 1 });
      expect(primary.seen.filter((line) => line.startsWith('POST'))).toHaveLength(1);
      expect(primary.seen.filter((line) => line.startsWith('GET'))).toHaveLength(5);
    });
  },
);
