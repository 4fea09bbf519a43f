import {
  createActor,
  fromPromise,
  type AnyActorRef,
  type AnyStateMachine,
  type InspectionEvent,
  type Observer,
} from 'xstate';
import { MachineError } from '../errors/machine-error.js';
import { replyingActor } from './machine-logic.js';
import type { LeanEffect, LeanStatus } from './lean-actor.js';
import { WithheldError } from '../errors/withheld-error.js';
import type { MachineRun, MachineRunner, RunObserver } from './machine-runner.js';

/** An XState inspection observer or callback (`createBrowserInspector().inspect`, for one). */
export type InspectionObserver = Observer<InspectionEvent> | ((event: InspectionEvent) => void);

/**
 * Runs machines as XState actors, each table by the XState machine of the same id in `machines` (the machines
 * are given, not imported, so the engine stays below machines/ in the layers).
 */
export function createXStateRunner(
  machines: Readonly<Record<string, AnyStateMachine>>,
  inspect?: InspectionObserver,
): MachineRunner {
  return {
    prepare(definition, options) {
      const machine = machines[definition.table.id];
      if (machine === undefined)
        throw new MachineError(`xstateRunner: no machine with id ${definition.table.id}`);
      const actors: Record<string, unknown> = {};
      for (const [name, effect] of Object.entries(options.actors)) actors[name] = promiseActor(effect);
      for (const [name, run] of Object.entries(options.spawned ?? {})) actors[name] = replyingActor(run);
      const provided = machine.provide({ actors } as never);
      const { runEffects, contextInputs } = options;
      return {
        start: (input, observer) =>
          startActor(
            runEffects && observer
              ? provided.provide({ actors: ownActors(runEffects, observer, contextInputs) } as never)
              : provided,
            input,
            options.clock,
            observer,
            inspect,
          ),
      };
    },
  };
}

/**
 * An effect as an XState actor: a promise either way, so an effect that answers at once, or throws, settles the
 * promise. What it threw reaches the machine (and so the inspector) by name only.
 */
function promiseActor(effect: LeanEffect, self?: unknown, readsContext = false) {
  return fromPromise(({ input, signal, self: actor }: PromiseArgs) =>
    Promise.resolve()
      // An effect that reads the machine's context (`contextInputs`) gets its invoker's, as in the lean executor.
      .then(() => effect.call(self, (readsContext ? contextOf(actor._parent) : input) as never, signal))
      .catch((error: unknown) => {
        throw new WithheldError(error);
      }),
  );
}

type PromiseArgs = { input: unknown; signal: AbortSignal; self: { _parent?: AnyActorRef | undefined } };

/** The context of the machine that invoked an actor. */
function contextOf(parent: AnyActorRef | undefined): unknown {
  return (parent?.getSnapshot() as { context?: unknown } | undefined)?.context;
}

/** The effects one run answers itself (`runEffects`): its observer's methods, as that run's own actors. */
function ownActors(
  names: ReadonlySet<string>,
  observer: RunObserver,
  contextInputs: ReadonlySet<string> | undefined,
): Record<string, unknown> {
  const actors: Record<string, unknown> = {};
  const own = observer as unknown as Record<string, LeanEffect>;
  for (const name of names)
    actors[name] = promiseActor(own[name]!, observer, contextInputs?.has(name) === true);
  return actors;
}

/** One run of a machine as an XState actor, seen through the `MachineRun` seam. */
function startActor(
  machine: AnyStateMachine,
  input: unknown,
  clock: unknown,
  observer: RunObserver | undefined,
  inspect: InspectionObserver | undefined,
): MachineRun<never> {
  // xstate's options type has no `| undefined`; an undefined inspect is ignored at runtime.
  const actor = createActor(machine, { input, clock, inspect: inspect! } as never);
  let ended = false;
  const end = (status: Exclude<LeanStatus, 'active'>, detail: { output?: unknown; error?: unknown } = {}) => {
    if (ended) return;
    ended = true;
    if (status === 'done') observer?.ended?.({ status, output: detail.output });
    else if (status === 'error') observer?.ended?.({ status, error: detail.error });
    else observer?.ended?.({ status });
  };
  actor.subscribe({
    next: () => observer?.changed?.(),
    complete: () => {
      const snapshot = actor.getSnapshot() as { status: string; output: unknown };
      if (snapshot.status === 'done') {
        observer?.changed?.();
        // Stopping the finished actor clears its timers and releases its children.
        actor.stop();
        end('done', { output: snapshot.output });
      }
    },
    error: (error) => end('error', { error }),
  });
  if (observer?.emitted) actor.on('*', (event: { type: string }) => observer.emitted!(event));
  actor.start();
  const snapshot = () =>
    actor.getSnapshot() as unknown as {
      status: string;
      context: never;
      value: unknown;
      matches(value: unknown): boolean;
    };
  const run: MachineRun<never> = {
    get status() {
      const status = snapshot().status;
      return (status === 'stopped' && ended ? 'done' : status) as LeanStatus;
    },
    get context() {
      return snapshot().context;
    },
    get value() {
      return snapshot().value;
    },
    matches: (value) => snapshot().matches(value),
    send(event) {
      if (snapshot().status === 'active') actor.send(event);
    },
    stop() {
      if (snapshot().status !== 'active') return;
      actor.stop();
      end('stopped');
    },
  };
  return run;
}
