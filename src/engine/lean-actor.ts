import type { ActionImpl, ActionStep, MachineLogic } from './machine-logic.js';
import { MachineError } from '../errors/machine-error.js';
import {
  NONE,
  enabledTransitions,
  exitMask,
  exitableOf,
  initialTransition,
  matchesValue,
  stateValue,
  statesToEnter,
  type MachineEvent as Event,
} from './algorithm.js';
import {
  compileTable,
  type CompiledInvoke,
  type CompiledState,
  type CompiledTable,
  type InvokeReplies,
  type Selected,
} from './compiled-table.js';
import { append, listed, unlink } from './linked-list.js';
import type { ActionRow, MachineTable } from './machine-table.js';
import type { TimerTarget, Timers } from './timers.js';

/**
 * Runs one machine from its derived table (machine-table.ts), calling the machine's named logic directly: no
 * XState actor, snapshot or mailbox object per run. The actor (as xstate's `createActor` and its mailbox): the
 * configuration, the mailbox and run to completion, the macrostep loop, the actions, timers, children,
 * effects and observer; which transitions are taken and which states they exit and enter is the algorithm's
 * (algorithm.ts, as xstate's `stateUtils`). Together they follow XState v5 (SCXML's microstep and macrostep)
 * for exactly the features the derivation accepts (docs/design.md), and the conformance suite,
 * test/engine/*.differential.property.test.ts, checks them step by step against a real XState actor: the same
 * states, context, emitted events, invocations, timers and output.
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
  /**
   * Names of run effects (`runEffects`) that read what they need from the machine's context: each is handed the
   * context itself where the invoke's input function would make an object of its own (none made per invocation).
   * The context is patched in place, so the effect reads it as it stood when its state was entered.
   */
  contextInputs?: ReadonlySet<string> | undefined;
}

/**
 * What one run tells its owner. An object with methods rather than three callbacks: a request's own object (its
 * `RequestRun`) observes its run, so a run in flight holds no closures for it.
 */
export interface LeanObserver {
  /** The machine's emitted events, after the step that emitted them. */
  emitted?(event: { type: string }): void;
  /**
   * Whether the observer hears emitted events of `type` now: an action that always emits that type
   * (`EmitImpl.type`) is skipped when it does not, so that no event is built for nobody. Without it, every type.
   */
  hears?(type: string): boolean;
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

/**
 * An armed timer: what `Timers` calls back when it is due (no closure per timer). The actor's timers form a list
 * through `next` (a few at a time, no array to grow).
 */
class TimerSlot implements TimerTarget {
  // The queue's bookkeeping (TimerTarget's), declared here rather than inherited: no base constructor to call.
  due = 0;
  seq = 0;
  index = -1;
  handle: unknown = undefined;
  next: TimerSlot | undefined = undefined;
  constructor(
    private readonly actor: { timerFired(slot: TimerSlot): void },
    readonly event: string,
  ) {}

  fire(): void {
    this.actor.timerFired(this);
  }
}

/**
 * The kinds of effect a step leaves for after it (`LeanActor.defer`); they run after the step, in the order
 * they were left, as XState runs its deferred actions: each exited state's exit actions' effects, its timers
 * cleared and its actors stopped (deepest state first), the transitions' actions' effects, then each entered
 * state's entry actions' effects, its timers armed and its actors started (in document order); then the
 * observer's `changed`. test/engine/effect-order.test.ts pins that order against XState's (whose first step
 * starts its actors before it arms its timers: the test says why a machine sees no difference). Constants, not
 * an object, so that bundlers inline them.
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
  /** Its input until it starts: then the child no longer holds it (a request in flight keeps no attempt input). */
  input: unknown;
  /** An invoked actor's done and error event types; none for a child spawned by a step. */
  readonly replies: InvokeReplies | undefined;
  controller: AbortController | undefined;
  /** For a child machine: its actor, once started. */
  machine: LeanActor<unknown> | undefined;
  state: 'new' | 'running' | 'stopped';
  next: Child | undefined;
}

