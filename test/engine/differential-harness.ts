import { createActor, fromCallback, fromPromise, type AnyStateMachine, type EventObject } from 'xstate';
import { expect } from 'vitest';
import type { MachineLogic } from '../../machines/machine-logic.js';
import type { MachineTable } from '../../machines/machine-table.js';
import { simulatedClock, type SimulatedClock } from '../../src/clock/simulated-clock.js';
import { LeanActor, type LeanEffect } from '../../src/engine/lean-actor.js';
import { clockTimers, type Timers } from '../../src/engine/timers.js';

/**
 * Runs one machine twice, side by side: as a real XState actor and in the lean executor, each on its own
 * simulated clock, with effects the test answers by hand. After every stimulus both are compared: status,
 * state value, context, emitted events, invocations (and aborts), armed timers and output.
 */
export interface Invocation {
  src: string;
  input: unknown;
  aborted: boolean;
  settled: boolean;
  resolve(value: unknown): void;
  reject(error: Error): void;
}

/** The effects of one run: every call an actor made, in order, answered only when the test says so. */
class Effects {
  readonly calls: Invocation[] = [];

  invoke(src: string, input: unknown, signal: AbortSignal): Promise<unknown> {
    return new Promise((resolve, reject) => {
      const call: Invocation = {
        src,
        input,
        aborted: false,
        settled: false,
        resolve: (value) => {
          call.settled = true;
          resolve(value);
        },
        reject: (error) => {
          call.settled = true;
          reject(error);
        },
      };
      signal.addEventListener('abort', () => (call.aborted = true), { once: true });
      this.calls.push(call);
    });
  }

  /** Calls still waiting for an answer (not aborted). */
  pending(): Invocation[] {
    return this.calls.filter((c) => !c.settled && !c.aborted);
  }
}

export interface MachineUnderTest {
  machine: AnyStateMachine;
  table: MachineTable;
  logic: MachineLogic<never, never>;
  /** Invoked (promise) actors' names. */
  invoked: readonly string[];
  /**
   * Spawned children's names, with how their answer becomes the event they send back (the same function
   * wraps the XState callback actor and the lean effect).
   */
  spawned?: Readonly<Record<string, (input: never, outcome: Outcome) => EventObject>>;
  /** Context fields left out of the comparison (functions). */
  ignore?: readonly string[];
}

export type Outcome = { ok: true; value: unknown } | { ok: false; error: unknown };

export interface Side {
  readonly clock: SimulatedClock;
  readonly effects: Effects;
  readonly emitted: unknown[];
  send(event: EventObject): void;
  observe(): Observation;
}

export interface Observation {
  status: string;
  value: unknown;
  context: Record<string, unknown>;
  timers: string[];
  output: unknown;
  pendingHostTimers: number;
}

function spawnedEffect(
  effects: Effects,
  src: string,
  toEvent: (input: never, outcome: Outcome) => EventObject,
) {
  return (input: never, signal: AbortSignal) =>
    effects.invoke(src, input, signal).then(
      (value) => toEvent(input, { ok: true, value }),
      (error: unknown) => toEvent(input, { ok: false, error }),
    );
}

export function xstateSide(mut: MachineUnderTest, input: unknown, startAt: number): Side {
  const clock = simulatedClock({ startAt });
  const effects = new Effects();
  const emitted: unknown[] = [];
  const actors: Record<string, unknown> = {};
  for (const src of mut.invoked)
    actors[src] = fromPromise(({ input: i, signal }: { input: unknown; signal: AbortSignal }) =>
      effects.invoke(src, i, signal),
    );
  for (const [src, toEvent] of Object.entries(mut.spawned ?? {})) {
    const run = spawnedEffect(effects, src, toEvent);
    actors[src] = fromCallback<EventObject, never>(({ input: i, sendBack }) => {
      const controller = new AbortController();
      void run(i, controller.signal).then((event) => {
        if (!controller.signal.aborted) sendBack(event);
      });
      return () => controller.abort();
    });
  }
  // Microsteps show the states an eventless transition passes through, which no snapshot shows.
  const inspect = (event: { type: string; snapshot?: { value?: unknown } }) => {
    if (event.type === '@xstate.microstep') visitedValues.add(JSON.stringify(event.snapshot?.value));
  };
  const actor = createActor(mut.machine.provide({ actors } as never), { input, clock, inspect } as never);
  actor.on('*', (event) => emitted.push(event));
  actor.subscribe({
    next: (snapshot) => visitedValues.add(JSON.stringify(snapshot.value)),
    error: () => undefined,
  });
  actor.start();
  return {
    clock,
    effects,
    emitted,
    send: (event) => {
      if (actor.getSnapshot().status === 'active') actor.send(event);
    },
    observe() {
      const snapshot = actor.getSnapshot() as {
        status: string;
        value: unknown;
        context: Record<string, unknown>;
        output: unknown;
      };
      const scheduled = (
        actor.system.getSnapshot() as { _scheduledEvents: Record<string, { event: { type: string } }> }
      )._scheduledEvents;
      return {
        status: snapshot.status,
        value: snapshot.value,
        context: snapshot.context,
        timers: Object.values(scheduled)
          .map((s) => s.event.type)
          .sort(),
        output: snapshot.output,
        pendingHostTimers: clock.pending(),
      };
    },
  };
}

