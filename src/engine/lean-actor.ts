import type { ActionImpl, ActionStep, MachineLogic } from './machine-logic.js';
import { MachineError } from '../errors/machine-error.js';
import {
  afterEvent,
  stateIds,
  type ActionRow,
  type GuardRow,
  type MachineTable,
  type StateRow,
  type TransitionRow,
} from './machine-table.js';
import { TimerTarget, type Timers } from './timers.js';

/**
 * Runs one machine from its derived table (machines/machine-table.ts), calling the machine's named logic
 * directly: no XState actor, snapshot or mailbox object per run. It follows XState v5's algorithm (SCXML's
 * microstep and macrostep, as in xstate's `macrostep`/`microstep`) for exactly the features the derivation
 * accepts (docs/design.md), and test/engine/*.differential.property.test.ts checks it step by step against a
 * real XState actor: the same states, context, emitted events, invocations, timers and output.
 *
 * Effects that a step causes (emitting, starting and stopping children, arming and clearing timers) run
 * after the step, in the order XState defers them. An invoked actor that answers synchronously is handed
 * its reply at once, after the step, instead of a promise later: the same order of events, without a tick.
 */
export interface LeanMachine<TContext, TInput> {
  table: MachineTable;
  logic: MachineLogic<TContext, TInput>;
  timers: Timers;
  /**
   * Invoked actors and spawned children by name. An invoked actor's result is its output (or it throws); a child
   * spawned by a step (`ActionStep.start`) answers with the one event it sends back.
   */
  actors: Readonly<Record<string, LeanEffect>>;
  /**
   * Machines a step may start as children, by name (the outbox's `outboxEntry`): each runs in a lean actor of
   * its own, with these same effects and timers, and may send this machine events (`sendParent`); a step sends it
   * events by its id (`ActionStep.send`).
   */
  machines?: Readonly<Record<string, ChildMachine>> | undefined;
  /**
   * Names of actors that ignore their signal (they answer at once, or their work cannot be called off): they get
   * a signal that never aborts, so that no AbortController (several µs each in Node) is made for them.
   */
  ignoresSignal?: ReadonlySet<string> | undefined;
  /**
   * Names of invoked actors each run answers itself: its observer (the run's own object) has a method of that name,
   * called with the observer as `this`, so an effect reaches what it runs for without a lookup or a closure.
   */
  runEffects?: ReadonlySet<string> | undefined;
}

/**
 * What one run tells its owner. An object with methods rather than three callbacks: a request's own object (its
 * `RequestRun`) observes its run, so a run in flight holds no closures for it.
 */
export interface LeanObserver {
  /** The machine's emitted events, after the step that emitted them. */
  emitted?(event: { type: string }): void;
  /** After every step (the outbox runner waits for states this way). */
  changed?(): void;
  /** Once, when the machine reaches its final state, stops, or fails. */
  ended?(end: LeanEnd): void;
}

/**
 * A machine that runs as a child of another (`childMachine()`, src/engine/child-machine.ts): its table and
 * logic, and how it starts in a lean actor of its own. Kept out of this file so that only the runs that start
 * child machines (the outbox's) bundle it.
 */
export interface ChildMachine {
  table: MachineTable;
  logic: MachineLogic<unknown, unknown>;
  start(
    id: string,
    input: unknown,
    parent: LeanActor<unknown>,
    machine: LeanMachine<unknown, unknown>,
  ): LeanActor<unknown>;
}

/** An effect: a value (or a promise of one); it gets a signal that aborts when its state is left. */
export type LeanEffect = (input: never, signal: AbortSignal) => unknown;

export type LeanEnd =
  { status: 'done'; output: unknown } | { status: 'stopped' } | { status: 'error'; error: unknown };

export type LeanStatus = 'active' | 'done' | 'stopped' | 'error';

type Event = { type: string; [key: string]: unknown };

/** What a guard is called with. */
type GuardArgs<TContext> = { readonly context: TContext; readonly event: Event };

/**
 * An armed timer: what `Timers` calls back when it is due (no closure per timer). The actor's timers form a list
 * through `next` (a few at a time, no array to grow).
 */
class TimerSlot extends TimerTarget {
  handle: unknown = undefined;
  next: TimerSlot | undefined = undefined;
  constructor(
    private readonly actor: { timerFired(slot: TimerSlot): void },
    readonly event: string,
  ) {
    super();
  }

  fire(): void {
    this.actor.timerFired(this);
  }
}

/**
 * The kinds of effect a step leaves for after it (`LeanActor.defer`); they run in the order they were left, as
 * XState runs its deferred actions. Constants, not an object, so that bundlers inline them.
 */
