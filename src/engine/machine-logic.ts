import { assign, enqueueActions, fromCallback, raise, sendParent, type EventObject } from 'xstate';

/**
 * A machine's named implementations as plain functions: the single source both runners call. The XState
 * machine wraps each action with `assign`, `enqueueActions` or `raise` (`xstateActions` below); the lean
 * executor (src/engine/lean-actor.ts) calls the same functions directly, following the table that
 * src/engine/derive-table.ts derives from the machine. Nothing here imports a runner.
 */
export interface MachineLogic<TContext, TInput = unknown> {
  /** The initial context, from the machine's input. */
  context(args: { input: TInput }): TContext;
  guards: Record<string, Guard<TContext>>;
  delays: Record<string, (args: { readonly context: ReadonlyContext<TContext> }) => number>;
  actions: Record<string, ActionImpl<TContext>>;
  /** Invocation inputs, by name: what an invoked actor is given. */
  inputs: Record<string, (args: LogicArgs<TContext, unknown>) => unknown>;
  /** Action parameters computed from the event being handled, by name. */
  params: Record<string, (args: LogicArgs<TContext, unknown>) => unknown>;
  /** Final states' outputs (and the machine's), by name. */
  outputs: Record<string, (args: LogicArgs<TContext, unknown>) => unknown>;
}

/**
 * What every logic function (guard, action, delay, input, params, output) is given: the context and the event
 * being handled. It only reads them, and keeps neither the arguments nor the context: the lean executor writes
 * an action's changes into the context in place (no copy, unlike XState's `assign`) and hands one arguments
 * object to several guards in turn. `readonly` holds this one level deep; test/engine/checked-logic.ts holds the
 * rest on every differential run (anything changed however deep, or used after the call, fails the run).
 */
export interface LogicArgs<TContext, TEvent = never> {
  readonly context: ReadonlyContext<TContext>;
  readonly event: TEvent;
}

/** The context, its fields `readonly`; any context stays `any` (`Readonly<any>` would fit no context type). */
type ReadonlyContext<TContext> = 0 extends 1 & TContext ? TContext : Readonly<TContext>;

/** A question about the context and event: it only reads them (`LogicArgs`). */
export type Guard<TContext> = (args: LogicArgs<TContext>) => boolean;

/**
 * What an action of one step does besides changing context: children started and stopped, events sent to
 * children (by id; each must be running), events emitted. A child's `src` is an actor, or a machine the runner
 * knows (`MachineDefinition.machines`: the outbox's `outboxEntry`). Both runners do them in this order, after
 * the changes: stop, start, send, emit (test/engine/effect-order.test.ts pins where they fall in a step).
 */
export interface ActionStep<TContext, TEmitted = unknown> {
  changes: Partial<TContext>;
  start?: readonly { src: string; id: string; input: unknown }[];
  stop?: readonly string[];
  send?: readonly { to: string; event: { type: string } }[];
  emit?: readonly TEmitted[];
}

type ActionArgs<TContext> = LogicArgs<TContext>;

/** The kinds of action a machine may use; each maps to one XState action creator. */
export type ActionImpl<TContext> =
  AssignImpl<TContext> | EmitImpl<TContext> | StepImpl<TContext> | RaiseImpl | SendParentImpl<TContext>;

/**
 * A context change (`assign`): it returns the changed fields, and changes nothing it was given (`LogicArgs`);
 * the executor writes them into the context.
 */
