import { selected, type CompiledTable, type Selected } from './compiled-table.js';
import type { GuardRow } from './machine-table.js';

/**
 * The statechart algorithm, apart from the actor that runs it (XState's `stateUtils.ts` beside its
 * `createActor.ts`): over a compiled table (compiled-table.ts) and a configuration (bit `i` set while state `i`
 * is active), which transitions an event enables, which of them conflict, which states a microstep exits and
 * enters and in what order, and the state value. No timers, effects, mailbox or observer: the actor
 * (lean-actor.ts) holds the configuration and runs the actions. What depends on the table alone (a
 * transition's domain, exit mask and entry order) is kept on the compiled table once computed, for every run.
 *
 * Module functions that take the table and configuration explicitly, not methods of an object per step: this
 * is every request's hot path (a few µs; on Hermes, an interpreter, every allocation and call shows).
 */

/** An event as the engine handles it. */
export type MachineEvent = { type: string; [key: string]: unknown };

/** A named guard, as selection calls it (machine-logic.ts, `LogicArgs`: what a guard may do with them). */
type GuardFn = (args: { readonly context: unknown; readonly event: MachineEvent }) => boolean;

/** A machine's guards by name, as selection calls them. */
export type GuardsByName = Readonly<Record<string, unknown>>;

/** No transition selected. */
export const NONE: readonly Selected[] = Object.freeze([]);

// ---- selection (XState's selectTransitions / selectEventlessTransitions) ----

/**
 * For each active atomic state, the first enabled transition for the event (or, `eventless`, the first
 * eventless one) on it or its nearest ancestor, conflicts removed.
 */
export function enabledTransitions(
  table: CompiledTable,
  config: number,
  event: MachineEvent,
  eventless: boolean,
  guards: GuardsByName,
  context: unknown,
): readonly Selected[] {
  // No active state has a transition for it (most events, and eventless selection in most states): nothing to walk.
  const { alwaysMask, eventMasks, atomicMask } = table;
  if ((config & (eventless ? alwaysMask : (eventMasks.get(event.type) ?? 0))) === 0) return NONE;
  const atomics = config & atomicMask;
  if (atomics === 0) return NONE;
  if ((atomics & (atomics - 1)) === 0) {
    // One active atomic state: no conflicts to resolve, no list to build.
    const t = firstEnabled(table, 31 - Math.clz32(atomics), eventless, event, guards, context);
    return t === undefined ? NONE : (t.alone ??= [t]);
  }
  const enabled: Selected[] = [];
  // The active atomic states, in document order: the lowest set bit of the configuration first.
  for (let bits = atomics; bits !== 0; bits &= bits - 1) {
    const t = firstEnabled(table, 31 - Math.clz32(bits & -bits), eventless, event, guards, context);
    if (t !== undefined && !enabled.includes(t)) enabled.push(t);
  }
  return removeConflicts(table, config, enabled);
}

/** The first enabled transition for the event on an atomic state or its nearest ancestor that has one. */
function firstEnabled(
  table: CompiledTable,
  atomic: number,
  eventless: boolean,
  event: MachineEvent,
  guards: GuardsByName,
  context: unknown,
): Selected | undefined {
  // The candidates of the state and its ancestors, nearest first, listed once per table (compiled-table.ts): one
  // lookup, not one per ancestor. Indexed loops here and below, not for-of: on an engine without a JIT (Hermes)
  // each for-of costs an iterator.
  const state = table.states[atomic]!;
  const candidates = eventless ? state.alwaysOnPath : state.onPath.get(event.type);
  if (candidates === undefined) return undefined;
  // One arguments object for every guard asked, made only once one is (most transitions have none): a guard
  // neither changes nor keeps it (machine-logic.ts, `LogicArgs`).
  let args: { readonly context: unknown; readonly event: MachineEvent } | undefined;
  for (let c = 0; c < candidates.length; c++) {
    const t = candidates[c]!;
    const guard = t.row.guard;
    if (guard === undefined) return t;
    args ??= { context, event };
    // A named guard (most of them) is called here: a call fewer per guard.
    if (typeof guard === 'string' ? (guards[guard] as GuardFn)(args) : checkGuard(guards, guard, args))
      return t;
  }
  return undefined;
}

