import { createActor, fromPromise } from 'xstate';
import { healthStateOf, originHealthMachine } from '../../machines/origin-health/origin-health.machine.js';
import { selectOrigin } from '../../machines/origin-health/select-origin.js';
import type {
  HealthChanged,
  HealthOrigin,
  HealthState,
  OriginHealthEvent,
  ProbeInput,
  ProbeOutput,
} from '../../machines/origin-health/origin-health.types.js';
import type { Clock } from '../clock/clock.js';
import type { ConnectivitySource } from '../connectivity/connectivity-source.js';
import type { Policy } from '../policy/policy.js';
import type { InspectOption } from './client-options.js';

/** What `client.health()` returns. */
export interface HealthSnapshot {
  state: HealthState;
  /** The origin the next read goes to; `undefined` when none may take it. */
  activeOrigin: string | undefined;
  /** When `state` began, on the client's clock. */
  since: number;
}

export interface HealthMonitor {
  /** The origin of the next attempt (rule 7), or `undefined`: `no-healthy-origin`. */
  choose(write: boolean): string | undefined;
  /** An attempt's outcome, as the request machine reports it. */
  report(event: Extract<OriginHealthEvent, { type: 'attempt.succeeded' | 'attempt.failed' }>): void;
  health(): HealthSnapshot;
  /** Stops the machine, its timers and any probe in flight, and stops listening to connectivity. */
  stop(): void;
}

/**
 * Runs the origin set's `originHealthMachine`: the one place that creates it. Feeds it connectivity hints,
 * provides the probe, and reads its snapshot to choose origins.
 */
export function createHealthMonitor(options: {
  origins: readonly HealthOrigin[];
  policy: Policy;
  clock: Clock;
  probe: (input: ProbeInput, signal: AbortSignal) => Promise<ProbeOutput>;
  connectivity?: ConnectivitySource | undefined;
  onChange?: ((change: HealthChanged, activeOrigin: string | undefined) => void) | undefined;
  inspect?: InspectOption | undefined;
}): HealthMonitor {
  const { clock, connectivity } = options;
  const machine = originHealthMachine.provide({
    actors: {
      probe: fromPromise(({ input, signal }: { input: ProbeInput; signal: AbortSignal }) =>
        options.probe(input, signal),
      ),
    },
  });
  const actor = createActor(machine, {
    input: {
      origins: options.origins,
      policy: options.policy,
      now: clock.now(),
      online: connectivity?.current() !== 'offline',
    },
    clock,
    // xstate's options type has no `| undefined`; an undefined inspect is ignored at runtime.
    inspect: options.inspect!,
  });
  const state = () => healthStateOf(actor.getSnapshot().value);
  const choose = (write: boolean) => selectOrigin(actor.getSnapshot().context, state(), write, clock.now());
  actor.on('health-changed', (change) => options.onChange?.(change, choose(false)));
  const unsubscribe = connectivity?.subscribe((hint) => {
    if (hint !== 'changed')
      actor.send({ type: 'connectivity.changed', online: hint === 'online', at: clock.now() });
  });
  actor.start();

  return {
    choose,
    report: (event) => actor.send(event),
    health: () => ({ state: state(), activeOrigin: choose(false), since: actor.getSnapshot().context.since }),
    stop() {
      unsubscribe?.();
      actor.stop();
    },
  };
}