const EMIT = 0;
const SEND_PARENT = 1;
const SEND_CHILD = 2;
const ARM_TIMER = 3;
const CLEAR_TIMER = 4;
const START_CHILD = 5;
const ABORT_CHILD = 6;
type Effect =
  | typeof EMIT
  | typeof SEND_PARENT
  | typeof SEND_CHILD
  | typeof ARM_TIMER
  | typeof CLEAR_TIMER
  | typeof START_CHILD
  | typeof ABORT_CHILD;

/** A running child; the actor's children form a list through `next`, in the order they were started. */
interface Child {
  readonly id: string;
  readonly src: string;
  readonly input: unknown;
  /** An invoked actor's done and error event types; none for a child spawned by a step. */
  readonly replies: InvokeReplies | undefined;
  controller: AbortController | undefined;
  /** For a child machine: its actor, once started. */
  machine: LeanActor<unknown> | undefined;
  state: 'new' | 'running' | 'stopped';
  next: Child | undefined;
}

export class LeanActor<TContext, TInput = unknown> {
  status: LeanStatus = 'active';
  context: TContext;
  output: unknown;
  /** The configuration: bit `i` is set while state `i` of the table is active (tables have at most 31 states). */
  private config = 0;
  /** Armed timers, and running children: few at a time, so linked lists (a request in flight holds no array). */
  private timers: TimerSlot | undefined;
  private children: Child | undefined;
  /** Events sent while a step runs, and events the machine raised, waiting their turn. */
  private mailbox: Event[] | undefined;
  private internal: Event[] | undefined;
  /** The effects of the step being taken, run after it: an effect's code and its two arguments, in turn. */
  private deferred: unknown[] | undefined;
  private processing = false;
  private started = false;
  /** Whether the step changed context, children or states (XState's new snapshot): eventless transitions are selected again. */
  private changed = false;

  /** What every run of the machine shares (one object per client and machine); the input is read once, not kept. */
  private readonly machine: LeanMachine<TContext, TInput>;
  private readonly observer: LeanObserver | undefined;
  private readonly observesSteps: boolean;
  private readonly observesEmitted: boolean;
  /** The machine that started this one as its child: where `sendParent` actions go. */
  private readonly parent: { send(event: Event): void } | undefined;

  constructor(
    machine: LeanMachine<TContext, TInput>,
    input: TInput,
    observer?: LeanObserver,
    parent?: { send(event: Event): void },
  ) {
    this.machine = machine;
    this.observer = observer;
    // Whether it listens to each step, looked up once: most observers do not, and a missing method is the
    // costliest lookup there is on Hermes (its prototypes walked every step).
    this.observesSteps = typeof observer?.changed === 'function';
    this.observesEmitted = typeof observer?.emitted === 'function';
    this.parent = parent;
    const compiled = compile(machine.table);
    this.compiled = compiled;
    this.states = compiled.states;
    this.context = machine.logic.context({ input });
  }

  private readonly compiled: Compiled;
  private readonly states: readonly State[];

  /** Enters the initial states and runs what they start. */
  start(): this {
    if (this.started) return this;
    this.started = true;
    this.run(INITIAL);
    return this;
  }

  /** Sends an event; one sent while a step runs (from a listener) is handled after it, as XState's mailbox does. */
  send(event: Event): void {
    if (this.status !== 'active' || !this.started) return;
    if (this.processing) {
      (this.mailbox ??= []).push(event);
      return;
    }
    this.run(event);
  }

  /** Stops the machine: every timer cleared, every child aborted. */
  stop(): void {
    if (this.status !== 'active') return;
    this.status = 'stopped';
    this.halt();
    this.observer?.ended?.({ status: 'stopped' });
  }

  /** The state value, as XState's snapshot would give it (built once per configuration: callers ask often). */
  get value(): unknown {
    if (this.valueCache?.config !== this.config)
      this.valueCache = { config: this.config, value: this.stateValueOf(0) };
    return this.valueCache.value;
  }
  private valueCache: { config: number; value: unknown } | undefined;

  /** XState's `snapshot.matches`: a state value, or a part of one, that the current value has. */
  matches(test: unknown): boolean {
    return matchesValue(test, this.value);
  }

  /** The timers armed now, by event type. */
  pendingTimers(): string[] {
    const events: string[] = [];
    for (let t = this.timers; t !== undefined; t = t.next) events.push(t.event);
    return events;
  }

  // ---- processing ----

  /** Takes a step (`INITIAL`: the initial one), its effects, then the events sent meanwhile. */
  private run(event: Event | typeof INITIAL): void {
    this.processing = true;
    try {
      if (event === INITIAL) this.enterInitial();
      else this.macrostep(event);
      this.flush();
      // Until it is empty (not until an `undefined` in it, which fails the run as when sent alone).
      for (const mailbox = this.mailbox; mailbox !== undefined && mailbox.length > 0;) {
        const next = mailbox.shift()!;
        if (this.status !== 'active') break;
        this.macrostep(next);
        this.flush();
      }
      // Emptied: not kept for the rest of the run (a request in flight would hold it while it waits).
      this.mailbox = undefined;
    } catch (error) {
      this.fail(error);
    } finally {
      this.processing = false;
    }
  }