export interface AssignImpl<TContext> {
  kind: 'assign';
  run(args: ActionArgs<TContext>, params: never): Partial<TContext>;
  /**
   * Writes what `run` returned into the context by name, for the lean executor; without it the executor copies
   * every field `run` returned by its name as a string, which costs an interpreter (Hermes) about 700
   * instructions a field against 75 for a write by name. For actions on every request's path. It must write
   * exactly the fields `run` returned: the differential property tests hold the lean executor to XState's
   * `assign`, which never calls it.
   */
  write?: ((context: TContext, changes: Partial<TContext>) => void) | undefined;
}
/** An event for the machine's listeners, or none (`enqueueActions` + `enqueue.emit`). */
export interface EmitImpl<TContext> {
  kind: 'emit';
  run(args: ActionArgs<TContext>, params: never): { type: string } | undefined;
  /**
   * The one type of event `run` emits, when it is always the same: the lean executor skips the action (builds no
   * event) for a run that nothing hears it from (no observer of emitted events, or one that does not hear that
   * type, `LeanObserver.hears`). An action without it always runs.
   */
  type?: string | undefined;
}
/** A context change plus children and events (`enqueueActions`). */
export interface StepImpl<TContext> {
  kind: 'step';
  run(args: ActionArgs<TContext>, params: never): ActionStep<TContext>;
}
/** An event the machine sends itself at once (`raise`). */
export interface RaiseImpl {
  kind: 'raise';
  event: { type: string };
}

/** An event for the machine's parent, when it runs as a child machine (`sendParent`). */
export interface SendParentImpl<TContext> {
  kind: 'sendParent';
  run(args: ActionArgs<TContext>, params: never): { type: string };
}

/** The XState actions for `setup({ actions })`, each named as in the logic so the inspector shows the name. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- any context: the wrappers only pass it on
type AnyImpl = ActionImpl<any>;

export function xstateActions<TActions extends Record<string, AnyImpl>>(
  actions: TActions,
): { [K in keyof TActions]: never } {
  const wrapped: Record<string, unknown> = {};
  for (const [name, impl] of Object.entries(actions)) wrapped[name] = xstateAction(impl);
  // Typed `never` so that setup() takes them whatever its context type; the logic's own types check the rest.
  return wrapped as { [K in keyof TActions]: never };
}

type WrapperArgs = { context: never; event: never; enqueue: Enqueue };

function xstateAction(impl: AnyImpl): unknown {
  switch (impl.kind) {
    case 'assign':
      return assign(((args: { context: never; event: never }, params: never) =>
        impl.run(args, params)) as never);
    case 'emit':
      return enqueueActions((({ context, event, enqueue }: WrapperArgs, params: never) => {
        const emitted = impl.run({ context, event }, params);
        if (emitted) enqueue.emit(emitted);
      }) as never);
    case 'step':
      return enqueueActions((({ context, event, enqueue }: WrapperArgs, params: never) => {
        const { changes, start = [], stop = [], send = [], emit = [] } = impl.run({ context, event }, params);
        enqueue.assign(changes);
        for (const id of stop) enqueue.stopChild(id);
        for (const child of start) enqueue.spawnChild(child.src, { id: child.id, input: child.input });
        for (const { to, event } of send) enqueue.sendTo(to, event);
        for (const emitted of emit) enqueue.emit(emitted as { type: string });
      }) as never);
    case 'raise':
      return raise(impl.event);
    case 'sendParent':
      return sendParent(((args: { context: never; event: never }, params: never) =>
        impl.run(args, params)) as never);
  }
}

/** The part of xstate's `enqueue` the wrappers use. */
interface Enqueue {
  assign(changes: object): void;
  emit(event: { type: string }): void;
  stopChild(id: string): void;
  spawnChild(src: string, options: { id: string; input: unknown }): void;
  sendTo(to: string, event: { type: string }): void;
}

/**
 * A child that sends back the one event `run` resolves with, as an XState callback actor: its signal aborts
 * when the machine stops the child before it replied, and nothing is sent once stopped. (`run` must not
 * reject.) The lean executor treats a spawned child's answer the same way.
 */
export function replyingActor<TInput>(run: (input: TInput, signal: AbortSignal) => Promise<EventObject>) {
  return fromCallback<EventObject, TInput>(({ input, sendBack }) => {
    const controller = new AbortController();
    let open = true;
    void run(input, controller.signal).then((event) => {
      if (!open) return;
      open = false;
      sendBack(event);
    });
    return () => {
      if (!open) return;
      open = false;
      controller.abort();
    };
  });
}
