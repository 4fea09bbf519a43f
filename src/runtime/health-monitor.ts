import { healthStateOf } from '../policy/health-state.js';
import { originHealthLogic } from '../../machines/origin-health/origin-health.logic.js';
import { originHealthTable } from '../../machines/origin-health/origin-health.table.js';
import { selectOrigin } from '../policy/select-origin.js';
import type {
  HealthChanged,
  HealthOrigin,
  HealthState,
  OriginHealthContext,
  OriginHealthEvent,
  ProbeInput,
  ProbeOutput,
} from '../../machines/origin-health/origin-health.types.js';
import type { Clock } from '../clock/clock.js';
import { isConnectivityHint, type ConnectivitySource } from '../connectivity/connectivity-source.js';
import type { Policy } from '../policy/policy.js';
import type { MachineRun, MachineRunner } from '../engine/machine-runner.js';
import { probeAcrossChange } from './probe-across-change.js';
import type { ServerHolds } from './server-holds.js';

const originHealthDefinition = { table: originHealthTable, logic: originHealthLogic };

/** What `client.health()` returns. */
export interface HealthSnapshot {
  state: HealthState;
  /** The origin the next read goes to; `undefined` when none may take it. */
  activeOrigin: string | undefined;
  /** When `state` began, on the client's clock. */
  since: number;
  /**
   * The server holds in force, by origin id: until when (on the client's clock) the origin asked, with
   * a 429 or 503 and a Retry-After, to get no new attempt. Empty when none is.
   */
  holdUntil: Readonly<Record<string, number>>;
}

export interface HealthMonitor {
  /**
   * The origin of the next attempt (rule 7), or `undefined`: `no-healthy-origin`. `avoid`: the origins that
   * already failed the request being retried, passed over when another may take it (src/policy/select-origin.ts).
   */
  choose(write: boolean, avoid?: readonly string[]): string | undefined;
  /** The origin `choose` would name if every origin under a server hold were out of the running. */
  chooseUnheld(write: boolean, avoid?: readonly string[]): string | undefined;
  /** An attempt's outcome, as the request machine reports it. */
  report(event: Extract<OriginHealthEvent, { type: 'attempt.succeeded' | 'attempt.failed' }>): void;
  health(): HealthSnapshot;
  /** Stops the machine, its timers and any probe in flight, and stops listening to connectivity. */
  stop(): void;
}

/**
 * Runs the origin set's `originHealthMachine`: the one place that creates it. Feeds it connectivity hints,
 * provides the probe (sent again at once when the network changes under it, so that a socket of the old network
 * does not fail it), and reads its snapshot to choose origins.
 */
export function createHealthMonitor(options: {
  origins: readonly HealthOrigin[];
  policy: Policy;
  clock: Clock;
  probe: (input: ProbeInput, signal: AbortSignal) => Promise<ProbeOutput>;
  connectivity?: ConnectivitySource | undefined;
  onChange?: ((change: HealthChanged, activeOrigin: string | undefined) => void) | undefined;
  runner: MachineRunner;
  /** The client's server holds. */
  holds: ServerHolds;
  /** The seed of the health machine's jitter (`OriginHealthInput.seed`). */
  seed?: number | undefined;
}): HealthMonitor {
  const { clock, connectivity, holds } = options;
  const probes = probeAcrossChange(options.probe);
  const state = () => healthStateOf(machine.value);
  const choose = (write: boolean, avoid?: readonly string[]) =>
    selectOrigin(machine.context, state(), write, clock.now(), undefined, avoid);
  const chooseUnheld = (write: boolean, avoid?: readonly string[]) => {
    const now = clock.now();
    return selectOrigin(
      machine.context,
      state(),
      write,
      now,
      (origin) => holds.until(origin, now) !== undefined,
      avoid,
    );
  };
  const input = {
    origins: options.origins,
    policy: options.policy,
    now: clock.now(),
    online: connectivity?.current() !== 'offline',
    seed: options.seed,
  };
  const machine: MachineRun<OriginHealthContext> = options.runner
    .prepare(originHealthDefinition, { clock, actors: { probe: probes.probe } })
    .start(input, {
      emitted: (event) => {
        if (event.type === 'health-changed') options.onChange?.(event as HealthChanged, choose(false));
      },
    });
  // The client subscribed first, so on `changed` the transport's pool is already dropped when a probe is resent.
  const unsubscribe = connectivity?.subscribe((hint) => {
    // A hint failwise does not know (the client's own listener refuses it) changes nothing.
    if (!isConnectivityHint(hint)) return;
    if (hint === 'changed') probes.changed();
    else machine.send({ type: 'connectivity.changed', online: hint === 'online', at: clock.now() });
  });

  return {
    choose,
    chooseUnheld,
    report: (event) => machine.send(event),
    health: () => ({
      state: state(),
      activeOrigin: choose(false),
      since: machine.context.since,
      holdUntil: holds.inForce(clock.now()),
    }),
    stop() {
      unsubscribe?.();
      machine.stop();
    },
  };
}
