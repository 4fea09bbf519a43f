import type { MachineLogic } from './machine-logic.js';
import type { MachineTable } from './machine-table.js';
import type { Clock } from '../clock/clock.js';
import {
  PreparedLeanMachine,
  type ChildMachine,
  type LeanEffect,
  type LeanMachine,
  type LeanObserver,
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
  /**
   * Readies a machine to run with the clock and effects all its runs share; `start` then makes one run. A client
   * prepares each of its machines once, so that a run (a request in flight) holds only what is its own.
   */
  prepare<TContext, TInput>(
    definition: MachineDefinition<TContext, TInput>,
    options: PrepareOptions,
  ): PreparedMachine<TContext, TInput>;
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

/** What every run of a prepared machine shares. */
export interface PrepareOptions {
  clock: Clock;
  /** Invoked actors by name: a value or a promise of one; `signal` aborts when the invoking state is left. */
  actors: Readonly<Record<string, LeanEffect>>;
  /** Children that steps spawn, by name: each resolves with the one event it sends back (and never rejects). */
  spawned?: Readonly<Record<string, (input: never, signal: AbortSignal) => Promise<{ type: string }>>>;
  /** Actors (invoked or spawned) that ignore their signal: the lean executor makes no AbortController for them. */
  ignoresSignal?: ReadonlySet<string> | undefined;
  /**
   * Invoked actors each run answers itself, by name: `start`'s observer (the run's own object) has a method of
   * each name, with its code on the prototype, so a run's effects need no closure and no lookup of their own.
   */
  runEffects?: ReadonlySet<string> | undefined;
  /**
   * Run effects (`runEffects`) handed the run's machine context as their input, rather than what the invoke's
   * input function makes of it: the lean executor makes no input object per invocation, and the XState runner
   * hands them its actor's context too, so that the effect reads one shape under either runner.
   */
  contextInputs?: ReadonlySet<string> | undefined;
}

export interface PreparedMachine<TContext, TInput> {
  /**
   * Starts one run from `input`; `observer` hears its emitted events, its steps and its end, and answers the
   * effects named in `runEffects`.
   */
  start(input: TInput, observer?: RunObserver): MachineRun<TContext>;
}

/** What one run tells its owner (the lean executor's `LeanObserver`): emitted events, each step, its end. */
export type RunObserver = LeanObserver;

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
  prepare<TContext, TInput>(
    definition: MachineDefinition<TContext, TInput>,
    options: PrepareOptions,
  ): PreparedMachine<TContext, TInput> {
    const { spawned } = options;
    const machine: LeanMachine<TContext, TInput> = {
      table: definition.table,
      logic: definition.logic,
      timers: clockTimers(options.clock),
      actors: spawned ? { ...options.actors, ...spawned } : options.actors,
      machines: definition.machines,
      ignoresSignal: options.ignoresSignal,
      runEffects: options.runEffects,
      contextInputs: options.contextInputs,
    };
    return new PreparedLeanMachine(machine);
  },
};
