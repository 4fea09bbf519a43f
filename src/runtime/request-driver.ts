import { createActor, fromPromise } from 'xstate';
import { requestMachine } from '../../machines/request/request.machine.js';
import type {
  AttemptInput,
  AttemptOutput,
  ChooseOriginInput,
  ChooseOriginOutput,
  ClaimRetryInput,
  ClaimRetryOutput,
  ReconcileInput,
  ReconcileOutput,
  RefreshAuthInput,
  RefreshAuthOutput,
  RequestMachineEmitted,
  RequestMachineInput,
  RequestMachineOutput,
} from '../../machines/request/request.types.js';
import type { Clock } from '../clock/clock.js';
import type { InspectOption } from './client-options.js';

/** The effects a request needs, as plain async functions: the driver turns them into machine actors. */
export interface RequestEffects {
  transport(input: AttemptInput, signal: AbortSignal): Promise<AttemptOutput>;
  chooseOrigin?: ((input: ChooseOriginInput, signal: AbortSignal) => Promise<ChooseOriginOutput>) | undefined;
  claimRetry?: ((input: ClaimRetryInput, signal: AbortSignal) => Promise<ClaimRetryOutput>) | undefined;
  refreshAuth?: ((input: RefreshAuthInput, signal: AbortSignal) => Promise<RefreshAuthOutput>) | undefined;
  reconcile?: ((input: ReconcileInput, signal: AbortSignal) => Promise<ReconcileOutput>) | undefined;
}

export interface RunningRequest {
  /** Settles once, with the machine's output, when the request reaches a final state. */
  readonly done: Promise<RequestMachineOutput>;
  /** Ends the request at once as `failed` / `cancelled`; aborts what is in flight. */
  cancel(): void;
  /** Passes on a connectivity hint (CONTRACT rule 6): offline stops further attempts, online allows them. */
  connectivity(state: 'online' | 'offline'): void;
}

export interface RequestDriver {
  run(input: RequestMachineInput, onEmitted: (event: RequestMachineEmitted) => void): RunningRequest;
}

/**
 * The one seam between failwise and XState's actor runtime: nothing else creates or touches a request
 * actor. A leaner executor (pure `transition()` steps) can replace this file without changing callers.
 */
export function createRequestDriver(
  effects: RequestEffects,
  options: {
    clock: Clock;
    inspect?: InspectOption | undefined;
  },
): RequestDriver {
  // Each effect becomes the promise actor of the same name; an effect left out keeps the machine's default.
  const actors: Record<string, unknown> = {};
  for (const [name, effect] of Object.entries(effects) as [
    string,
    RequestEffects['transport'] | undefined,
  ][]) {
    if (effect)
      actors[name] = fromPromise(({ input, signal }: { input: never; signal: AbortSignal }) =>
        effect(input, signal),
      );
  }
  const machine = requestMachine.provide({ actors });

  return {
    run(input, onEmitted) {
      // xstate's options type has no `| undefined`; an undefined inspect is ignored at runtime.
      const actor = createActor(machine, { input, clock: options.clock, inspect: options.inspect! });
      const done = new Promise<RequestMachineOutput>((resolve, reject) => {
        actor.subscribe({
          complete: () => {
            const output = actor.getSnapshot().output;
            // Stopping the finished actor clears its timers and releases its children.
            actor.stop();
            if (output === undefined) reject(new Error('requestMachine finished without output'));
            else resolve(output);
          },
          error: (error) => reject(error instanceof Error ? error : new Error(String(error))),
        });
      });
      actor.on('*', onEmitted);
      actor.start();
      return {
        done,
        cancel: () => {
          if (actor.getSnapshot().status === 'active') actor.send({ type: 'request.cancel' });
        },
        connectivity: (state) => {
          if (actor.getSnapshot().status === 'active') actor.send({ type: `connectivity.${state}` });
        },
      };
    },
  };
}