  /** Runs the effects of the last step, then says the step is over; ends the machine if it is done. */
  private flush(): void {
    const effects = this.deferred;
    this.deferred = undefined;
    if (effects) this.perform(effects);
    if (this.status === 'done') {
      this.halt();
      if (this.observesSteps) this.observer!.changed!();
      this.observer?.ended?.({ status: 'done', output: this.output });
      return;
    }
    if (this.observesSteps) this.observer!.changed!();
  }

  private fail(error: unknown): void {
    if (this.status !== 'active' && this.status !== 'done') return;
    this.status = 'error';
    this.halt();
    this.observer?.ended?.({ status: 'error', error });
  }

  /** Clears every timer and aborts every child. */
  private halt(): void {
    for (let t = this.timers; t !== undefined; t = t.next) this.machine.timers.clear(t.handle);
    this.timers = undefined;
    for (let c = this.children; c !== undefined; c = c.next) this.abort(c);
    this.children = undefined;
    this.mailbox = undefined;
    this.internal = undefined;
  }

  private enterInitial(): void {
    // The same for every run of the table: made once, as is the event (frozen: logic only reads events).
    const init = (this.compiled.initial ??= [selected({ targets: this.initialTargets(), reenter: true }, 0)]);
    this.microstep(init, INIT_EVENT, true);
    this.settle(INIT_EVENT);
  }

  private macrostep(event: Event): void {
    const transitions = this.enabledTransitions(event, false);
    if (transitions.length === 0 && event.type.startsWith('xstate.error.actor.')) {
      // XState: an actor's error that no transition handles fails the machine.
      throw new UnhandledActorError(this.machine.table.id, event.type, (event as { error?: unknown }).error);
    }
    this.microstep(transitions, event, false);
    this.settle(event);
  }

  /** Eventless transitions and raised events, until the machine is stable (XState's macrostep loop). */
  private settle(first: Event): void {
    let event = first;
    let selectEventless = true;
    while (this.status === 'active') {
      // The mask test before the call: most steps end in states without eventless transitions.
      let enabled: readonly Selected[] =
        selectEventless && (this.config & this.compiled.alwaysMask) !== 0
          ? this.enabledTransitions(event, true)
          : NONE;
      const fromEventless = enabled.length > 0;
      if (!fromEventless) {
        const internal = this.internal;
        const next = internal === undefined ? undefined : internal.shift();
        if (next === undefined) {
          this.internal = undefined;
          break;
        }
        event = next;
        enabled = this.enabledTransitions(event, false);
      }
      this.changed = false;
      this.microstep(enabled, event, false);
      selectEventless = !fromEventless || this.changed;
    }
  }

  // ---- selection ----

  /**
   * For each atomic state, the first enabled transition for the event (or, `eventless`, the first eventless one)
   * on it or its nearest ancestor.
   */
  private enabledTransitions(event: Event, eventless: boolean): readonly Selected[] {
    // No active state has a transition for it (most events, and eventless selection in most states): nothing to walk.
    const { alwaysMask, eventMasks, atomicMask } = this.compiled;
    if ((this.config & (eventless ? alwaysMask : (eventMasks.get(event.type) ?? 0))) === 0) return NONE;
    const atomics = this.config & atomicMask;
    if (atomics === 0) return NONE;
    if ((atomics & (atomics - 1)) === 0) {
      // One active atomic state: no conflicts to resolve, no list to build.
      const t = this.firstEnabled(31 - Math.clz32(atomics), eventless, event);
      return t === undefined ? NONE : (t.alone ??= [t]);
    }
    const enabled: Selected[] = [];
    // The active atomic states, in document order: the lowest set bit of the configuration first.
    for (let bits = atomics; bits !== 0; bits &= bits - 1) {
      const t = this.firstEnabled(31 - Math.clz32(bits & -bits), eventless, event);
      if (t !== undefined && !enabled.includes(t)) enabled.push(t);
    }
    return this.removeConflicts(enabled);
  }

  /** The first enabled transition for the event on an atomic state or its nearest ancestor that has one. */
  private firstEnabled(atomic: number, eventless: boolean, event: Event): Selected | undefined {
    // The candidates of the state and its ancestors, nearest first, listed once per table (`compile`): one lookup,
    // not one per ancestor. Indexed loops here and below, not for-of: on an engine without a JIT (Hermes) each
    // for-of costs an iterator.
    const state = this.states[atomic]!;
    const candidates = eventless ? state.alwaysOnPath : state.onPath.get(event.type);
    if (candidates === undefined) return undefined;
    // One arguments object for every guard asked, made only once one is (most transitions have none): guards
    // only read it (machine-logic.ts, `Guard`).
    let args: GuardArgs<TContext> | undefined;
    for (let c = 0; c < candidates.length; c++) {
      const t = candidates[c]!;
      const guard = t.row.guard;
      if (guard === undefined) return t;
      args ??= { context: this.context, event };
      // A named guard (most of them) is called here: a method call fewer per guard.
      if (
        typeof guard === 'string'
          ? (this.machine.logic.guards[guard] as (args: GuardArgs<TContext>) => boolean)(args)
          : this.check(guard, args)
      )
        return t;
    }
    return undefined;
  }

