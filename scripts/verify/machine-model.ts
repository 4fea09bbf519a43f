import type { Call, DrivenRun, Outcome, RunSpec, Stimulus } from './driven-run.js';

/**
 * What the exploration needs to know of one machine: how to start it, what may happen to it in a state, what
 * of its state matters (the abstraction that decides when two runs are in the same state), which states are
 * its goal (check a), and any property to watch on every step (checks c and d).
 */
export interface MachineModel<M = unknown> {
  /** The machine's name in the report. */
  name: string;
  run: RunSpec;
  /** The initial inputs: each is a root of the search. */
  inputs: readonly { label: string; input: () => unknown }[];
  /** The events of this type to try (with their payloads), when an active state handles the type. */
  events(type: string, run: DrivenRun): Extract<Stimulus, { kind: 'event' }>['event'][];
  /** Every answer a waiting actor may give. */
  answers(call: Call, run: DrivenRun): readonly { label: string; outcome: () => Outcome }[];
  /** The part of the context that decides the machine's future (see docs/verification.md). */
  abstractContext(context: Record<string, unknown>): unknown;
  /**
   * The part of a child machine's context that decides its future (the outbox's entries in flight), given the
   * machine's own context; the child's whole context when left out.
   */
  abstractChild?(context: Record<string, unknown>, parent: Record<string, unknown>): unknown;
  /** The part of a waiting actor's input that decides what it may answer and what follows. */
  abstractCall?(call: Call): unknown;
  /** What of the events sent so far is part of the state (for a model that bounds them per path). */
  pathKey?(run: DrivenRun): unknown;
  /** The states every reachable state must be able to reach (check a); none for a machine without one. */
  goal?: {
    name: string;
    holds(run: DrivenRun): boolean;
    /** The stimuli paths to the goal may use (default: all), e.g. none the caller must send. */
    via?(stimulus: Stimulus): boolean;
  };
  monitor?: Monitor<M>;
  /**
   * Whether check (b) applies: every state of the definition entered. False for a search whose bounds leave
   * some answers out on purpose (the outbox with two entries): the search with every answer makes the check.
   */
  enterEveryState?: boolean;
}

/** A property watched on every step of every path, with the state it keeps along the path. */
export interface Monitor<M> {
  /** The check it makes, as the report names it. */
  check: 'c' | 'd' | 'e';
  initial(input: unknown): M;
  /** The monitor's next state, or what was violated. */
  step(state: M, step: StepInfo): { next: M; violation?: string };
}

export interface Snapshot {
  value: unknown;
  context: Record<string, unknown>;
}

export interface StepInfo {
  stimulus: Stimulus;
  before: Snapshot;
  after: Snapshot;
  input: unknown;
  /** Actors started during the step. */
  started: readonly Call[];
  /** Actors that were waiting before the step and are no longer (answered or aborted). */
  ended: readonly Call[];
}
