import { MachineError } from '../errors/machine-error.js';
import {
  afterEvent,
  stateIds,
  type ActionRow,
  type MachineTable,
  type StateRow,
  type TransitionRow,
} from './machine-table.js';

/**
 * A machine table (machine-table.ts) as the engine walks it: every list present, what the generated tables
 * leave out worked out, and the masks and per-state lists that selection reads, computed once per table and
 * shared by every run of it. The transition algorithm (algorithm.ts) runs over it and a configuration; the
 * actor (lean-actor.ts) holds the configuration.
 */
export interface CompiledTable {
  readonly states: readonly CompiledState[];
  /** Every state, as a configuration mask: what a transition without a domain exits. */
  readonly everyMask: number;
  /** The states that have eventless transitions, as a configuration mask. */
  readonly alwaysMask: number;
  /** For each event type, the states that have transitions for it, as a configuration mask. */
  readonly eventMasks: ReadonlyMap<string, number>;
  /** The atomic (and final) states, as a configuration mask. */
  readonly atomicMask: number;
  /** The states the initial transition enters, once computed. */
  initialEntered?: readonly number[];
  /** The initial transition, once made. */
  initial?: readonly Selected[];
}

/** The event types an invoked actor's answer comes as, made once per table rather than once per answer. */
export interface InvokeReplies {
  readonly done: string;
  readonly error: string;
}

/** A table's state with every list present and what the generated tables leave out worked out. */
export interface CompiledState {
  readonly id: string;
  /** The type of the event its being done makes (XState's `xstate.done.state.<id>`), made once per table. */
  readonly doneType: string;
  readonly key: string;
  readonly type: NonNullable<StateRow['type']> | 'atomic';
  readonly parent: number;
  readonly children: readonly number[];
  readonly initial?: number | undefined;
  readonly entry: readonly ActionRow[];
  readonly exit: readonly ActionRow[];
  readonly invoke: readonly CompiledInvoke[];
  /** Its timers: the delay's name and the event the timer sends. */
  readonly after: readonly { readonly delay: string; readonly event: string }[];
  /** Transitions by event type, each paired with this state as its source. */
  readonly on: ReadonlyMap<string, readonly Selected[]>;
  readonly always: readonly Selected[];
  /** `on` of this state, then of each ancestor up to the root, in that order: what selection walks. */
  readonly onPath: ReadonlyMap<string, readonly Selected[]>;
  readonly alwaysOnPath: readonly Selected[];
  readonly output?: string | undefined;
  readonly atomic: boolean;
  /** This state, then its ancestors up to the root. */
  readonly path: readonly number[];
  /** Its proper ancestors. */
  readonly ancestors: ReadonlySet<number>;
  /** Its proper descendants, as a configuration mask. */
  readonly descendantsMask: number;
}

/** A state's invocation, with the event types of its answer. */
export type CompiledInvoke = NonNullable<StateRow['invoke']>[number] & { readonly replies: InvokeReplies };

/**
 * A transition and the state it is defined on, with what the table alone decides about it, once known (these
 * depend on the table only, so every run of it shares them).
 */
export interface Selected {
  readonly row: FullRow;
  readonly source: number;
  /** Its domain (XState's getTransitionDomain). */
  domain: number | undefined;
  /** The states it enters, in document order. */
  entered: readonly number[] | undefined;
  /** A list of just this transition: what selection returns when it alone is enabled. */
  alone: readonly Selected[] | undefined;
  /** The states it exits when they are active, as a configuration mask, once known. */
  exitable: number | undefined;
}

/** A table's transition row with every field present (`selected`). */
export type FullRow = { readonly [K in keyof TransitionRow]-?: TransitionRow[K] | undefined };

/**
 * A transition paired with its source, its row with every field present: on Hermes reading a property an object
 * lacks costs a walk up its prototypes (several times a present one's cost), and selection reads `guard`,
 * `actions` and `targets` of every candidate.
 */
export function selected(row: TransitionRow, source: number): Selected {
  return {
    row: { targets: row.targets, guard: row.guard, actions: row.actions, reenter: row.reenter },
    source,
    domain: undefined,
    entered: undefined,
    alone: undefined,
    exitable: undefined,
  };
}

const compiledTables = new WeakMap<MachineTable, CompiledTable>();

/** The table compiled, once per table: every run of it shares the result. */
export function compileTable(table: MachineTable): CompiledTable {
  let compiled = compiledTables.get(table);
  if (compiled === undefined) {
    compiled = compile(table);
    compiledTables.set(table, compiled);
  }
  return compiled;
}

function compile(table: MachineTable): CompiledTable {
  const rows = table.states;
  // The configuration is one 32-bit number (derive-table.ts refuses larger machines; this, a table made by hand).
  if (rows.length > 31)
    throw new MachineError(`${table.id}: ${rows.length} states, more than the 31 the executor can run`);
  const ids = stateIds(table);
  const pathOf = (i: number): number[] => (i === -1 ? [] : [i, ...pathOf(rows[i]!.parent)]);
  const partial = rows.map((row, i): Omit<CompiledState, 'onPath' | 'alwaysOnPath'> => {
    const path = pathOf(i);
    const pair = (list: readonly TransitionRow[] = []) => list.map((t) => selected(t, i));
    const type = row.type ?? 'atomic';
    return {
      ...row,
      id: ids[i]!,
      doneType: `xstate.done.state.${ids[i]!}`,
      type,
      children: rows.flatMap((child, c) => (child.parent === i ? [c] : [])),
      entry: row.entry ?? [],
      exit: row.exit ?? [],
      invoke: (row.invoke ?? []).map((invoke) => ({
        ...invoke,
        replies: { done: `xstate.done.actor.${invoke.id}`, error: `xstate.error.actor.${invoke.id}` },
      })),
      after: (row.after ?? []).map((delay) => ({ delay, event: afterEvent(delay, ids[i]!) })),
      on: new Map(Object.entries(row.on ?? {}).map(([type, list]) => [type, pair(list)])),
      always: pair(row.always),
      atomic: type === 'atomic' || type === 'final',
      path,
      ancestors: new Set(path.slice(1)),
      descendantsMask: rows.reduce(
        (mask, _, d) => (pathOf(d).slice(1).includes(i) ? mask | (1 << d) : mask),
        0,
      ),
    };
  });
  const states: CompiledState[] = partial.map((state) => {
    const onPath = new Map<string, Selected[]>();
    const alwaysOnPath: Selected[] = [];
    for (const s of state.path) {
      const on = partial[s]!;
      for (const [type, list] of on.on) onPath.set(type, [...(onPath.get(type) ?? []), ...list]);
      alwaysOnPath.push(...on.always);
    }
    return { ...state, onPath, alwaysOnPath };
  });
  let alwaysMask = 0;
  let atomicMask = 0;
  const eventMasks = new Map<string, number>();
  states.forEach((state, i) => {
    if (state.always.length > 0) alwaysMask |= 1 << i;
    if (state.atomic) atomicMask |= 1 << i;
    for (const type of state.on.keys()) eventMasks.set(type, (eventMasks.get(type) ?? 0) | (1 << i));
  });
  const everyMask = states.reduce((mask, _, i) => mask | (1 << i), 0);
  return { states, everyMask, alwaysMask, eventMasks, atomicMask };
}
