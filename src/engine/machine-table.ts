/**
 * A machine's structure as plain data: what the lean executor (src/engine/lean-actor.ts) follows instead of
 * an XState actor. Each `<machine>.table.ts` is generated from the XState machine by `npm run tables`
 * (src/engine/derive-table.ts), never written by hand; test/machines/tables.test.ts fails when one is stale.
 * Names refer to the machine's logic (`<machine>.logic.ts`): guards, actions, delays, inputs, params, outputs.
 * Empty lists, and whatever the executor can work out from the rest (state ids, children, the atomic type,
 * timer events), are left out, to keep what an app bundles small.
 */
export interface MachineTable {
  /** The machine's id (its root state's). */
  readonly id: string;
  /** Every state in document order (XState's `order`): a parent before its children. `states[0]` is the root. */
  readonly states: readonly StateRow[];
  /** The logic's output name for the machine's own output, if it has one. */
  readonly output?: string;
}

export interface StateRow {
  /** Its key in its parent's `states`; its id (`stateIds`) is its parent's id, a dot and its key. */
  readonly key: string;
  /** Left out for an atomic state. */
  readonly type?: 'compound' | 'parallel' | 'final';
  /** Index of the parent state; -1 for the root. Its children are the states whose parent it is. */
  readonly parent: number;
  /** For a compound state: the index of its initial child. */
  readonly initial?: number;
  readonly entry?: readonly ActionRow[];
  readonly exit?: readonly ActionRow[];
  readonly invoke?: readonly InvokeRow[];
  /**
   * The logic's delay names of the timers armed on entry and cancelled on exit, in the order XState arms
   * them; each sends `xstate.after.<delay>.<state id>`.
   */
  readonly after?: readonly string[];
  /** Transitions by event type (timers and actor replies included), each list in priority order. */
  readonly on?: Readonly<Record<string, readonly TransitionRow[]>>;
  /** Eventless transitions, in priority order. */
  readonly always?: readonly TransitionRow[];
  /** For a final state: the logic's output name. */
  readonly output?: string;
}

export interface TransitionRow {
  /** Indices of the target states; none for a transition that only runs actions. */
  readonly targets?: readonly number[];
  readonly guard?: GuardRow;
  readonly actions?: readonly ActionRow[];
  readonly reenter?: true;
}

/** A named guard, or `and` / `not` of guards. */
export type GuardRow = string | { readonly and: readonly GuardRow[] } | { readonly not: GuardRow };

/** A named action: its name alone when it takes no params. */
export type ActionRow =
  | string
  | {
      readonly name: string;
      /** Fixed parameters (`value`), or the logic's params function that computes them from the event (`from`). */
      readonly params: { readonly value: unknown } | { readonly from: string };
    };

export interface InvokeRow {
  /** The child's id: its replies are `xstate.done.actor.<id>` and `xstate.error.actor.<id>`. */
  readonly id: string;
  /** The actor's name, as the runner provides it. */
  readonly src: string;
  /** The logic's input name. */
  readonly input?: string;
}

/** XState's dotted id of each state (`request.active.attempting`): the root's is the machine's id. */
export function stateIds(table: MachineTable): string[] {
  const ids: string[] = [];
  for (const row of table.states) ids.push(row.parent === -1 ? table.id : `${ids[row.parent]}.${row.key}`);
  return ids;
}

/** The event a state's timer sends. */
export const afterEvent = (delay: string, stateId: string): string => `xstate.after.${delay}.${stateId}`;

/** An action row's name. */
export const actionName = (action: ActionRow): string => (typeof action === 'string' ? action : action.name);
