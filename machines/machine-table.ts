/**
 * A machine's structure as plain data: what the lean executor (src/engine/lean-actor.ts) follows instead of
 * an XState actor. Each `<machine>.table.ts` is generated from the XState machine by `npm run tables`
 * (machines/derive-table.ts), never written by hand; test/machines/tables.test.ts fails when one is stale.
 * Names refer to the machine's logic (`<machine>.logic.ts`): guards, actions, delays, inputs, params, outputs.
 * Empty lists are left out, to keep what an app bundles small.
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
  /** XState's dotted id, e.g. `request.active.attempting`. */
  readonly id: string;
  readonly key: string;
  readonly type: 'atomic' | 'compound' | 'parallel' | 'final';
  /** Index of the parent state; -1 for the root. */
  readonly parent: number;
  readonly children?: readonly number[];
  /** For a compound state: the index of its initial child. */
  readonly initial?: number;
  readonly entry?: readonly ActionRow[];
  readonly exit?: readonly ActionRow[];
  readonly invoke?: readonly InvokeRow[];
  /** Timers armed on entry and cancelled on exit, in the order XState arms them. */
  readonly after?: readonly AfterRow[];
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

export interface ActionRow {
  readonly name: string;
  /** Fixed parameters (`value`), or the logic's params function that computes them from the event (`from`). */
  readonly params?: { readonly value: unknown } | { readonly from: string };
}

export interface InvokeRow {
  /** The child's id: its replies are `xstate.done.actor.<id>` and `xstate.error.actor.<id>`. */
  readonly id: string;
  /** The actor's name, as the runner provides it. */
  readonly src: string;
  /** The logic's input name. */
  readonly input?: string;
}

export interface AfterRow {
  /** The logic's delay name. */
  readonly delay: string;
  /** The event the timer sends: `xstate.after.<delay>.<state id>`. */
  readonly event: string;
}
