import type { MachineLogic } from '../../machines/machine-logic.js';
import type { MachineTable } from '../../machines/machine-table.js';
import type { Clock } from '../clock/clock.js';
import {
  LeanActor,
  type ChildMachine,
  type LeanEffect,
  type LeanEnd,
  type LeanStatus,
} from './lean-actor.js';
import { clockTimers } from './timers.js';

/**
 * The one seam between failwise's runtime and whatever runs its machines: the request driver, the health
 * monitor and the outbox runner start every machine through a `MachineRunner` and see only `MachineRun`.
 * The default is the lean executor; `withInspector()` (failwise/machines) gives a runner of real XState
 * actors, so that the Stately inspector sees every machine. Nothing else depends on which one runs.
 */
export interface MachineRunner {
  start<TContext, TInput>(
    definition: MachineDefinition<TContext, TInput>,
    options: RunOptions<TInput>,
  ): MachineRun<TContext>;
}

/**
 * A machine as the lean executor needs it: its derived table and its logic (both from machines/), and the
 * machines its steps start as children, by the name the steps use (the outbox's `outboxEntry`).
 */
export interface MachineDefinition<TContext, TInput> {
  table: MachineTable;
  logic: MachineLogic<TContext, TInput>;
  machines?: Readonly<Record<string, ChildMachine>> | undefined;
}

export interface RunOptions<TInput> {
  input: TInput;
  clock: Clock;
  /** Invoked actors by name: a value or a promise of one; `signal` aborts when the invoking state is left. */
  actors: Readonly<Record<string, LeanEffect>>;
  /** Children that steps spawn, by name: each resolves with the one event it sends back (and never rejects). */
  spawned?: Readonly<Record<string, (input: never, signal: AbortSignal) => Promise<{ type: string }>>>;
  /** Actors (invoked or spawned) that ignore their signal: the lean executor makes no AbortController for them. */
  ignoresSignal?: ReadonlySet<string> | undefined;
  onEmit?: ((event: { type: string }) => void) | undefined;
  /** After every step. */
  onChange?: (() => void) | undefined;
  /** Once, when the machine ends: done (with its output), stopped, or failed. */
  onEnd?: ((end: LeanEnd) => void) | undefined;
}

export interface MachineRun<TContext> {
  readonly status: LeanStatus;
  readonly context: TContext;
  /** The state value, as XState's snapshot gives it. */
  readonly value: unknown;
  matches(value: unknown): boolean;
  send(event: { type: string; [key: string]: unknown }): void;
  stop(): void;
}

/** Runs machines in the lean executor: no actor, snapshot or mailbox per run. */
export const leanRunner: MachineRunner = {
  start(definition, options) {
    const { spawned } = options;
    return new LeanActor(
      {
        table: definition.table,
        logic: definition.logic,
        timers: clockTimers(options.clock),
        actors: spawned ? { ...options.actors, ...spawned } : options.actors,
        spawned: spawned ? new Set(Object.keys(spawned)) : undefined,
        machines: definition.machines,
        ignoresSignal: options.ignoresSignal,
        onEmit: options.onEmit,
        onChange: options.onChange,
        onEnd: options.onEnd,
      },
      options.input,
    ).start();
  },
};