  private check(guard: GuardRow, args: GuardArgs<TContext>): boolean {
    if (typeof guard === 'string') {
      const fn = this.machine.logic.guards[guard] as (args: GuardArgs<TContext>) => boolean;
      return fn(args);
    }
    if ('and' in guard) {
      // A loop, not `every` with a callback: an interpreter pays for the callback on every guard of the list.
      const all = guard.and;
      for (let i = 0; i < all.length; i++) if (!this.check(all[i]!, args)) return false;
      return true;
    }
    return !this.check(guard.not, args);
  }

  /** Of two transitions that would exit the same state, the one from the deeper source wins (XState's rule). */
  private removeConflicts(enabled: Selected[]): Selected[] {
    if (enabled.length < 2) return enabled;
    const kept: Selected[] = [];
    for (const t1 of enabled) {
      let preempted = false;
      const remove = new Set<Selected>();
      for (const t2 of kept) {
        if ((this.exitMask(t1) & this.exitMask(t2)) !== 0) {
          if (this.isDescendant(t1.source, t2.source)) remove.add(t2);
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

  // ---- the microstep ----

  private microstep(selected: readonly Selected[], event: Event, initial: boolean): void {
    if (selected.length === 0) return;
    if (selected.length === 1 && !initial) {
      // One transition (nearly every step): what it exits and enters is known from the table after its first
      // step, so a targetless one costs only its actions.
      const t = selected[0]!;
      const exit = (t.exitable ?? this.exitableOf(t)) & this.config;
      if (exit !== 0) this.exitStates(exit, event);
      const actions = t.row.actions;
      if (actions) this.execute(actions, event);
      const entered = t.entered ?? this.statesToEnter(selected, false);
      if (entered.length > 0) this.enterStates(entered, event);
      return;
    }
    if (!initial) {
      let exit = 0;
      for (let i = 0; i < selected.length; i++) exit |= this.exitMask(selected[i]!);
      this.exitStates(exit, event);
    }
    for (let i = 0; i < selected.length; i++) {
      const actions = selected[i]!.row.actions;
      if (actions) this.execute(actions, event);
    }
    this.enterStates(this.statesToEnter(selected, initial), event);
  }

  /** The active states a transition exits, as a configuration mask (bit `i`: state `i`). */
  private exitMask(t: Selected): number {
    return (t.exitable ?? this.exitableOf(t)) & this.config;
  }

  /** The states a transition exits when they are active: it depends only on the table, so it is kept. */
  private exitableOf(t: Selected): number {
    let exit = 0;
    if (t.row.targets?.length) {
      const domain = this.domain(t);
      exit = domain === -1 ? this.compiled.everyMask : this.states[domain]!.descendantsMask;
      // As XState's computeExitSet; a re-entering transition's domain is a proper ancestor of its source (its
      // LCA), so this never adds a state today.
      if (t.row.reenter && t.source === domain) exit |= 1 << domain;
    }
    t.exitable = exit;
    return exit;
  }

  /** Exits the states of `exit`, a configuration mask, deepest (last in document order) first. */
  private exitStates(exit: number, event: Event): void {
    for (let bits = exit; bits !== 0;) {
      const s = 31 - Math.clz32(bits);
      bits &= ~(1 << s);
      const state = this.states[s]!;
      // Most states have no exit actions: no call for an empty list.
      if (state.exit.length > 0) this.execute(state.exit, event);
      const { after, invoke } = state;
      for (let i = 0; i < after.length; i++)
        (this.deferred ??= []).push(CLEAR_TIMER, after[i]!.event, undefined);
      for (let i = 0; i < invoke.length; i++) this.stopChild(invoke[i]!.id);
      this.config &= ~(1 << s);
      this.changed = true;
    }
  }

  private enterStates(entered: readonly number[], event: Event): void {
    for (let e = 0; e < entered.length; e++) {
      const s = entered[e]!;
      const state = this.states[s]!;
      this.config |= 1 << s;
      this.changed = true;
      if (state.entry.length > 0) this.execute(state.entry, event);
      const { after, invoke } = state;
      for (let i = 0; i < after.length; i++) this.armTimer(after[i]!.event, after[i]!.delay);
      for (let i = 0; i < invoke.length; i++) this.invoke(invoke[i]!, event);
      if (state.type === 'final' && state.parent === 0) {
        // A final child of the root ends the machine; the derivation accepts final states nowhere else.
        for (let a = this.states.length - 1; a >= 0; a--) {
          if ((this.config & (1 << a)) === 0) continue;
          const active = this.states[a]!;
          if (active.exit.length > 0) this.execute(active.exit, event);
          for (let i = 0; i < active.after.length; i++) this.defer(CLEAR_TIMER, active.after[i]!.event);
        }
        this.status = 'done';
        this.output = this.machineOutput(state, event);
        const running: Child[] = [];
        for (let c = this.children; c !== undefined; c = c.next) running.push(c);
        for (let i = 0; i < running.length; i++) this.stopChild(running[i]!.id);
        return;
      }
    }
  }

  private machineOutput(final: State, event: Event): unknown {
    const { outputs } = this.machine.logic;
    const stateOutput =
      final.output === undefined ? undefined : outputs[final.output]!({ context: this.context, event });
    const name = this.machine.table.output;
    if (name === undefined) return undefined;
    const doneEvent = { type: final.doneType, output: stateOutput };
    return outputs[name]!({ context: this.context, event: doneEvent });
  }

  /**
   * The states a microstep enters, in document order. What one transition enters depends only on the table,
   * so it is computed once per transition and kept; several at once (parallel regions) are computed together.
   */
  private statesToEnter(transitions: readonly Selected[], initial: boolean): readonly number[] {
    if (initial) {
      // The same for every run of the table: computed once.
      const compiled = this.compiled;
      if (compiled.initialEntered === undefined) {
        const set = new Set<number>();
        this.entrySet(transitions, set);
        set.add(0);
        compiled.initialEntered = [...set].sort((a, b) => a - b);
      }
      return compiled.initialEntered;
    }
    if (transitions.length === 1) {
      const t = transitions[0]!;
      if (t.entered === undefined) {
        const set = new Set<number>();
        this.entrySet(transitions, set);
        t.entered = [...set].sort((a, b) => a - b);
      }
      return t.entered;
    }
    const set = new Set<number>();
    this.entrySet(transitions, set);
    return [...set].sort((a, b) => a - b);
  }

  // ---- entry set (XState's computeEntrySet and its helpers) ----

  private entrySet(transitions: readonly Selected[], toEnter: Set<number>): void {
    for (const t of transitions) {
      const targets = t.row.targets ?? [];
      const domain = this.domain(t);
      for (const s of targets) {
        if (t.source !== s || t.source !== domain || t.row.reenter) toEnter.add(s);
        this.addDescendants(s, toEnter);
      }
      for (const s of targets) {
        const ancestors = this.properAncestors(s, domain);
        if (domain !== -1 && this.states[domain]!.type === 'parallel') ancestors.push(domain);
        const reentrancy = this.states[t.source]!.parent === -1 && t.row.reenter ? undefined : domain;
        this.addAncestors(ancestors, toEnter, reentrancy);
      }
    }
  }

  private addDescendants(s: number, toEnter: Set<number>): void {
    const state = this.states[s]!;
    if (state.type === 'compound') {
      const initial = state.initial!;
      toEnter.add(initial);
      this.addDescendants(initial, toEnter);
    } else if (state.type === 'parallel') {
      for (const child of state.children) {
        if (![...toEnter].some((e) => this.isDescendant(e, child))) {
          toEnter.add(child);
          this.addDescendants(child, toEnter);
        }
      }
    }
  }

  private addAncestors(
    ancestors: readonly number[],
    toEnter: Set<number>,
    reentrancy: number | undefined,
  ): void {
    for (const anc of ancestors) {
      if (reentrancy === undefined || this.isDescendant(anc, reentrancy)) toEnter.add(anc);
      const state = this.states[anc]!;
      if (state.type !== 'parallel') continue;
      for (const child of state.children) {
        if (![...toEnter].some((e) => this.isDescendant(e, child))) {
          toEnter.add(child);
          this.addDescendants(child, toEnter);
        }
      }
    }
  }

  private initialTargets(): number[] {
    const root = this.states[0]!;
    if (root.type === 'compound') return [root.initial!];
    return [...root.children];
  }

  // ---- tree helpers (XState's, over table indices; -1 stands for "no state") ----

  /** The state whose descendants a transition exits and enters (XState's getTransitionDomain). */
  private domain(t: Selected): number {
    return (t.domain ??= this.computeDomain(t));
  }

  private computeDomain(t: Selected): number {
    const targets = t.row.targets ?? [];
    if (!t.row.reenter && targets.every((s) => s === t.source || this.isDescendant(s, t.source)))
      return t.source;
    const lca = this.leastCommonAncestor([...targets, t.source]);
    if (lca !== -1) return lca;
    return t.row.reenter ? -1 : 0;
  }

  private leastCommonAncestor(nodes: readonly number[]): number {
    const [head, ...tail] = nodes;
    for (const ancestor of this.properAncestors(head!, -1)) {
      if (tail.every((s) => this.isDescendant(s, ancestor))) return ancestor;
    }
    return -1;
  }

  /** Ancestors of `s` from its parent up, stopping before `upTo` (-1: up to the root, included). */
  private properAncestors(s: number, upTo: number): number[] {
    const ancestors: number[] = [];
    if (s === upTo) return ancestors;
    for (let m = this.states[s]!.parent; m !== -1 && m !== upTo; m = this.states[m]!.parent)
      ancestors.push(m);
    return ancestors;
  }

  private isActive(s: number): boolean {
    return (this.config & (1 << s)) !== 0;
  }

  /** Whether `child` lies strictly below `parent` (every state lies below -1, as below XState's `undefined`). */
  private isDescendant(child: number, parent: number): boolean {
    return parent === -1 || this.states[child]!.ancestors.has(parent);
  }

  private stateValueOf(s: number): unknown {
    const state = this.states[s]!;
    const activeChildren = state.children.filter((c) => this.isActive(c));
    if (state.type === 'compound') {
      const child = activeChildren[0];
      if (child === undefined) return {};
      const type = this.states[child]!.type;
      if (type === 'atomic' || type === 'final') return this.states[child]!.key;
    }
    const value: Record<string, unknown> = {};
    for (const child of activeChildren) value[this.states[child]!.key] = this.stateValueOf(child);
    return value;
  }

  // ---- actions and effects ----

  private execute(actions: readonly ActionRow[], event: Event): void {
    if (actions.length === 0) return;
    // One arguments object for the list: the context is patched in place, so it stays the one to pass.
    const args = { context: this.context, event: event as never };
    const impls = this.machine.logic.actions;
    for (let i = 0; i < actions.length; i++) {
      const action = actions[i]!;
      const impl = impls[typeof action === 'string' ? action : action.name] as ActionImpl<TContext>;
      if (impl.kind === 'raise') {
        (this.internal ??= []).push(impl.event);
        continue;
      }
      // The params function gets the same { context, event } as the action (it only reads them).
      const params =
        typeof action === 'string'
          ? undefined
          : 'value' in action.params
            ? action.params.value
            : this.machine.logic.params[action.params.from]!(args);
      if (impl.kind === 'assign') {
        this.patch(impl.run(args, params as never));
      } else if (impl.kind === 'emit') {
        const emitted = impl.run(args, params as never);
        if (emitted !== undefined) this.emit(emitted);
      } else if (impl.kind === 'sendParent') {
        // Without a parent this fails the machine, as it does in XState.
        const sent = impl.run(args, params as never) as Event;
        this.defer(SEND_PARENT, sent);
      } else {
        this.performStep(impl.run(args, params as never));
      }
    }
  }

  /**
   * Applies a context change in place: the logic never keeps a context it was given, and nothing outside
   * reads an old one, so the copy XState's `assign` makes would only be garbage.
   */
  private patch(changes: Partial<TContext>): void {
    // A for-in loop rather than Object.assign: the changes are object literals (own keys only), and on Hermes the
    // native call costs more than the loop over their few keys.
    const context = this.context as Record<string, unknown>;
    for (const key in changes) context[key] = changes[key];
    this.changed = true;
  }

  private performStep(step: ActionStep<TContext>): void {
    this.patch(step.changes);
    const { stop, start, send, emit } = step;
    if (stop) for (let i = 0; i < stop.length; i++) this.stopChild(stop[i]!);
    if (start)
      for (let i = 0; i < start.length; i++) {
        const child = start[i]!;
        this.spawn(child.id, child.src, child.input, undefined);
      }
    if (send)
      for (let i = 0; i < send.length; i++) {
        const { to, event } = send[i]!;
        // As XState's sendTo a child by id: the child must be there (else the machine fails), and gets the event
        // after the step (a child stopped meanwhile ignores it).
        this.defer(SEND_CHILD, this.findChild(to) ?? to, event);
      }
    if (emit) for (let i = 0; i < emit.length; i++) this.emit(emit[i] as { type: string });
  }

  private emit(event: { type: string }): void {
    if (this.observesEmitted) (this.deferred ??= []).push(EMIT, event, undefined);
  }

  private armTimer(eventType: string, delayName: string): void {
    const delay = this.machine.logic.delays[delayName]!({ context: this.context });
    (this.deferred ??= []).push(ARM_TIMER, eventType, delay);
  }

  /** @internal A timer of this actor is due: its event is sent, unless the timer was cleared meanwhile. */
  timerFired(slot: TimerSlot): void {
    // A timer cleared meanwhile is no longer listed: nothing to send.
    if (!listed(this.timers, slot)) return;
    this.timers = unlink(this.timers, slot);
    this.send({ type: slot.event });
  }

  private clearTimer(eventType: string): void {
    let t = this.timers;
    while (t !== undefined && t.event !== eventType) t = t.next;
    if (t === undefined) return;
    this.machine.timers.clear(t.handle);
    this.timers = unlink(this.timers, t);
  }

  /** Leaves an effect for after the step: a code and its arguments rather than a closure, none made per effect. */
  private defer(effect: Effect, a: unknown, b?: unknown): void {
    (this.deferred ??= []).push(effect, a, b);
  }

  /** Runs the effects a step left (`defer`), in turn: one call for them all, not one each. */
  private perform(effects: readonly unknown[]): void {
    for (let i = 0; i < effects.length; i += 3) {
      const a = effects[i + 1];
      const b = effects[i + 2];
      switch (effects[i] as Effect) {
        case EMIT:
          this.observer!.emitted!(a as { type: string });
          continue;
        case SEND_PARENT:
          // Without a parent this fails the machine, as it does in XState.
          this.parent!.send(a as Event);
          continue;
        case SEND_CHILD: {
          // XState's sendTo a child by id, after the step: a child that is not running (`a` is then its id), or
          // that is not a machine, fails the machine (docs/design.md); a child machine stopped meanwhile ignores it.
          if (typeof a === 'string')
            throw new MachineError(`${this.machine.table.id}: sendTo \`${a}\`, which is not running`);
          const child = a as Child;
          if (this.machine.machines?.[child.src] === undefined)
            throw new MachineError(
              `${this.machine.table.id}: sendTo \`${child.id}\`, which is not a machine`,
            );
          child.machine?.send(b as Event);
          continue;
        }
        case ARM_TIMER: {
          const eventType = a as string;
          if (this.timers !== undefined) this.clearTimer(eventType);
          const slot = new TimerSlot(this, eventType);
          slot.handle = this.machine.timers.set(slot, b as number);
          this.timers = append(this.timers, slot);
          continue;
        }
        case CLEAR_TIMER:
          this.clearTimer(a as string);
          continue;
        case START_CHILD:
          this.startChild(a as Child);
          continue;
        case ABORT_CHILD:
          this.abort(a as Child);
          continue;
      }
    }
  }

  private findChild(id: string): Child | undefined {
    let c = this.children;
    while (c !== undefined && c.id !== id) c = c.next;
    return c;
  }

  private dropChild(child: Child): void {
    this.children = unlink(this.children, child);
  }

  private invoke(invoke: State['invoke'][number], event: Event): void {
    const input =
      invoke.input === undefined
        ? undefined
        : this.machine.logic.inputs[invoke.input]!({ context: this.context, event });
    this.spawn(invoke.id, invoke.src, input, invoke.replies);
  }

  /** Starts an invoked actor or a spawned child after the step (its input taken now, as XState does). */
  private spawn(id: string, src: string, input: unknown, replies: InvokeReplies | undefined): void {
    const child: Child = {
      id,
      src,
      input,
      replies,
      controller: undefined,
      machine: undefined,
      state: 'new',
      next: undefined,
    };
    // Most states start their one child with none running: no walk then.
    if (this.children === undefined) this.children = child;
    else {
      const existing = this.findChild(id);
      if (existing) this.dropChild(existing);
      this.children = append(this.children, child);
    }
    this.changed = true;
    (this.deferred ??= []).push(START_CHILD, child, undefined);
  }

  private stopChild(id: string): void {
    const child = this.findChild(id);
    if (child === undefined) return;
    this.dropChild(child);
    this.changed = true;
    // A child stopped in the step that spawned it never starts (as in XState).
    if (child.state === 'new') child.state = 'stopped';
    else this.defer(ABORT_CHILD, child);
  }

  private abort(child: Child): void {
    if (child.state === 'stopped') return;
    child.state = 'stopped';
    child.controller?.abort();
    child.machine?.stop();
  }

  private startChild(child: Child): void {
    if (child.state !== 'new') return;
    child.state = 'running';
    const definition = this.machine.machines?.[child.src];
    if (definition !== undefined) {
      child.machine = definition.start(
        child.id,
        child.input,
        this as LeanActor<unknown>,
        this.machine as never,
      );
      return;
    }
    // An effect the run answers itself is a method of its observer, else one every run shares.
    const own = this.machine.runEffects?.has(child.src) ? this.observer : undefined;
    const effect = own ? (own as Record<string, LeanEffect>)[child.src] : this.machine.actors[child.src];
    if (effect === undefined)
      throw new MachineError(`${this.machine.table.id}: no actor \`${child.src}\` provided`);
    let signal = NEVER_ABORTED;
    if (!this.machine.ignoresSignal?.has(child.src)) {
      child.controller = new AbortController();
      signal = child.controller.signal;
    }
    let result: unknown;
    try {
      result = effect.call(own, child.input as never, signal);
    } catch (error) {
      this.reply(child, false, error);
      return;
    }
    if (isPromiseLike(result)) {
      result.then(
        (value) => this.reply(child, true, value),
        (error: unknown) => this.reply(child, false, error),
      );
    } else {
      this.reply(child, true, result);
    }
  }

  /**
   * An actor's answer (`ok`: its output, else its error) reaches the machine only while that very child is
   * current.
   */
  private reply(child: Child, ok: boolean, answer: unknown): void {
    if (child.state !== 'running' || this.findChild(child.id) !== child) return;
    child.state = 'stopped';
    this.dropChild(child);
    const replies = child.replies;
    if (replies === undefined) {
      // A spawned child's answer is the one event it sends back (its wrapper never rejects).
      if (ok) this.send(answer as Event);
      return;
    }
    this.send(ok ? { type: replies.done, output: answer } : { type: replies.error, error: answer });
  }
}

/** An invoked actor failed and no transition handles its error: the machine fails, as an XState actor does. */
export class UnhandledActorError extends MachineError {
  override name = 'UnhandledActorError';
  constructor(machine: string, eventType: string, cause: unknown) {
    super(`${machine}: nothing handles ${eventType}`, { cause });
  }
}

/** The event types an invoked actor's answer comes as, made once per table rather than once per answer. */
interface InvokeReplies {
  readonly done: string;
  readonly error: string;
}

/** A table's state with every list present and what the generated tables leave out worked out. */
interface State {
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
  readonly invoke: readonly (NonNullable<StateRow['invoke']>[number] & { readonly replies: InvokeReplies })[];
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

interface Compiled {
  readonly states: readonly State[];
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

const compiledTables = new WeakMap<MachineTable, Compiled>();

/** The table's states with every list filled in, once per table. */
function compile(table: MachineTable): Compiled {
  let compiled = compiledTables.get(table);
  if (compiled === undefined) {
    const rows = table.states;
    // The configuration is one 32-bit number (derive-table.ts refuses larger machines; this, a table made by hand).
    if (rows.length > 31)
      throw new MachineError(`${table.id}: ${rows.length} states, more than the 31 the executor can run`);
    const ids = stateIds(table);
    const pathOf = (i: number): number[] => (i === -1 ? [] : [i, ...pathOf(rows[i]!.parent)]);
    const partial = rows.map((row, i): Omit<State, 'onPath' | 'alwaysOnPath'> => {
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
    const states: State[] = partial.map((state) => {
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
    compiled = { states, everyMask, alwaysMask, eventMasks, atomicMask };
    compiledTables.set(table, compiled);
  }
  return compiled;
}

/** A list linked through `next`: an actor's armed timers and running children, a few at a time, in order. */
interface Linked<T> {
  next: T | undefined;
}

/** The list with `item` at its end. */
function append<T extends Linked<T>>(head: T | undefined, item: T): T {
  if (head === undefined) return item;
  let last = head;
  while (last.next !== undefined) last = last.next;
  last.next = item;
  return head;
}

/** The list without `item` (the same list when `item` is not on it). */
function unlink<T extends Linked<T>>(head: T | undefined, item: T): T | undefined {
  if (head === item) return item.next;
  for (let node = head; node !== undefined; node = node.next) {
    if (node.next === item) {
      node.next = item.next;
      break;
    }
  }
  return head;
}

/** Whether `item` is on the list. */
function listed<T extends Linked<T>>(head: T | undefined, item: T): boolean {
  for (let node = head; node !== undefined; node = node.next) if (node === item) return true;
  return false;
}

/** What `start` runs instead of an event: the initial step (a value no caller can send). */
const INITIAL: unique symbol = Symbol('initial step');

/** The event of the initial step, as XState's. */
const INIT_EVENT: Event = Object.freeze({ type: 'xstate.init' });

/** No transition selected. */
const NONE: readonly Selected[] = Object.freeze([]);

/** The signal of an effect that answers at once: nothing is left to abort by the time a state could be left. */
const NEVER_ABORTED = new AbortController().signal;

/** A transition and the state it is defined on, with what the table alone decides about it, once known. */
interface Selected {
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
type FullRow = { readonly [K in keyof TransitionRow]-?: TransitionRow[K] | undefined };

/**
 * A transition paired with its source, its row with every field present: on Hermes reading a property an object
 * lacks costs a walk up its prototypes (several times a present one's cost), and selection reads `guard`,
 * `actions` and `targets` of every candidate.
 */
function selected(row: TransitionRow, source: number): Selected {
  return {
    row: { targets: row.targets, guard: row.guard, actions: row.actions, reenter: row.reenter },
    source,
    domain: undefined,
    entered: undefined,
    alone: undefined,
    exitable: undefined,
  };
}

function isPromiseLike(value: unknown): value is PromiseLike<unknown> {
  return typeof (value as { then?: unknown } | null)?.then === 'function';
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
