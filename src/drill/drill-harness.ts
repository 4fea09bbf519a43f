/**
 * What a drill scenario works with: a simulated clock, real origins on 127.0.0.1, clients wired to the
 * drill's network and recorder, and `drive`, which moves simulated time only while the wire is quiet.
 * The harness records every decision event and every request an origin saw, and turns them into the
 * scenario's report (src/drill/drill-report.ts). `finish()` closes every client, origin and timer it made.
 */
import { createServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import { simulatedClock, type SimulatedClock } from '../clock/simulated-clock.js';
import type { FailoverClientOptions } from '../runtime/client-options.js';
import { createFailoverClient, type FailoverClient } from '../runtime/create-failover-client.js';
import type { DecisionEvent } from '../runtime/decision-events.js';
import type { FailoverRequest } from '../runtime/prepare-request.js';
import type { Outcome } from '../policy/outcome.js';
import { drillNetwork } from './drill-network.js';
import { seededRandom } from './seeded-random.js';
import { startDrillOrigin, type Behaviour, type DrillOrigin } from './drill-origin.js';
import type { DrillCheck, TimelineEvent } from './drill-report.js';

/** Client options a scenario chooses; the drill supplies the clock, the transport and the event log. */
export type DrillClientOptions = Omit<FailoverClientOptions, 'clock' | 'transport' | 'onEvent'>;

export interface DrillContext {
  clock: SimulatedClock;
  /** Starts a real HTTP origin on 127.0.0.1. */
  origin(id: string, behave?: Behaviour): Promise<DrillOrigin>;
  /** A URL whose host name does not resolve (a DNS failure), for the origin `id`. */
  unresolvableUrl(id: string): string;
  /** A 127.0.0.1 URL on a port nobody listens on (connection refused), for the origin `id`. */
  refusedUrl(id: string): Promise<string>;
  /** A client on the drill's clock and network; its decision events are recorded. Closed by `finish()`. */
  client(options: DrillClientOptions): FailoverClient;
  /** Waits for `pending`, moving simulated time from timer to timer while the wire is quiet. */
  drive<T>(pending: Promise<T>): Promise<T>;
  /** `client.request` for each request at once, driven to their outcomes, which are recorded. */
  run(client: FailoverClient, request: FailoverRequest): Promise<Outcome>;
  runAll(client: FailoverClient, requests: readonly FailoverRequest[]): Promise<Outcome[]>;
  /** Records an outcome the scenario drove itself. */
  recordOutcome(outcome: Outcome): void;
  /** Moves simulated time `ms` forward, firing timers at their due times, letting the wire settle after each. */
  advance(ms: number): Promise<void>;
  /** Lets the wire and promises settle without moving time. */
  settle(): Promise<void>;
  /** Marks a moment on the timeline (`offline`, `primary down`). */
  mark(label: string): void;
  /** Every decision event so far, stamped with the simulated time it was emitted. */
  readonly events: readonly TimelineEvent[];
  /** The delay of every `retry-scheduled` event so far, in order. */
  waitsMs(): number[];
  /** One line of the verdict. */
  check(label: string, pass: boolean, detail?: string): void;
  /** `check` that `actual` equals `expected`, showing `actual` when it does not. */
  expectEqual(label: string, actual: unknown, expected: unknown): void;
}

export interface DrillRecording {
  events: TimelineEvent[];
  outcomes: Outcome[];
  origins: DrillOrigin[];
  /** Origins with no server behind them (unresolvable or refusing): they see nothing. */
  silentOrigins: string[];
  checks: DrillCheck[];
  marks: Array<{ at: number; label: string }>;
  /** Simulated time since the scenario began. */
  elapsed(): number;
}

/** How long a scenario may run in simulated time before `drive` gives up on it. */
const DRIVE_LIMIT_MS = 3_600_000;

/** Attempts the outcome counts; a `deferred` one carries none (0). */
export function attemptsOf(outcome: Outcome): number {
  return outcome.status === 'deferred' ? 0 : outcome.attempts;
}

export function outcomeLabel(outcome: Outcome): string {
  if (outcome.status === 'failed') return `failed ${outcome.reason}`;
  if (outcome.status === 'deferred') return `deferred ${outcome.reason}`;
  return outcome.stale ? 'succeeded (stale)' : outcome.reconciled ? 'succeeded (reconciled)' : 'succeeded';
}

export interface DrillHarnessOptions {
  /** Passed to every client the scenario makes (`npm run inspect` gives the Stately inspector's). */
  inspect?: FailoverClientOptions['inspect'];
  /**
   * Real milliseconds to wait per simulated second each time the clock moves (at most 1 s per move), so a
   * person watching the inspector can follow. @default 0: as fast as the wire allows
   */
  paceMsPerSecond?: number;
}

export function createDrillHarness(options: DrillHarnessOptions = {}): {
  context: DrillContext;
  recording: DrillRecording;
  finish: () => Promise<void>;
} {
  const clock = simulatedClock();
  const startedAt = clock.now();
  const origins: DrillOrigin[] = [];
  const silentOrigins: string[] = [];
  const clients: FailoverClient[] = [];
  const events: TimelineEvent[] = [];
  const outcomes: Outcome[] = [];
  const checks: DrillCheck[] = [];
  const marks: Array<{ at: number; label: string }> = [];
  const elapsed = () => clock.now() - startedAt;
  const network = drillNetwork(() => origins.reduce((sum, origin) => sum + origin.held, 0));

  const settle = () => network.quiet();
  const pace = options.paceMsPerSecond ?? 0;
  /** Moves the clock to `t`, then, when pacing, waits in real time in proportion to the simulated step. */
  const moveTo = async (t: number) => {
    const step = t - clock.now();
    await clock.set(t);
    if (pace > 0 && step > 0)
      await new Promise<void>((resolve) => setTimeout(resolve, Math.min(1_000, (step / 1_000) * pace)));
  };

  const drive = async <T>(pending: Promise<T>): Promise<T> => {
    let settled = false;
    const mark = () => (settled = true);
    pending.then(mark, mark);
    for (;;) {
      await settle();
      if (settled) return pending;
      const due = clock.nextTimerAt();
      if (due === undefined)
        throw new Error('drill: the work did not end, nothing is on the wire and no timer is armed');
      if (due - startedAt > DRIVE_LIMIT_MS)
        throw new Error(`drill: the work did not end within ${DRIVE_LIMIT_MS / 60_000} simulated minutes`);
      await moveTo(due);
    }
  };

  const advance = async (ms: number) => {
    const end = clock.now() + ms;
    for (;;) {
      await settle();
      const due = clock.nextTimerAt();
      if (due === undefined || due > end) break;
      await moveTo(due);
    }
    await moveTo(end);
    await settle();
  };

  const recordOutcome = (outcome: Outcome) => void outcomes.push(outcome);

  const context: DrillContext = {
    clock,
    async origin(id, behave) {
      const origin = await startDrillOrigin(id, elapsed, behave ? { behave } : {});
      origins.push(origin);
      return origin;
    },
    unresolvableUrl(id) {
      silentOrigins.push(id);
      return `http://${id}.drill.invalid`;
    },
    refusedUrl: (id) =>
      new Promise((resolve, reject) => {
        silentOrigins.push(id);
        // Bind a port, then let it go: nobody listens on it for the rest of the scenario.
        const probe = createServer();
        probe.once('error', reject);
        probe.listen(0, '127.0.0.1', () => {
          const { port } = probe.address() as AddressInfo;
          probe.close(() => resolve(`http://127.0.0.1:${port}`));
        });
      }),
    client(clientOptions) {
      const client = createFailoverClient({
        // The same jitter on every run, so the drill's table and report are the same every time.
        random: seededRandom(clients.length + 1),
        ...(options.inspect === undefined ? {} : { inspect: options.inspect }),
        ...clientOptions,
        clock,
        transport: network.transport,
        onEvent: (event: DecisionEvent) => events.push({ ...event, at: elapsed() }),
      });
      clients.push(client);
      return client;
    },
    drive,
    async run(client, request) {
      const outcome = await drive(client.request(request));
      recordOutcome(outcome);
      return outcome;
    },
    async runAll(client, requests) {
      const all = await drive(Promise.all(requests.map((request) => client.request(request))));
      all.forEach(recordOutcome);
      return all;
    },
    recordOutcome,
    advance,
    settle,
    events,
    waitsMs: () => events.flatMap((event) => (event.type === 'retry-scheduled' ? [event.delayMs ?? 0] : [])),
    mark: (label) => void marks.push({ at: elapsed(), label }),
    check: (label, pass, detail) =>
      void checks.push(detail === undefined ? { label, pass } : { label, pass, detail }),
    expectEqual(label, actual, expected) {
      const pass = JSON.stringify(actual) === JSON.stringify(expected);
      checks.push(pass ? { label, pass } : { label, pass, detail: `saw ${JSON.stringify(actual)}` });
    },
  };

  const finish = async () => {
    // Closing a client settles its timers and store; the clock is then moved on so nothing stays armed.
    await Promise.allSettled(clients.map((client) => client.close()));
    await Promise.allSettled(origins.map((origin) => origin.close()));
    await network.close();
  };

  return { context, recording: { events, outcomes, origins, silentOrigins, checks, marks, elapsed }, finish };
}
