import { afterEach, describe, expect, it, vi } from 'vitest';
import {
  createFailoverClient,
  defaultPolicy,
  definePolicy,
  fetchTransport,
  manualConnectivity,
  simulatedClock,
  type DecisionEvent,
  type FailoverClient,
  type FailoverClientOptions,
  type FailoverRequest,
  type OriginConfig,
  type Outcome,
  type Policy,
  type SimulatedClock,
} from 'failwise';
import { seededRandom } from '../../src/drill/seeded-random.js';
import { useLoopback, type HandlerContext, type LoopbackServer } from '../helpers/loopback-server.js';
import { watched } from '../helpers/watched-transport.js';

// Failover end to end: the public client, real HTTP servers on 127.0.0.1 (one per origin), and a simulated
// clock for every wait (backoff, dwell, probes), so nothing sleeps. Each server records what it received and
// when (on the simulated clock): the assertions are about what the origins SAW. docs/failover.md has the rules.
//
// How time moves: the clock only moves when a test advances it, and only once no request or probe is on the
// wire (`idle()`), so a real answer always lands at the simulated instant its request was sent. Every wait in
// these tests is a multiple of the step the clock is advanced by, so timers fire exactly at a step's end.

/** What an origin does with a request it received. */
type Behaviour = (context: HandlerContext) => void;

const answer =
  (status: number): Behaviour =>
  ({ res }) => {
    res.statusCode = status;
    res.end(status < 400 ? 'ok' : 'not now');
  };
const up = answer(200);
const unavailable = answer(503);
/** Reads the whole request, then drops the connection without a word: the write's fate is unknown. */
const drop: Behaviour = ({ req }) => req.socket.destroy();
/** Reads the whole request and never answers. */
const hang: Behaviour = () => undefined;

interface Seen {
  method: string;
  path: string;
  /** When the request arrived, on the simulated clock. */
  at: number;
  authorization: string | undefined;
  cookie: string | undefined;
  idempotencyKey: string | undefined;
  body: string;
}

interface TestOrigin {
  id: string;
  server: LoopbackServer;
  /** Every request this origin received, in order. */
  seen: Seen[];
  /** What it does with the next request; tests switch it to make the origin die or recover. */
  behave: Behaviour;
}

interface HealthChange {
  from: string;
  to: string;
  criterion: string;
  /** The origin traffic goes to after the change (none when no origin can take it). */
  origin: string | undefined;
  /** When the event was emitted, on the simulated clock. */
  at: number;
}

interface Setup {
  clock: SimulatedClock;
  client: FailoverClient;
  origins: Record<string, TestOrigin>;
  events: DecisionEvent[];
  changes: HealthChange[];
  /** Resolves once no request or probe is on the wire and the machines have taken in every answer. */
  idle(): Promise<void>;
  /** Moves the clock `ms` forward, `stepMs` at a time, letting every request and probe finish after each step. */
  advance(ms: number, stepMs?: number): Promise<void>;
  /** Waits for a request's outcome, moving the clock (100 ms at a time) only while nothing is on the wire. */
  drive(pending: Promise<Outcome>): Promise<Outcome>;
  /** `client.request(request)`, driven to its outcome. */
  run(request: FailoverRequest): Promise<Outcome>;
  /** `"METHOD path"` for each request an origin saw. */
  lines(id: string): string[];
}

type SetupOptions = Omit<FailoverClientOptions, 'origins' | 'clock' | 'transport' | 'onEvent'> & {
  origins?: Array<Omit<OriginConfig, 'url' | 'allowInsecure'>>;
};

const loopback = useLoopback();
const clients: FailoverClient[] = [];
// Registered after useLoopback's hook: vitest runs after-hooks in reverse, so clients close before servers.
afterEach(async () => {
  await Promise.all(clients.splice(0).map((client) => client.close()));
});

async function setup(options: SetupOptions = {}): Promise<Setup> {
  const { origins: specs = [{ id: 'primary' }, { id: 'backup' }], ...clientOptions } = options;
  const clock = simulatedClock();
  const origins: Record<string, TestOrigin> = {};
  for (const spec of specs) {
    const origin = { id: spec.id, seen: [] as Seen[], behave: up } as TestOrigin;
    origin.server = await loopback.serve((context) => {
      const { req, body } = context;
      const header = (name: string) => {
        const value = req.headers[name];
        return Array.isArray(value) ? value.join(', ') : value;
      };
      origin.seen.push({
        method: req.method ?? '',
        path: req.url ?? '',
        at: clock.now(),
        authorization: header('authorization'),
        cookie: header('cookie'),
        idempotencyKey: header('idempotency-key'),
        body,
      });
      origin.behave(context);
    });
    origins[spec.id] = origin;
  }
  const net = watched(fetchTransport());
  const events: DecisionEvent[] = [];
  const changes: HealthChange[] = [];
  const client = createFailoverClient({
    ...clientOptions,
    origins: specs.map((spec) => ({ ...spec, url: origins[spec.id]!.server.url, allowInsecure: true })),
    clock,
    transport: net.transport,
    onEvent: (event) => {
      events.push(event);
      if (event.type === 'health-changed') {
        const { from, to, criterion, origin } = event;
        changes.push({ from, to, criterion, origin, at: clock.now() });
      }
    },
  });
  clients.push(client);

  const advance = async (ms: number, stepMs = 1_000) => {
    for (let moved = 0; moved < ms;) {
      const step = Math.min(stepMs, ms - moved);
      await clock.increment(step);
      moved += step;
      await net.idle();
    }
  };
  const drive = async (pending: Promise<Outcome>) => {
    let settled = false;
    pending.then(
      () => (settled = true),
      () => (settled = true),
    );
    const end = clock.now() + 120_000;
    for (;;) {
      await net.idle();
      if (settled) return pending;
      if (clock.now() >= end) throw new Error('the request did not end within 120 s of simulated time');
      await clock.increment(100);
    }
  };
  const run = (request: FailoverRequest) => drive(client.request(request));
  const lines = (id: string) => origins[id]!.seen.map((seen) => `${seen.method} ${seen.path}`);
  return { clock, client, origins, events, changes, idle: net.idle, advance, drive, run, lines };
}

