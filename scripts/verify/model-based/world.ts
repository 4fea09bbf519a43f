import type { ServerResponse } from 'node:http';
import { simulatedClock, type SimulatedClock } from '../../../src/clock/simulated-clock.js';
import {
  manualConnectivity,
  type ManualConnectivity,
} from '../../../src/connectivity/manual-connectivity.js';
import { createFailoverClient, type FailoverClient } from '../../../src/runtime/create-failover-client.js';
import type { FailoverClientOptions } from '../../../src/runtime/client-options.js';
import type { Outcome } from '../../../src/policy/outcome.js';
import { memoryStore } from '../../../src/stores/memory-store.js';
import type {
  ClaimAnswer,
  ClaimRequest,
  OutboxEntry,
  OutboxStore,
} from '../../../src/stores/outbox-store.js';
import { fetchTransport } from '../../../src/transports/fetch-transport.js';
import type { Transport } from '../../../src/transports/transport.js';
import {
  startServer,
  type HandlerContext,
  type LoopbackServer,
} from '../../../test/helpers/loopback-server.js';
import type { CoverageRunner } from '../coverage-runner.js';

/**
 * One real client for a model-based scenario: `createFailoverClient` with the real `fetchTransport`, two real
 * HTTP origins on 127.0.0.1 (primary and backup), a simulated clock for every wait, a manual connectivity
 * source, and a real `memoryStore`. Its machines run in the lean executor through the coverage runner, which
 * counts the transitions taken. Faults the loopback servers cannot make are scripted at the client's own
 * seams, as an app's code would make them: a transport whose `send` rejects, a store method that throws.
 *
 * How time moves: the clock moves only once nothing is on the wire but requests a server holds unanswered on
 * purpose (`hang`), so a real answer always lands at the simulated instant its request was sent.
 */
export type Behaviour = (context: HandlerContext, held: (res: ServerResponse) => void) => void;

export const answer =
  (status: number, headers: Record<string, string> = {}): Behaviour =>
  ({ res }) => {
    res.writeHead(status, headers);
    res.end(status < 400 ? 'ok' : 'not now');
  };
/** Reads the whole request and never answers: the client's attempt timeout or budget ends it. */
export const hang: Behaviour = ({ res }, held) => held(res);
/** Reads the whole request, then drops the connection without a word: the write's fate is unknown. */
export const drop: Behaviour = ({ req }) => req.socket.destroy();

export interface TestOrigin {
  readonly id: 'primary' | 'backup';
  readonly server: LoopbackServer;
  /** What the next requests get, in order; `fallback` once they are used up. */
  next(...behaviours: Behaviour[]): void;
  fallback: Behaviour;
  /** Requests this origin received (probes included). */
  readonly received: number;
}

/** A store method the scenario makes throw (its next calls), as a database that is down would. */
export type StoreMethod = 'list' | 'acquireLease' | 'releaseLease' | 'get' | 'update' | 'remove';

export interface World {
  readonly clock: SimulatedClock;
  readonly client: FailoverClient;
  readonly primary: TestOrigin;
  readonly backup: TestOrigin;
  readonly connectivity: ManualConnectivity;
  /** The real memory store the client's outbox uses. */
  readonly store: OutboxStore;
  /** The next `n` calls of `method` throw. */
  failStore(method: StoreMethod, n?: number): void;
  /**
   * Holds the call of `method` after the next `skip` ones until `release()`: a slow database, so that the
   * scenario can act while the call is pending. `reached` resolves when the held call is made.
   */
  holdStore(method: StoreMethod, skip?: number): { reached: Promise<void>; release(): void };
  /** The transport's next `n` sends reject (an app's transport that throws). */
  rejectSends(n?: number): void;
  /** Resolves once nothing is on the wire but held requests, and the machines have taken in every answer. */
  idle(): Promise<void>;
  /** Moves the clock to its next timer (after `idle`); false when no timer is armed. */
  step(): Promise<boolean>;
  /** Moves the clock `ms` forward, timer by timer, letting every answer land at its instant. */
  advance(ms: number): Promise<void>;
  /** Waits for `pending`, moving the clock timer by timer while nothing is on the wire. */
  drive<T>(pending: Promise<T>): Promise<T>;
  /** `client.request(...)`, driven to its outcome. */
  run(request: Parameters<FailoverClient['request']>[0]): Promise<Outcome>;
  close(): Promise<void>;
}