/** A deliberately wrong executor, to show the comparison catches it: another table, or timers that lie. */
export interface Mutation {
  table?: MachineTable;
  timers?: (timers: Timers) => Timers;
}

/** Every state value the XState side passed through, across runs: the runs must reach every state. */
export const visitedValues = new Set<string>();

export function leanSide(
  mut: MachineUnderTest,
  input: unknown,
  startAt: number,
  mutation: Mutation = {},
): Side {
  const clock = simulatedClock({ startAt });
  const table = mutation.table ?? mut.table;
  const timers = mutation.timers ? mutation.timers(clockTimers(clock)) : clockTimers(clock);
  const effects = new Effects();
  const emitted: unknown[] = [];
  const actors: Record<string, LeanEffect> = {};
  for (const src of mut.invoked) actors[src] = (i: never, signal) => effects.invoke(src, i, signal);
  for (const [src, toEvent] of Object.entries(mut.spawned ?? {}))
    actors[src] = spawnedEffect(effects, src, toEvent);
  let status = 'active';
  const actor = new LeanActor({
    table,
    logic: mut.logic,
    input: input as never,
    timers,
    actors,
    spawned: new Set(Object.keys(mut.spawned ?? {})),
    onEmit: (event) => emitted.push(event),
    onEnd: (end) => (status = end.status),
  });
  actor.start();
  return {
    clock,
    effects,
    emitted,
    send: (event) => actor.send(event),
    observe: () => ({
      status: actor.status === 'active' ? status : actor.status,
      value: actor.value,
      context: actor.context,
      timers: actor.pendingTimers().sort(),
      output: actor.output,
      pendingHostTimers: clock.pending(),
    }),
  };
}

/** Lets promises, microtasks and 0 ms timers run on both sides. */
export async function settle(...sides: Side[]): Promise<void> {
  for (let i = 0; i < 3; i++) for (const side of sides) await side.clock.increment(0);
}

/** The two sides agree on everything observable; `where` says after which stimulus. */
export function expectSame(mut: MachineUnderTest, a: Side, b: Side, where: string): void {
  const oa = a.observe();
  const ob = b.observe();
  const strip = (context: Record<string, unknown>) => {
    const copy = { ...context };
    for (const key of mut.ignore ?? []) delete copy[key];
    return copy;
  };
  expect(ob.status, `${where}: status`).toBe(oa.status);
  expect(ob.value, `${where}: state value`).toEqual(oa.value);
  expect(strip(ob.context), `${where}: context`).toEqual(strip(oa.context));
  expect(b.emitted, `${where}: emitted events`).toEqual(a.emitted);
  expect(calls(b), `${where}: invocations`).toEqual(calls(a));
  expect(ob.timers, `${where}: timers`).toEqual(oa.timers);
  expect(ob.pendingHostTimers, `${where}: host timers`).toBe(oa.pendingHostTimers);
  expect(b.clock.nextTimerAt(), `${where}: next timer`).toBe(a.clock.nextTimerAt());
  expect(ob.output, `${where}: output`).toEqual(oa.output);
}

const calls = (side: Side) =>
  side.effects.calls.map((c) => ({ src: c.src, input: c.input, aborted: c.aborted, settled: c.settled }));