/**
 * A machine made ready for the lean executor once (machine-runner.ts `leanRunner`): each `start` is one run,
 * made here, so that a run's start goes from its owner straight to its actor.
 */
export class PreparedLeanMachine<TContext, TInput> {
  constructor(private readonly machine: LeanMachine<TContext, TInput>) {}

  start(input: TInput, observer?: LeanObserver): LeanActor<TContext, TInput> {
    return new LeanActor(this.machine, input, observer).start();
  }
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
    const compiled = compileTable(machine.table);
    this.compiled = compiled;
    this.states = compiled.states;
    this.context = machine.logic.context({ input });
  }

  /** The table as the algorithm (algorithm.ts) walks it, shared by every run of it; its states, read often. */
  private readonly compiled: CompiledTable;
  private readonly states: readonly CompiledState[];

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
      this.valueCache = { config: this.config, value: stateValue(this.compiled, this.config) };
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
    // The same for every run of the table: made once, as is the event (frozen: logic only reads events,
    // `LogicArgs`).
    this.microstep(initialTransition(this.compiled), INIT_EVENT, true);
    this.settle(INIT_EVENT);
  }

  private macrostep(event: Event): void {
    // Selection is the algorithm's (algorithm.ts), called here directly: no call between, on the hot path.
    const transitions = enabledTransitions(
      this.compiled,
      this.config,
      event,
      false,
      this.machine.logic.guards,
      this.context,
    );
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
          ? enabledTransitions(
              this.compiled,
              this.config,
              event,
              true,
              this.machine.logic.guards,
              this.context,
            )
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
        enabled = enabledTransitions(
          this.compiled,
          this.config,
          event,
          false,
          this.machine.logic.guards,
          this.context,
        );
      }
      this.changed = false;
      this.microstep(enabled, event, false);
      selectEventless = !fromEventless || this.changed;
    }
  }

  // ---- the microstep ----

  private microstep(selected: readonly Selected[], event: Event, initial: boolean): void {
    if (selected.length === 0) return;
    if (selected.length === 1 && !initial) {
      // One transition (nearly every step): what it exits and enters is known from the table after its first
      // step, so a targetless one costs only its actions.
      const t = selected[0]!;
      const exit = (t.exitable ?? exitableOf(this.compiled, t)) & this.config;
      if (exit !== 0) this.exitStates(exit, event);
      const actions = t.row.actions;
      if (actions) this.execute(actions, event);
      const entered = t.entered ?? statesToEnter(this.compiled, selected, false);
      if (entered.length > 0) this.enterStates(entered, event);
      return;
    }
    if (!initial) {
      let exit = 0;
      for (let i = 0; i < selected.length; i++) exit |= exitMask(this.compiled, this.config, selected[i]!);
      this.exitStates(exit, event);
    }
    for (let i = 0; i < selected.length; i++) {
      const actions = selected[i]!.row.actions;
      if (actions) this.execute(actions, event);
    }
    this.enterStates(statesToEnter(this.compiled, selected, initial), event);
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
        // The active states, deepest (last in document order) first: the configuration's set bits, highest first.
        for (let bits = this.config; bits !== 0;) {
          const a = 31 - Math.clz32(bits);
          bits &= ~(1 << a);
          const active = this.states[a]!;
          if (active.exit.length > 0) this.execute(active.exit, event);
          for (let i = 0; i < active.after.length; i++) this.defer(CLEAR_TIMER, active.after[i]!.event);
        }
        this.status = 'done';
        this.output = this.machineOutput(state, event);
        // Most runs have no child left by now (an invoked actor's answer ended it): no list to make then.
        if (this.children !== undefined) {
          const running: Child[] = [];
          for (let c: Child | undefined = this.children; c !== undefined; c = c.next) running.push(c);
          for (let i = 0; i < running.length; i++) this.stopChild(running[i]!.id);
        }
        return;
      }
    }
  }

  private machineOutput(final: CompiledState, event: Event): unknown {
    const { outputs } = this.machine.logic;
    const stateOutput =
      final.output === undefined ? undefined : outputs[final.output]!({ context: this.context, event });
    const name = this.machine.table.output;
    if (name === undefined) return undefined;
    const doneEvent = { type: final.doneType, output: stateOutput };
    return outputs[name]!({ context: this.context, event: doneEvent });
  }

  // ---- actions and effects ----

  private execute(actions: readonly ActionRow[], event: Event): void {
    if (actions.length === 0) return;
    // One arguments object for the list: the context is patched in place, so it stays the one to pass; the logic
    // neither changes nor keeps it (machine-logic.ts, `LogicArgs`).
    const args = { context: this.context, event: event as never };
    const impls = this.machine.logic.actions;
    for (let i = 0; i < actions.length; i++) {
      const action = actions[i]!;
      const impl = impls[typeof action === 'string' ? action : action.name] as ActionImpl<TContext>;
      if (impl.kind === 'raise') {
        (this.internal ??= []).push(impl.event);
        continue;
      }
      // The params function gets the same { context, event } as the action (it only reads them, `LogicArgs`).
      const params =
        typeof action === 'string'
          ? undefined
          : 'value' in action.params
            ? action.params.value
            : this.machine.logic.params[action.params.from]!(args);
      if (impl.kind === 'assign') {
        const changes = impl.run(args, params as never);
        const write = impl.write;
        if (write === undefined) this.patch(changes);
        else {
          write(this.context, changes);
          this.changed = true;
        }
      } else if (impl.kind === 'emit') {
        // An action that always emits one type is skipped when nothing hears it; any other runs as it is.
        if (impl.type !== undefined && !this.hears(impl.type)) continue;
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
   * Applies a context change in place: the logic never keeps a context it was given (machine-logic.ts,
   * `LogicArgs`), and nothing outside reads an old one, so the copy XState's `assign` makes would only be garbage.
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

  private hears(type: string): boolean {
    if (!this.observesEmitted) return false;
    const observer = this.observer!;
    return observer.hears === undefined || observer.hears(type);
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

  private invoke(invoke: CompiledInvoke, event: Event): void {
    const input =
      invoke.input === undefined
        ? undefined
        : this.machine.contextInputs?.has(invoke.src)
          ? this.context
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
    const { input } = child;
    child.input = undefined;
    const definition = this.machine.machines?.[child.src];
    if (definition !== undefined) {
      child.machine = definition.start(child.id, input, this as LeanActor<unknown>, this.machine as never);
      return;
    }
    // An effect the run answers itself is a method of its observer, else one every run shares.
    const own = this.machine.runEffects?.has(child.src) ? this.observer : undefined;
    const effect = this.effectFor(child.src, own);
    let signal = NEVER_ABORTED;
    if (!this.machine.ignoresSignal?.has(child.src)) {
      child.controller = new AbortController();
      signal = child.controller.signal;
    }
    let result: unknown;
    try {
      result = effect.call(own, input as never, signal);
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
   * The effect an invoked actor or spawned child runs, by its name (`src`): a method of the run's own observer
   * (`own`), else the machine's; one of them must provide it.
   */
  private effectFor(src: string, own: LeanObserver | undefined): LeanEffect {
    const effect = own ? (own as Record<string, LeanEffect>)[src] : this.machine.actors[src];
    if (effect === undefined)
      throw new MachineError(`${this.machine.table.id}: no actor \`${src}\` provided`);
    return effect;
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

/** What `start` runs instead of an event: the initial step (a value no caller can send). */
const INITIAL: unique symbol = Symbol('initial step');

/** The event of the initial step, as XState's. */
const INIT_EVENT: Event = Object.freeze({ type: 'xstate.init' });

/** The signal of an effect that answers at once: nothing is left to abort by the time a state could be left. */
const NEVER_ABORTED = new AbortController().signal;

function isPromiseLike(value: unknown): value is PromiseLike<unknown> {
  return typeof (value as { then?: unknown } | null)?.then === 'function';
}