function checkGuard(
  guards: GuardsByName,
  guard: GuardRow,
  args: { readonly context: unknown; readonly event: MachineEvent },
): boolean {
  if (typeof guard === 'string') return (guards[guard] as GuardFn)(args);
  if ('and' in guard) {
    // A loop, not `every` with a callback: an interpreter pays for the callback on every guard of the list.
    const all = guard.and;
    for (let i = 0; i < all.length; i++) if (!checkGuard(guards, all[i]!, args)) return false;
    return true;
  }
  return !checkGuard(guards, guard.not, args);
}

/** Of two transitions that would exit the same state, the one from the deeper source wins (XState's rule). */
export function removeConflicts(table: CompiledTable, config: number, enabled: Selected[]): Selected[] {
  if (enabled.length < 2) return enabled;
  const kept: Selected[] = [];
  for (const t1 of enabled) {
    let preempted = false;
    const remove = new Set<Selected>();
    for (const t2 of kept) {
      if ((exitMask(table, config, t1) & exitMask(table, config, t2)) !== 0) {
        if (isDescendant(table, t1.source, t2.source)) remove.add(t2);
        else {
          preempted = true;
          break;
        }
      }
    }
    if (!preempted) {
      for (const t of remove) kept.splice(kept.indexOf(t), 1);
      kept.push(t1);
    }
  }
  return kept;
}

// ---- exit set (XState's computeExitSet) ----

/** The active states a transition exits, as a configuration mask (bit `i`: state `i`). */
export function exitMask(table: CompiledTable, config: number, t: Selected): number {
  return (t.exitable ?? exitableOf(table, t)) & config;
}

/** The states a transition exits when they are active: it depends only on the table, so it is kept. */
export function exitableOf(table: CompiledTable, t: Selected): number {
  let exit = 0;
  if (t.row.targets?.length) {
    const domain = transitionDomain(table, t);
    exit = domain === -1 ? table.everyMask : table.states[domain]!.descendantsMask;
    // As XState's computeExitSet; a re-entering transition's domain is a proper ancestor of its source (its
    // LCA), so this never adds a state today.
    if (t.row.reenter && t.source === domain) exit |= 1 << domain;
  }
  t.exitable = exit;
  return exit;
}

// ---- entry set (XState's computeEntrySet and its helpers) ----

/** The machine's initial transition: to the root's initial state (or every region of a parallel root). */
export function initialTransition(table: CompiledTable): readonly Selected[] {
  return (table.initial ??= [selected({ targets: initialTargets(table), reenter: true }, 0)]);
}

function initialTargets(table: CompiledTable): number[] {
  const root = table.states[0]!;
  if (root.type === 'compound') return [root.initial!];
  return [...root.children];
}

/**
 * The states a microstep enters, in document order (the order their entry actions run). What one transition
 * enters depends only on the table, so it is computed once per transition and kept; several at once (parallel
 * regions) are computed together.
 */
export function statesToEnter(
  table: CompiledTable,
  transitions: readonly Selected[],
  initial: boolean,
): readonly number[] {
  if (initial) {
    // The same for every run of the table: computed once.
    if (table.initialEntered === undefined) {
      const set = new Set<number>();
      entrySet(table, transitions, set);
      set.add(0);
      table.initialEntered = [...set].sort((a, b) => a - b);
    }
    return table.initialEntered;
  }
  if (transitions.length === 1) {
    const t = transitions[0]!;
    if (t.entered === undefined) {
      const set = new Set<number>();
      entrySet(table, transitions, set);
      t.entered = [...set].sort((a, b) => a - b);
    }
    return t.entered;
  }
  const set = new Set<number>();
  entrySet(table, transitions, set);
  return [...set].sort((a, b) => a - b);
}

function entrySet(table: CompiledTable, transitions: readonly Selected[], toEnter: Set<number>): void {
  for (const t of transitions) {
    const targets = t.row.targets ?? [];
    const domain = transitionDomain(table, t);
    for (const s of targets) {
      if (t.source !== s || t.source !== domain || t.row.reenter) toEnter.add(s);
      addDescendants(table, s, toEnter);
    }
    for (const s of targets) {
      const ancestors = properAncestors(table, s, domain);
      if (domain !== -1 && table.states[domain]!.type === 'parallel') ancestors.push(domain);
      const reentrancy = table.states[t.source]!.parent === -1 && t.row.reenter ? undefined : domain;
      addAncestors(table, ancestors, toEnter, reentrancy);
    }
  }
}