const times = <T>(n: number, value: T): T[] => Array.from({ length: n }, () => value);

/** One attempt per request: each request is exactly one thing the origins see, and no backoff runs. */
const oneAttempt = { attempts: { max: 1 } } as const;

describe('failover, against real servers on 127.0.0.1', { timeout: 15_000 }, () => {
  describe('1. the primary dies and traffic moves to the backup', () => {
    it('fails over after failoverAfter consecutive 503s, each read retrying on the backup', async () => {
      const t = await setup({ policy: { backoff: { initialMs: 200, jitter: 'none' } } });
      const { primary, backup } = t.origins as Record<'primary' | 'backup', TestOrigin>;
      primary.behave = unavailable;

      // Each read's first attempt fails on the primary; its retry, 200 ms later, goes to the healthy backup rather
      // than back to the primary (rule 7). The second failure in a row makes the primary suspect.
      const first = await t.run({ path: '/items' });
      expect(first).toMatchObject({ status: 'succeeded', origin: 'backup', attempts: 2 });
      const second = await t.run({ path: '/items' });
      expect(second).toMatchObject({ status: 'succeeded', origin: 'backup', attempts: 2 });
      expect(t.client.health()).toEqual({
        state: 'suspect',
        activeOrigin: 'primary',
        since: 200,
        holdUntil: {},
      });

      // The 5th read's first attempt is the primary's 5th counted failure in a row: traffic fails over.
      for (let i = 0; i < 3; i++)
        expect(await t.run({ path: '/items' })).toMatchObject({ origin: 'backup', attempts: 2 });

      expect(t.lines('primary')).toEqual(times(5, 'GET /items'));
      expect(primary.seen.map((seen) => seen.at)).toEqual([0, 200, 400, 600, 800]);
      expect(backup.seen.map((seen) => seen.at)).toEqual([200, 400, 600, 800, 1_000]);
      expect(t.client.health()).toEqual({
        state: 'failedOver',
        activeOrigin: 'backup',
        since: 800,
        holdUntil: {},
      });
      expect(t.changes).toEqual([
        { from: 'healthy', to: 'suspect', criterion: 'consecutive-failures', origin: 'primary', at: 200 },
        { from: 'suspect', to: 'failedOver', criterion: 'consecutive-failures', origin: 'backup', at: 800 },
      ]);
      const event = t.events.find((e) => e.type === 'health-changed' && e.to === 'failedOver');
      expect(event).toMatchObject({ origin: 'backup', host: new URL(backup.server.url).host });

      // From now on the primary gets nothing: the next reads go straight to the backup.
      for (let i = 0; i < 3; i++)
        expect(await t.run({ path: '/items' })).toMatchObject({ origin: 'backup', attempts: 1 });
      expect(primary.seen).toHaveLength(5);
      expect(backup.seen).toHaveLength(8);
    });

    it('20 reads in flight when the primary dies all succeed on the healthy backup, none refused by the retry budget', async () => {
      const t = await setup({ policy: { backoff: { initialMs: 200, jitter: 'none' } } });
      const { primary, backup } = t.origins as Record<'primary' | 'backup', TestOrigin>;
      const { retryBudget } = t.client.policy;
      // The primary has been fine; then it dies with 20 reads on the wire: each is answered 503.
      expect(await t.run({ path: '/warm' })).toMatchObject({ status: 'succeeded', origin: 'primary' });
      primary.behave = unavailable;
      const pending = Array.from({ length: 20 }, (_, i) => t.client.request({ path: `/items/${i}` }));
      const outcomes = await Promise.all(pending.map((p) => t.drive(p)));

      // The budget would let only a few of them retry against the primary (20 % of 20, at least 3)...
      expect(Math.max(retryBudget.minConcurrency, (retryBudget.percent * 20) / 100)).toBeLessThan(20);
      // ...but none retries against it: every read's second attempt goes to the backup, and succeeds.
      for (const outcome of outcomes)
        expect(outcome).toMatchObject({ status: 'succeeded', origin: 'backup', attempts: 2 });
      expect(primary.seen.filter((seen) => seen.path.startsWith('/items/'))).toHaveLength(20);
      expect(backup.seen.map((seen) => seen.path).sort()).toEqual(
        Array.from({ length: 20 }, (_, i) => `/items/${i}`).sort(),
      );
      expect(t.events.filter((e) => e.type === 'failed')).toEqual([]);
      expect(t.client.health()).toMatchObject({ state: 'failedOver', activeOrigin: 'backup' });
    });

    it('fails over when the primary server is gone (connection refused)', async () => {
      const t = await setup({ policy: oneAttempt });
      const { primary, backup } = t.origins as Record<'primary' | 'backup', TestOrigin>;
      // No keep-alive: a pooled socket to the dead server would fail as `connection-lost`, not `connect`.
      primary.behave = (context) => {
        context.res.setHeader('connection', 'close');
        up(context);
      };
      expect(await t.run({ path: '/a' })).toMatchObject({ status: 'succeeded', origin: 'primary' });
      expect(await t.run({ path: '/b' })).toMatchObject({ status: 'succeeded', origin: 'primary' });
      await primary.server.close();

      const failures: Outcome[] = [];
      for (let i = 0; i < defaultPolicy.health.failoverAfter; i++) failures.push(await t.run({ path: '/c' }));
      for (const outcome of failures)
        expect(outcome).toMatchObject({
          status: 'failed',
          reason: 'attempts-exhausted',
          origin: 'primary',
          failure: { class: 'connect', requestSent: 'no' },
        });
      expect(t.client.health()).toMatchObject({ state: 'failedOver', activeOrigin: 'backup' });
      expect(t.changes.map(({ from, to, criterion }) => [from, to, criterion])).toEqual([
        ['healthy', 'suspect', 'consecutive-failures'],
        ['suspect', 'failedOver', 'consecutive-failures'],
      ]);

      expect(await t.run({ path: '/d' })).toMatchObject({ status: 'succeeded', origin: 'backup' });
      expect(t.lines('primary')).toEqual(['GET /a', 'GET /b']);
      expect(t.lines('backup')).toEqual(['GET /d']);
      const failedAttempts = t.events.filter((e) => e.type === 'attempt-failed');
      expect(failedAttempts.map((e) => [e.origin, e.failureClass])).toEqual(times(5, ['primary', 'connect']));
      expect(backup.seen).toHaveLength(1);
    });
  });

  describe('2. failback waits for the dwell and for probeSuccesses probes', () => {
    it('sends nothing to the primary for minFailedOverMs, then probes it, then fails back on the 3rd success', async () => {
      const auth = {
        headers: () => ({ authorization: 'Bearer user-token' }),
        refresh: async () => {},
      };
      const t = await setup({ policy: oneAttempt, auth });
      const { primary, backup } = t.origins as Record<'primary' | 'backup', TestOrigin>;
      const { minFailedOverMs, probeIntervalMs, probeSuccesses } = defaultPolicy.health;
      expect([minFailedOverMs, probeIntervalMs, probeSuccesses]).toEqual([30_000, 5_000, 3]);

      primary.behave = unavailable;
      for (let i = 0; i < 5; i++) await t.run({ path: '/items' });
      expect(t.client.health()).toEqual({
        state: 'failedOver',
        activeOrigin: 'backup',
        since: 0,
        holdUntil: {},
      });
      primary.behave = up; // It recovers at once; traffic must still wait.

      // The dwell: a read every second goes to the backup; the primary hears nothing, not even a probe.
      for (let at = 1_000; at < minFailedOverMs; at += 1_000) {
        await t.advance(1_000);
        expect(await t.run({ path: '/items' })).toMatchObject({ status: 'succeeded', origin: 'backup' });
      }
      expect(t.clock.now()).toBe(29_000);
      expect(primary.seen).toHaveLength(5);
      expect(t.client.health()).toEqual({
        state: 'failedOver',
        activeOrigin: 'backup',
        since: 0,
        holdUntil: {},
      });

      // 30 s: the first probe.
      await t.advance(1_000);
      expect(primary.seen).toHaveLength(6);
      // (`since` while backups carry traffic is checked below.)
      expect(t.client.health()).toMatchObject({ state: 'probingFailback', activeOrigin: 'backup' });
      expect(await t.run({ path: '/items' })).toMatchObject({ origin: 'backup' });

      // 35 s: the second; traffic still on the backup.
      await t.advance(probeIntervalMs - 1_000);
      expect(primary.seen).toHaveLength(6);
      await t.advance(1_000);
      expect(primary.seen).toHaveLength(7);
      expect(t.client.health().state).toBe('probingFailback');
      expect(await t.run({ path: '/items' })).toMatchObject({ origin: 'backup' });

      // 40 s: the third succeeds, and traffic fails back.
      await t.advance(probeIntervalMs);
      expect(t.client.health()).toMatchObject({ state: 'healthy', activeOrigin: 'primary' });
      expect(await t.run({ path: '/items' })).toMatchObject({ status: 'succeeded', origin: 'primary' });

      const afterFailover = primary.seen.slice(5);
      expect(afterFailover.map((seen) => [seen.method, seen.path, seen.at])).toEqual([
        ['HEAD', '/', 30_000],
        ['HEAD', '/', 35_000],
        ['HEAD', '/', 40_000],
        ['GET', '/items', 40_000],
      ]);
      // Probes carry no credentials (nor a key); the live request does.
      for (const probe of afterFailover.slice(0, 3)) {
        expect(probe.authorization).toBeUndefined();
        expect(probe.cookie).toBeUndefined();
        expect(probe.idempotencyKey).toBeUndefined();
      }
      expect(afterFailover[3]?.authorization).toBe('Bearer user-token');
      expect(backup.seen).toHaveLength(31);
      expect(t.changes.map(({ from, to, criterion, at }) => [from, to, criterion, at])).toEqual([
        ['healthy', 'suspect', 'consecutive-failures', 0],
        ['suspect', 'failedOver', 'consecutive-failures', 0],
        ['failedOver', 'probingFailback', 'min-failed-over-elapsed', 30_000],
        ['probingFailback', 'healthy', 'probes-succeeded', 40_000],
      ]);
    });
  });

  // Regression: a timer's delay used to be added to `context.now`, which backup attempts had moved on since
  // the timer was armed, so the machine ran ahead of the clock (`since`, `at` and `failedBackAt` wrong).
  describe('the health machine keeps time with the clock while backups carry traffic', () => {
    async function failOverThenServeFromBackup(t: Setup) {
      const { primary } = t.origins as Record<'primary' | 'backup', TestOrigin>;
      primary.behave = unavailable;
      for (let i = 0; i < 5; i++) await t.run({ path: '/items' });
      primary.behave = up;
      await t.advance(29_000);
      // One read served by the backup during the dwell is enough.
      expect(await t.run({ path: '/items' })).toMatchObject({ origin: 'backup' });
    }

    it('reports since on the clock: probingFailback from 30 s, healthy from 40 s', async () => {
      const t = await setup({ policy: oneAttempt });
      await failOverThenServeFromBackup(t);
      await t.advance(1_000);
      const probing = t.client.health();
      await t.advance(10_000);
      expect([probing, t.client.health()]).toEqual([
        { state: 'probingFailback', activeOrigin: 'backup', since: 30_000, holdUntil: {} }, // got 59_000
        { state: 'healthy', activeOrigin: 'primary', since: 40_000, holdUntil: {} }, // got 69_000
      ]);
    });

    it('starts again from minFailedOverMs once the primary stayed up for maxFailedOverMs', async () => {
      const t = await setup({ policy: oneAttempt });
      const { primary } = t.origins as Record<'primary' | 'backup', TestOrigin>;
      const { minFailedOverMs, maxFailedOverMs } = defaultPolicy.health;
      await failOverThenServeFromBackup(t);
      await t.advance(11_000);
      expect(t.changes.at(-1)).toMatchObject({ to: 'healthy', at: 40_000 });

      // Up for longer than maxFailedOverMs, then down again: the failed-over time is back to its minimum.
      await t.advance(maxFailedOverMs + 1_000, 5_000);
      primary.behave = unavailable;
      for (let i = 0; i < 5; i++) await t.run({ path: '/items' });
      const failover = t.changes.at(-1)!;
      expect(failover).toMatchObject({ to: 'failedOver', at: 341_000 });
      await t.advance(2 * minFailedOverMs);
      const probes = primary.seen.filter((seen) => seen.method === 'HEAD' && seen.at > failover.at);
      expect(probes[0]?.at).toBe(failover.at + minFailedOverMs); // got failover.at + 2 * minFailedOverMs
    });
  });

  describe('3. a failed probe sends traffic back to failedOver, for longer with each one in a row', () => {
    /** Exact waits after failed probes (no jitter): reprobeAfterMs, doubled by each failed probe in a row. */
    const noJitter = { ...oneAttempt, health: { reprobeJitter: 'none' } } as const;

    it('probes next after reprobeAfterMs, then fails back on consecutive successes', async () => {
      const t = await setup({ policy: noJitter });
      const { primary } = t.origins as Record<'primary' | 'backup', TestOrigin>;
      const { reprobeAfterMs, probeIntervalMs } = defaultPolicy.health;
      expect([reprobeAfterMs, probeIntervalMs]).toEqual([5_000, 5_000]);
      primary.behave = unavailable;
      for (let i = 0; i < 5; i++) await t.run({ path: '/items' });

      await t.advance(30_000);
      // The probe at 30 s got a 503: back to failedOver, now for reprobeAfterMs.
      expect(t.client.health()).toEqual({
        state: 'failedOver',
        activeOrigin: 'backup',
        since: 30_000,
        holdUntil: {},
      });
      primary.behave = up;
      await t.advance(4_000);
      const probes = () => primary.seen.filter((seen) => seen.method === 'HEAD').map((seen) => seen.at);
      expect(probes()).toEqual([30_000]);
      await t.advance(1_000);
      expect(probes()).toEqual([30_000, 35_000]);
      expect(t.client.health()).toEqual({
        state: 'probingFailback',
        activeOrigin: 'backup',
        since: 35_000,
        holdUntil: {},
      });
      await t.advance(10_000);
      expect(probes()).toEqual([30_000, 35_000, 40_000, 45_000]);
      expect(t.client.health()).toEqual({
        state: 'healthy',
        activeOrigin: 'primary',
        since: 45_000,
        holdUntil: {},
      });
      expect(t.changes.slice(2).map(({ from, to, criterion, at }) => [from, to, criterion, at])).toEqual([
        ['failedOver', 'probingFailback', 'min-failed-over-elapsed', 30_000],
        ['probingFailback', 'failedOver', 'probe-failed', 30_000],
        ['failedOver', 'probingFailback', 'min-failed-over-elapsed', 35_000],
        ['probingFailback', 'healthy', 'probes-succeeded', 45_000],
      ]);
    });

    it('doubles the wait on each failed probe in a row, up to maxFailedOverMs', async () => {
      const t = await setup({
        policy: { ...noJitter, health: { ...noJitter.health, maxFailedOverMs: 100_000 } },
      });
      const { primary } = t.origins as Record<'primary' | 'backup', TestOrigin>;
      primary.behave = unavailable;
      for (let i = 0; i < 5; i++) await t.run({ path: '/items' });
      await t.advance(400_000, 5_000);
      // The dwell of 30 s, then waits of 5, 10, 20, 40, 80, 100 (160 capped), 100 s.
      const probes = primary.seen.filter((seen) => seen.method === 'HEAD').map((seen) => seen.at);
      expect(probes).toEqual([30_000, 35_000, 45_000, 65_000, 105_000, 185_000, 285_000, 385_000]);
      expect(primary.seen.filter((seen) => seen.method === 'GET')).toHaveLength(5);
      expect(t.client.health()).toEqual({
        state: 'failedOver',
        activeOrigin: 'backup',
        since: 385_000,
        holdUntil: {},
      });
    });

    it('with the default equal jitter, waits between half the wait and all of it, as the client’s seed draws', async () => {
      /** The probes' times of one client whose randomness starts from `seed`. */
      const probesOf = async (seed: number) => {
        const t = await setup({ policy: oneAttempt, random: seededRandom(seed) });
        const { primary } = t.origins as Record<'primary' | 'backup', TestOrigin>;
        primary.behave = unavailable;
        for (let i = 0; i < 5; i++) await t.run({ path: '/items' });
        await t.advance(100_000, 500);
        return primary.seen.filter((seen) => seen.method === 'HEAD').map((seen) => seen.at);
      };
      const runs = [await probesOf(1), await probesOf(2)];
      for (const probes of runs) {
        expect(probes[0]).toBe(30_000);
        // Waits of 5, 10, 20, 40 s before jitter: each in [half, all], to the 500 ms step of the clock.
        [5_000, 10_000, 20_000].forEach((base, k) => {
          const wait = probes[k + 1]! - probes[k]!;
          expect(wait).toBeGreaterThanOrEqual(base / 2);
          expect(wait).toBeLessThanOrEqual(base + 500);
        });
      }
      expect(runs[0]).not.toEqual(runs[1]);
    });
  });

  describe('4. a flapping primary causes a bounded number of switches', () => {
    /**
     * The most failovers in `durationMs`: after the k-th failover traffic stays off the primary for its
     * failed-over time (minFailedOverMs, doubling on each failover soon after a failback, capped), then needs
     * probeSuccesses probes probeIntervalMs apart before it can return and fail over again.
     */
    function maxFailovers(policy: Policy, durationMs: number) {
      const { minFailedOverMs, maxFailedOverMs, probeSuccesses, probeIntervalMs } = policy.health;
      let count = 0;
      let wait = minFailedOverMs;
      for (let at = 0; at <= durationMs; at += wait + (probeSuccesses - 1) * probeIntervalMs) {
        count += 1;
        if (count > 1) wait = Math.min(wait * 2, maxFailedOverMs);
      }
      return count;
    }

    it('fails over on the failure ratio, then ever more slowly, over 30 simulated minutes', async () => {
      const policy = definePolicy(oneAttempt);
      const t = await setup({ policy });
      const { primary } = t.origins as Record<'primary' | 'backup', TestOrigin>;
      // Its health check passes, but every other API request fails.
      let apiRequests = 0;
      primary.behave = (context) => {
        if (context.req.method === 'HEAD') return up(context);
        apiRequests += 1;
        return (apiRequests % 2 === 1 ? unavailable : up)(context);
      };

      const durationMs = 30 * 60_000;
      const everyMs = 2_000;
      const outcomes: Outcome[] = [];
      while (t.clock.now() < durationMs) {
        outcomes.push(await t.run({ path: '/feed' }));
        await t.advance(everyMs);
      }
      expect(outcomes).toHaveLength(durationMs / everyMs);

      const failovers = t.changes.filter((change) => change.to === 'failedOver');
      const failbacks = t.changes.filter((change) => change.to === 'healthy');
      const bound = maxFailovers(policy, durationMs);
      expect(bound).toBe(9);
      // It does flap: every time traffic returns, the primary trips the ratio again (8 times with this traffic).
      expect(failovers.length).toBeGreaterThanOrEqual(bound - 2);
      expect(failovers.length).toBeLessThanOrEqual(bound);
      // docs/failover.md's rule of thumb: log2(max / min) + 1 + T / max.
      const { minFailedOverMs, maxFailedOverMs, probeSuccesses, probeIntervalMs } = policy.health;
      expect(failovers.length).toBeLessThanOrEqual(
        Math.log2(maxFailedOverMs / minFailedOverMs) + 1 + durationMs / maxFailedOverMs,
      );
      // No probe ever failed (the health check passes), so every failover came from live traffic.
      for (const failover of failovers) expect(failover.criterion).toBe('failure-ratio');
      expect(t.changes.some((change) => change.criterion === 'probe-failed')).toBe(false);

      // Failovers are at least minFailedOverMs apart, and the wait doubles each time (capped).
      let wait = minFailedOverMs;
      for (let k = 1; k < failovers.length; k++) {
        const gap = failovers[k]!.at - failovers[k - 1]!.at;
        expect(gap).toBeGreaterThanOrEqual(minFailedOverMs);
        expect(gap).toBeGreaterThanOrEqual(wait + (probeSuccesses - 1) * probeIntervalMs);
        wait = Math.min(wait * 2, maxFailedOverMs);
      }
      // And each failback came exactly after its failed-over time and the probes.
      wait = minFailedOverMs;
      for (let k = 0; k < failbacks.length; k++) {
        expect(failbacks[k]!.at - failovers[k]!.at).toBe(wait + (probeSuccesses - 1) * probeIntervalMs);
        wait = Math.min(wait * 2, maxFailedOverMs);
      }

      // While failed over (failover .. failback), not one live request reached the primary.
      const offPrimary = failovers.map((failover, k) => [failover.at, failbacks[k]?.at ?? Infinity] as const);
      const apiArrivals = primary.seen.filter((seen) => seen.method === 'GET').map((seen) => seen.at);
      expect(apiArrivals).toHaveLength(apiRequests);
      for (const at of apiArrivals) expect(offPrimary.some(([from, to]) => at > from && at < to)).toBe(false);
      const onBackup = outcomes.filter(
        (outcome) => outcome.status === 'succeeded' && outcome.origin === 'backup',
      );
      expect(onBackup.length + apiRequests).toBe(outcomes.length);
    });
  });

  describe('5. a write whose outcome is unknown', () => {
    it('is never sent again without an idempotency key when the primary drops the connection', async () => {
      const t = await setup({ policy: { health: { suspectAfter: 1, failoverAfter: 1 } } });
      const { primary, backup } = t.origins as Record<'primary' | 'backup', TestOrigin>;
      primary.behave = (context) => (context.req.method === 'POST' ? drop : unavailable)(context);

      const outcome = await t.run({ method: 'POST', path: '/orders', body: '{"qty":1}' });
      expect(outcome).toMatchObject({
        status: 'failed',
        reason: 'unsafe-to-replay',
        attempts: 1,
        origin: 'primary',
        failure: { class: 'connection-lost', requestSent: 'unknown', origin: 'primary' },
      });
      // The drop tripped the failover, and still the write went nowhere else.
      expect(t.client.health()).toMatchObject({ state: 'failedOver', activeOrigin: 'backup' });
      await t.advance(60_000);
      expect(t.lines('primary').filter((line) => !line.startsWith('HEAD'))).toEqual(['POST /orders']);
      expect(backup.seen).toEqual([]);
    });

    it('is never sent again without an idempotency key when the attempt times out', async () => {
      const t = await setup({ policy: { timeouts: { attemptMs: 2_000 } } });
      const { primary, backup } = t.origins as Record<'primary' | 'backup', TestOrigin>;
      primary.behave = hang;

      const arrived = primary.server.nextRequest();
      const pending = t.client.request({ method: 'POST', path: '/orders', body: '{"qty":1}' });
      await arrived;
      await t.clock.increment(2_000);
      expect(await pending).toMatchObject({
        status: 'failed',
        reason: 'unsafe-to-replay',
        attempts: 1,
        origin: 'primary',
        failure: { class: 'response-timeout', requestSent: 'unknown' },
      });
      await t.clock.increment(30_000);
      expect(t.lines('primary')).toEqual(['POST /orders']);
      expect(backup.seen).toEqual([]);
    });

    it('with an idempotency key, is retried on the primary it may have reached, though traffic failed over', async () => {
      const t = await setup({
        policy: { backoff: { initialMs: 200, jitter: 'none' }, health: { failoverAfter: 4 } },
      });
      const { primary, backup } = t.origins as Record<'primary' | 'backup', TestOrigin>;
      let posts = 0;
      primary.behave = (context) => {
        if (context.req.method !== 'POST') return unavailable(context);
        posts += 1;
        return (posts === 1 ? drop : answer(201))(context);
      };

      // Three counted failures: suspect. (A PUT, retried where the health machine names: a read's retry would go
      // to the backup.)
      expect(await t.run({ method: 'PUT', path: '/items', body: '{}' })).toMatchObject({
        reason: 'attempts-exhausted',
        attempts: 3,
      });
      expect(t.client.health().state).toBe('suspect');

      // The write's first attempt is dropped: the 4th failure in a row fails traffic over.
      const write = t.client.request({
        method: 'POST',
        path: '/orders',
        body: '{"qty":1}',
        idempotencyKey: 'order-7',
      });
      await t.idle();
      expect(t.client.health()).toMatchObject({ state: 'failedOver', activeOrigin: 'backup' });
      // A read made meanwhile goes to the backup...
      expect(await t.client.request({ path: '/items' })).toMatchObject({
        status: 'succeeded',
        origin: 'backup',
      });
      // ...but the write is retried where it may already have been applied.
      expect(await t.drive(write)).toMatchObject({ status: 'succeeded', origin: 'primary', attempts: 2 });

      const writes = primary.seen.filter((seen) => seen.method === 'POST');
      expect(writes.map((seen) => [seen.path, seen.idempotencyKey, seen.body])).toEqual(
        times(2, ['/orders', 'order-7', '{"qty":1}']),
      );
      const failover = t.changes.find((change) => change.to === 'failedOver')!;
      expect(failover).toMatchObject({ from: 'suspect', criterion: 'consecutive-failures' });
      expect(writes[0]!.at).toBe(failover.at);
      expect(writes[1]!.at).toBe(failover.at + 200);
      expect(backup.seen.filter((seen) => seen.method === 'POST')).toEqual([]);
      expect(t.lines('backup')).toEqual(['GET /items']);
      // A pinned write's success is not a probe: traffic stays failed over.
      expect(t.client.health()).toMatchObject({ state: 'failedOver', activeOrigin: 'backup' });
    });
  });

  describe('6. a reads-only backup never receives a write', () => {
    it('serves reads while failed over; a write ends no-healthy-origin and is sent nowhere', async () => {
      const t = await setup({
        policy: oneAttempt,
        origins: [{ id: 'primary' }, { id: 'replica', accepts: 'reads' }],
      });
      const { primary } = t.origins as Record<'primary' | 'replica', TestOrigin>;
      primary.behave = unavailable;
      for (let i = 0; i < 5; i++) await t.run({ path: '/items' });
      expect(t.client.health()).toMatchObject({ state: 'failedOver', activeOrigin: 'replica' });

      expect(await t.run({ path: '/items' })).toMatchObject({ status: 'succeeded', origin: 'replica' });
      for (const request of [
        { method: 'POST', path: '/orders', body: 'a' },
        { method: 'POST', path: '/orders', body: 'b', idempotencyKey: 'k-1' },
        { method: 'PATCH', path: '/orders/1', body: 'c' },
        // Idempotent, but still writes: a replica must not get them either.
        { method: 'PUT', path: '/orders/1', body: 'd' },
        { method: 'DELETE', path: '/orders/1' },
      ])
        expect(await t.run(request)).toMatchObject({
          status: 'failed',
          reason: 'no-healthy-origin',
          attempts: 0,
        });
      expect(t.lines('replica')).toEqual(['GET /items']);
      expect(t.lines('primary')).toEqual(times(5, 'GET /items'));
      expect(t.events.filter((e) => e.type === 'failed' && e.reason === 'no-healthy-origin')).toHaveLength(5);
    });

    it('sends writes to a later backup that accepts all, reads to the reads-only one', async () => {
      const t = await setup({
        policy: oneAttempt,
        origins: [{ id: 'primary' }, { id: 'replica', accepts: 'reads' }, { id: 'backup' }],
      });
      const { primary } = t.origins as Record<'primary' | 'replica' | 'backup', TestOrigin>;
      primary.behave = unavailable;
      for (let i = 0; i < 5; i++) await t.run({ path: '/items' });
      expect(t.client.health()).toMatchObject({ state: 'failedOver', activeOrigin: 'replica' });

      expect(await t.run({ path: '/items' })).toMatchObject({ status: 'succeeded', origin: 'replica' });
      expect(await t.run({ method: 'POST', path: '/orders', body: 'a' })).toMatchObject({
        status: 'succeeded',
        origin: 'backup',
      });
      expect(await t.run({ method: 'PATCH', path: '/orders/1', body: 'b' })).toMatchObject({
        status: 'succeeded',
        origin: 'backup',
      });
      expect(await t.run({ method: 'DELETE', path: '/orders/1' })).toMatchObject({
        status: 'succeeded',
        origin: 'backup',
      });
      expect(await t.run({ path: '/items/1' })).toMatchObject({ status: 'succeeded', origin: 'replica' });
      expect(t.lines('replica')).toEqual(['GET /items', 'GET /items/1']);
      expect(t.lines('backup')).toEqual(['POST /orders', 'PATCH /orders/1', 'DELETE /orders/1']);
      expect(t.lines('primary')).toEqual(times(5, 'GET /items'));
    });
  });

  describe('7. credentials (rule 8)', () => {
    it('sends no Authorization (nor the app’s own Cookie) to a backup with credentials: omit', async () => {
      const auth = {
        headers: vi.fn((_origin: string) => ({ Authorization: 'Bearer user-token' })),
        refresh: async () => {},
      };
      const t = await setup({
        auth,
        policy: {
          backoff: { initialMs: 200, jitter: 'none' },
          health: { suspectAfter: 1, failoverAfter: 1 },
        },
        origins: [{ id: 'primary' }, { id: 'backup', credentials: 'omit' }],
      });
      const { primary, backup } = t.origins as Record<'primary' | 'backup', TestOrigin>;
      primary.behave = unavailable;

      // The first attempt (primary, with credentials) fails over; the retry goes to the backup, without them.
      const outcome = await t.run({ path: '/me', headers: { Cookie: 'sid=secret', 'X-Trace': 't1' } });
      expect(outcome).toMatchObject({ status: 'succeeded', origin: 'backup', attempts: 2 });
      expect(await t.run({ path: '/me', headers: { Authorization: 'Basic app-own' } })).toMatchObject({
        origin: 'backup',
      });
      expect(primary.seen.map((seen) => [seen.path, seen.authorization, seen.cookie])).toEqual([
        ['/me', 'Bearer user-token', 'sid=secret'],
      ]);
      expect(backup.seen.map((seen) => [seen.path, seen.authorization, seen.cookie])).toEqual([
        ['/me', undefined, undefined],
        ['/me', undefined, undefined],
      ]);
      expect(auth.headers.mock.calls.map(([origin]) => origin)).toEqual(['primary']);
    });
  });

  describe('8. offline (rule 6)', () => {
    it('sends nothing while offline, and counts nothing against the primary', async () => {
      const connectivity = manualConnectivity('offline');
      const t = await setup({ connectivity });
      const { primary, backup } = t.origins as Record<'primary' | 'backup', TestOrigin>;

      for (let i = 0; i < 10; i++) {
        expect(await t.run({ path: '/items' })).toEqual({
          status: 'failed',
          reason: 'offline',
          attempts: 0,
          elapsedMs: 0,
        });
        expect(await t.run({ method: 'POST', path: '/orders', body: 'x' })).toMatchObject({
          status: 'failed',
          reason: 'offline',
        });
      }
      expect(primary.seen).toEqual([]);
      expect(backup.seen).toEqual([]);
      expect(t.client.health()).toEqual({
        state: 'healthy',
        activeOrigin: 'primary',
        since: 0,
        holdUntil: {},
      });
      expect(t.changes).toEqual([]);

      connectivity.set('online');
      expect(await t.run({ path: '/items' })).toMatchObject({ status: 'succeeded', origin: 'primary' });
      expect(t.lines('primary')).toEqual(['GET /items']);
    });

    it('does not count a failure that comes back while offline', async () => {
      const connectivity = manualConnectivity('online');
      const t = await setup({ connectivity, policy: oneAttempt });
      const { primary, backup } = t.origins as Record<'primary' | 'backup', TestOrigin>;
      primary.behave = hang;

      // Ten requests go out while online; the device goes offline before each connection breaks.
      for (let i = 0; i < 10; i++) {
        const arrived = primary.server.nextRequest();
        const pending = t.client.request({ path: '/items' });
        await arrived;
        connectivity.set('offline');
        for (const socket of primary.server.sockets) socket.destroy();
        expect(await pending).toMatchObject({ status: 'failed', failure: { class: 'connection-lost' } });
        connectivity.set('online');
      }
      expect(primary.seen).toHaveLength(10);
      expect(backup.seen).toEqual([]);
      expect(t.client.health()).toMatchObject({ state: 'healthy', activeOrigin: 'primary' });
      expect(t.changes).toEqual([]);

      // The same breaks while online do count: two in a row make it suspect, five fail over.
      for (let i = 0; i < 5; i++) {
        const arrived = primary.server.nextRequest();
        const pending = t.client.request({ path: '/items' });
        await arrived;
        for (const socket of primary.server.sockets) socket.destroy();
        await pending;
      }
      expect(t.client.health()).toMatchObject({ state: 'failedOver', activeOrigin: 'backup' });
    });

    it('going online does not mark a failed-over primary healthy', async () => {
      const connectivity = manualConnectivity('online');
      const t = await setup({ connectivity, policy: oneAttempt });
      const { primary } = t.origins as Record<'primary' | 'backup', TestOrigin>;
      primary.behave = unavailable;
      for (let i = 0; i < 5; i++) await t.run({ path: '/items' });
      expect(t.client.health()).toEqual({
        state: 'failedOver',
        activeOrigin: 'backup',
        since: 0,
        holdUntil: {},
      });
      primary.behave = up;

      await t.advance(5_000);
      connectivity.set('offline');
      await t.advance(5_000);
      connectivity.set('online');
      connectivity.set('changed');
      await t.advance(5_000);
      expect(t.client.health()).toEqual({
        state: 'failedOver',
        activeOrigin: 'backup',
        since: 0,
        holdUntil: {},
      });
      expect(await t.run({ path: '/items' })).toMatchObject({ status: 'succeeded', origin: 'backup' });
      expect(primary.seen).toHaveLength(5);
      expect(t.changes.map((change) => change.to)).toEqual(['suspect', 'failedOver']);
    });

    // Regression (rule 6): probes used to go out whatever the connectivity source said.
    it('sends no probe to the primary while offline', async () => {
      const connectivity = manualConnectivity('online');
      const t = await setup({ connectivity, policy: oneAttempt });
      const { primary } = t.origins as Record<'primary' | 'backup', TestOrigin>;
      primary.behave = unavailable;
      for (let i = 0; i < 5; i++) await t.run({ path: '/items' });
      primary.behave = up;
      connectivity.set('offline');

      await t.advance(60_000);
      expect(primary.seen.filter((seen) => seen.method === 'HEAD')).toEqual([]);
      expect(t.client.health().state).not.toBe('healthy');
    });
  });

  describe('9. the failback dwell: no flapping back to the backup, no staying on a dead primary', () => {
    /** Fails over on five 503s, then fails back on the probes at 30, 35 and 40 s. */
    async function failOverAndBack(t: Setup) {
      const { primary } = t.origins as Record<'primary' | 'backup', TestOrigin>;
      primary.behave = unavailable;
      for (let i = 0; i < 5; i++) await t.run({ path: '/items' });
      primary.behave = up;
      await t.advance(40_000);
      expect(t.changes.at(-1)).toMatchObject({ to: 'healthy', criterion: 'probes-succeeded', at: 40_000 });
    }
    /** Every other request gets a 503: half fail, never two in a row. */
    const everyOther = (): Behaviour => {
      let n = 0;
      return (context) => (n++ % 2 === 0 ? unavailable(context) : up(context));
    };

    it('keeps traffic on a primary that fails half its requests within failbackDwellMs of the failback, and leaves it after', async () => {
      const t = await setup({ policy: oneAttempt });
      const { primary, backup } = t.origins as Record<'primary' | 'backup', TestOrigin>;
      const { failbackDwellMs, failureRatio, minRequests } = defaultPolicy.health;
      expect([failbackDwellMs, failureRatio, minRequests]).toEqual([30_000, 0.5, 10]);
      await failOverAndBack(t);
      const backupBefore = backup.seen.length;
      primary.behave = everyOther();
      // 20 reads in the dwell, one a second: 10 of 20 failed, which the failure ratio alone would fail over on.
      for (let i = 0; i < 20; i++) {
        expect(await t.run({ path: '/items' })).toMatchObject({ origin: 'primary' });
        await t.advance(1_000);
      }
      expect(t.client.health().activeOrigin).toBe('primary');
      expect(backup.seen).toHaveLength(backupBefore);
      // After the dwell (70 s), the same answers fail traffic over on the failure ratio.
      await t.advance(70_000 - t.clock.now());
      for (let i = 0; i < 4 && t.client.health().state !== 'failedOver'; i++) await t.run({ path: '/items' });
      expect(t.changes.at(-1)).toMatchObject({ to: 'failedOver', criterion: 'failure-ratio' });
      expect(t.changes.at(-1)!.at).toBeGreaterThanOrEqual(70_000);
    });

    it('leaves a primary that is down again right after the failback after dwellFailoverAfter failures in a row', async () => {
      const t = await setup({ policy: oneAttempt });
      const { primary } = t.origins as Record<'primary' | 'backup', TestOrigin>;
      const { dwellFailoverAfter } = defaultPolicy.health;
      expect(dwellFailoverAfter).toBe(10);
      await failOverAndBack(t);
      const before = primary.seen.length;
      primary.behave = unavailable;
      for (let i = 0; i < dwellFailoverAfter - 1; i++)
        expect(await t.run({ path: '/items' })).toMatchObject({ status: 'failed', origin: 'primary' });
      expect(t.client.health().activeOrigin).toBe('primary');
      expect(await t.run({ path: '/items' })).toMatchObject({ status: 'failed', origin: 'primary' });
      expect(t.client.health()).toMatchObject({ state: 'failedOver', activeOrigin: 'backup' });
      expect(t.changes.at(-1)).toMatchObject({
        to: 'failedOver',
        criterion: 'consecutive-failures',
        at: 40_000,
      });
      expect(primary.seen.length - before).toBe(dwellFailoverAfter);
      expect(await t.run({ path: '/items' })).toMatchObject({ status: 'succeeded', origin: 'backup' });
      // A failover so soon after a failback: the next dwell on the backup is twice as long (60 s); the probe
      // then meets the 503 and the wait after it is reprobeAfterMs, jittered.
      await t.advance(59_000);
      expect(primary.seen.filter((seen) => seen.method === 'HEAD' && seen.at > 40_000)).toEqual([]);
      await t.advance(1_000);
      expect(primary.seen.filter((seen) => seen.method === 'HEAD' && seen.at > 40_000)).toMatchObject([
        { at: 100_000 },
      ]);
      expect(t.changes.slice(-2).map(({ to, criterion, at }) => [to, criterion, at])).toEqual([
        ['probingFailback', 'min-failed-over-elapsed', 100_000],
        ['failedOver', 'probe-failed', 100_000],
      ]);
    });
  });
});