export type WorldOptions = Omit<
  FailoverClientOptions,
  'origins' | 'clock' | 'transport' | 'inspect' | 'connectivity' | 'store'
> & {
  /** The origins' settings besides their URLs. */
  origins?: { primary?: { accepts?: 'all' | 'reads' }; backup?: { accepts?: 'all' | 'reads' } | false };
  /** Where the connectivity source starts. */
  online?: 'online' | 'offline';
  /** Store calls that throw from the start (the outbox loads as the client is made). */
  storeFaults?: Partial<Record<StoreMethod, number>>;
  /**
   * The store has per-entry claims (`OutboxStore.claims`, as `postgresStore` has), and another runner holds
   * every entry until this clock time: a claim before then is answered `taken`.
   */
  anotherRunnerHoldsUntil?: number;
};

const realTick = () => new Promise<void>((resolve) => setImmediate(resolve));

export async function createWorld(coverage: CoverageRunner, options: WorldOptions = {}): Promise<World> {
  const {
    origins: originOptions = {},
    online = 'online',
    storeFaults = {},
    anotherRunnerHoldsUntil,
    ...clientOptions
  } = options;
  const clock = simulatedClock();
  const heldResponses = new Set<ServerResponse>();
  const hold = (res: ServerResponse) => {
    heldResponses.add(res);
    res.on('close', () => heldResponses.delete(res));
  };
  const origin = async (id: 'primary' | 'backup'): Promise<TestOrigin> => {
    const queue: Behaviour[] = [];
    let received = 0;
    const self = {
      id,
      fallback: answer(200),
      next: (...behaviours: Behaviour[]) => void queue.push(...behaviours),
      get received() {
        return received;
      },
    } as TestOrigin & { server: LoopbackServer };
    self.server = await startServer((context) => {
      received += 1;
      (queue.shift() ?? self.fallback)(context, hold);
    });
    return self;
  };
  const primary = await origin('primary');
  const backup = await origin('backup');

  const inner = fetchTransport();
  const onTheWire = new Set<Promise<unknown>>();
  let rejecting = 0;
  const transport: Transport = {
    name: 'fetch (watched)',
    send(request) {
      if (rejecting > 0) {
        rejecting -= 1;
        return Promise.reject(new Error('scripted transport fault'));
      }
      const sent = inner.send(request);
      onTheWire.add(sent);
      const done = () => void onTheWire.delete(sent);
      sent.then(done, done);
      return sent;
    },
  };

  const store = memoryStore();
  const failing = new Map<StoreMethod, number>(Object.entries(storeFaults) as [StoreMethod, number][]);
  const holds = new Map<StoreMethod, { skip: number; reached: () => void; released: Promise<void> }>();
  const faulty: OutboxStore = Object.create(store) as OutboxStore;
  for (const method of ['list', 'acquireLease', 'releaseLease', 'get', 'update', 'remove'] as const) {
    const real = store[method].bind(store) as (...args: unknown[]) => Promise<unknown>;
    (faulty as unknown as Record<string, unknown>)[method] = (...args: unknown[]) => {
      const left = failing.get(method) ?? 0;
      if (left > 0) {
        failing.set(method, left - 1);
        return Promise.reject(new Error(`scripted store fault: ${method}`));
      }
      const hold = holds.get(method);
      if (hold !== undefined && hold.skip-- === 0) {
        holds.delete(method);
        hold.reached();
        return hold.released.then(() => real(...args));
      }
      return real(...args);
    };
  }
  faulty.add = store.add.bind(store);
  faulty.close = store.close.bind(store);
  if (anotherRunnerHoldsUntil !== undefined) {
    const until = anotherRunnerHoldsUntil;
    // Typed by use, not annotated: a store's claims may have more methods than this version's interface.
    const claims = {
      add: (entry: OutboxEntry) => faulty.add(entry),
      async claim({ id, attempts, now }: ClaimRequest): Promise<ClaimAnswer> {
        const stored = await faulty.get(id);
        if (!stored) return { status: 'missing' };
        if (now < until) return { status: 'taken', until };
        if (stored.status !== 'pending' || stored.attempts !== attempts - 1)
          return { status: 'stale', stored };
        await faulty.update({ ...stored, attempts });
        return { status: 'claimed' };
      },
      heldElsewhere: async (_owner: string, now: number) =>
        now < until ? (await faulty.list()).map((e) => ({ id: e.id, until })) : [],
      async gone(ids: readonly string[]) {
        const stored = new Set((await faulty.list()).map((e) => e.id));
        return ids.filter((id) => !stored.has(id));
      },
      renew: () => Promise.resolve(),
      releaseAll: () => Promise.resolve(),
    };
    Object.assign(faulty, { claims: claims });
  }

  const connectivity = manualConnectivity(online);
  const client = createFailoverClient({
    random: () => 0.5,
    ...clientOptions,
    origins: [
      { id: 'primary', url: primary.server.url, allowInsecure: true, ...originOptions.primary },
      ...(originOptions.backup === false
        ? []
        : [{ id: 'backup', url: backup.server.url, allowInsecure: true, ...originOptions.backup }]),
    ],
    clock,
    transport,
    connectivity,
    store: faulty,
    inspect: { runner: coverage.runner },
  });

  const idle = async () => {
    for (let round = 0; round < 1000; round++) {
      await realTick();
      if (onTheWire.size <= heldResponses.size) {
        await realTick();
        if (onTheWire.size <= heldResponses.size) return;
      }
      await Promise.race([Promise.allSettled([...onTheWire]), new Promise((r) => setTimeout(r, 5))]);
    }
    throw new Error('the network never went quiet');
  };
  const step = async () => {
    await idle();
    const at = clock.nextTimerAt();
    if (at === undefined) return false;
    await clock.set(at);
    await idle();
    return true;
  };
  const advance = async (ms: number) => {
    const end = clock.now() + ms;
    for (;;) {
      await idle();
      const at = clock.nextTimerAt();
      if (at === undefined || at > end) break;
      await clock.set(at);
    }
    await clock.set(end);
    await idle();
  };
  const drive = async <T>(pending: Promise<T>): Promise<T> => {
    let settled = false;
    pending.then(
      () => (settled = true),
      () => (settled = true),
    );
    for (let steps = 0; steps < 10_000; steps++) {
      await idle();
      if (settled) return pending;
      if (!(await step())) {
        await idle();
        if (settled) return pending;
        throw new Error('nothing left to happen and the promise is still pending');
      }
    }
    throw new Error('the promise did not settle within 10,000 timers');
  };

  return {
    clock,
    client,
    primary,
    backup,
    connectivity,
    store,
    failStore: (method, n = 1) => void failing.set(method, n),
    holdStore(method, skip = 0) {
      let reached!: () => void;
      let release!: () => void;
      const reachedPromise = new Promise<void>((resolve) => (reached = resolve));
      const released = new Promise<void>((resolve) => (release = resolve));
      holds.set(method, { skip, reached, released });
      return { reached: reachedPromise, release };
    },
    rejectSends: (n = 1) => void (rejecting = n),
    idle,
    step,
    advance,
    drive,
    run: (request) => drive(client.request(request)),
    async close() {
      await drive(client.close());
      for (const res of heldResponses) res.destroy();
      await Promise.all([primary.server.close(), backup.server.close()]);
    },
  };
}