function addDescendants(table: CompiledTable, s: number, toEnter: Set<number>): void {
  const state = table.states[s]!;
  if (state.type === 'compound') {
    const initial = state.initial!;
    toEnter.add(initial);
    addDescendants(table, initial, toEnter);
  } else if (state.type === 'parallel') {
    addRegions(table, state.children, toEnter);
  }
}

function addAncestors(
  table: CompiledTable,
  ancestors: readonly number[],
  toEnter: Set<number>,
  reentrancy: number | undefined,
): void {
  for (const anc of ancestors) {
    if (reentrancy === undefined || isDescendant(table, anc, reentrancy)) toEnter.add(anc);
    const state = table.states[anc]!;
    if (state.type === 'parallel') addRegions(table, state.children, toEnter);
  }
}

/** Each region of a parallel state that nothing entered yet lies in, with its initial descendants. */
function addRegions(table: CompiledTable, regions: readonly number[], toEnter: Set<number>): void {
  for (const child of regions) {
    if (![...toEnter].some((e) => isDescendant(table, e, child))) {
      toEnter.add(child);
      addDescendants(table, child, toEnter);
    }
  }
}

// ---- tree helpers (XState's, over table indices; -1 stands for "no state") ----

/** The state whose descendants a transition exits and enters (XState's getTransitionDomain), kept once known. */
export function transitionDomain(table: CompiledTable, t: Selected): number {
  return (t.domain ??= computeDomain(table, t));
}

function computeDomain(table: CompiledTable, t: Selected): number {
  const targets = t.row.targets ?? [];
  if (!t.row.reenter && targets.every((s) => s === t.source || isDescendant(table, s, t.source)))
    return t.source;
  const lca = leastCommonAncestor(table, [...targets, t.source]);
  if (lca !== -1) return lca;
  return t.row.reenter ? -1 : 0;
}

/** The nearest proper ancestor of the first state that every other lies below (-1: none). */
export function leastCommonAncestor(table: CompiledTable, nodes: readonly number[]): number {
  const [head, ...tail] = nodes;
  for (const ancestor of properAncestors(table, head!, -1)) {
    if (tail.every((s) => isDescendant(table, s, ancestor))) return ancestor;
  }
  return -1;
}

/** Ancestors of `s` from its parent up, stopping before `upTo` (-1: up to the root, included). */
function properAncestors(table: CompiledTable, s: number, upTo: number): number[] {
  const ancestors: number[] = [];
  if (s === upTo) return ancestors;
  for (let m = table.states[s]!.parent; m !== -1 && m !== upTo; m = table.states[m]!.parent)
    ancestors.push(m);
  return ancestors;
}

/** Whether `child` lies strictly below `parent` (every state lies below -1, as below XState's `undefined`). */
export function isDescendant(table: CompiledTable, child: number, parent: number): boolean {
  return parent === -1 || table.states[child]!.ancestors.has(parent);
}

// ---- the state value ----

/** The state value of a configuration, as XState's snapshot gives it (`s`: the state it is the value of). */
export function stateValue(table: CompiledTable, config: number, s = 0): unknown {
  const state = table.states[s]!;
  const activeChildren = state.children.filter((c) => (config & (1 << c)) !== 0);
  if (state.type === 'compound') {
    const child = activeChildren[0];
    if (child === undefined) return {};
    const type = table.states[child]!.type;
    if (type === 'atomic' || type === 'final') return table.states[child]!.key;
  }
  const value: Record<string, unknown> = {};
  for (const child of activeChildren) value[table.states[child]!.key] = stateValue(table, config, child);
  return value;
}

/** XState's `matchesState(test, value)`. */
export function matchesValue(test: unknown, value: unknown): boolean {
  if (typeof test === 'string') {
    if (typeof value === 'string') return test === value;
    return typeof value === 'object' && value !== null && test in value;
  }
  if (typeof value === 'string') return false;
  const v = value as Record<string, unknown>;
  return Object.entries(test as Record<string, unknown>).every(
    ([key, sub]) => key in v && matchesValue(sub, v[key]),
  );
}
