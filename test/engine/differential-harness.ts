// The engine's conformance suite: the differential property tests (test/engine/*.differential.property.test.ts)
// run each machine, and a feature machine made for the purpose, in the lean executor (src/engine/algorithm.ts and
// src/engine/lean-actor.ts) and as a real XState actor side by side, and fail on the first difference. What
// XState does is the specification; a change to the engine keeps these passing, and each suite's mutants (wrong
// executors) show the comparison would notice. This file is their shared harness.
import { isDeepStrictEqual } from 'node:util';
import { fc, test } from '@fast-check/vitest';
import { createActor, fromCallback, fromPromise, type AnyStateMachine, type EventObject } from 'xstate';
import { beforeAll, describe, expect, it } from 'vitest';
import type { MachineLogic } from '../../src/engine/machine-logic.js';
import {
  stateIds,
  type GuardRow,
  type MachineTable,
  type TransitionRow,
} from '../../src/engine/machine-table.js';
import { simulatedClock, type SimulatedClock } from '../../src/clock/simulated-clock.js';
import { LeanActor, type LeanEffect } from '../../src/engine/lean-actor.js';
import { childMachine, runningChildMachines } from '../../src/engine/child-machine.js';
import { clockTimers, type Timers } from '../../src/engine/timers.js';
import { checkedLogic } from './checked-logic.js';

/**
 * Runs one machine twice, side by side: as a real XState actor and in the lean executor, each on its own
 * simulated clock, with effects the test answers by hand. After every stimulus both are compared: status,
 * state value, context, emitted events, invocations (and aborts), armed timers and output; and the lean
 * side's logic must have kept the rules for logic authors on every call (checked-logic.ts).
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
   * wraps the XState callback actor and the lean effect). `now` is the side's clock when the answer is turned
   * into the event, for replies that carry a time (as the runtime stamps the outbox's children's replies).
   */
  spawned?: Readonly<Record<string, SpawnedReply>>;
  /** Context fields left out of the comparison (functions). */
  ignore?: readonly string[];
  /**
   * Machines the machine starts as children, by the name its steps use (the outbox's `outboxEntry`): the lean
   * side runs them from these tables, and both sides' child machines are compared (state value, context).
   */
  machines?: Readonly<Record<string, { table: MachineTable; logic: MachineLogic<never, never> }>>;
}

export type Outcome = { ok: true; value: unknown } | { ok: false; error: unknown };

export type SpawnedReply = (input: never, outcome: Outcome, now: number) => EventObject;

export interface Side {
  readonly clock: SimulatedClock;
  readonly effects: Effects;
  readonly emitted: unknown[];
  /** The rules for logic authors its logic broke (checked-logic.ts): the lean side checks them, XState's not. */
  readonly brokenRules: ReadonlySet<string>;
  send(event: EventObject): void;
  observe(): Observation;
}

export interface Observation {
  status: string;
  value: unknown;
  context: Record<string, unknown>;
  /** Running child machines by id: their state value and context. */
  children: Record<string, { value: unknown; context: unknown }>;
  timers: string[];
  output: unknown;
  pendingHostTimers: number;
}

function spawnedEffect(effects: Effects, src: string, toEvent: SpawnedReply, clock: SimulatedClock) {
  return (input: never, signal: AbortSignal) =>
    effects.invoke(src, input, signal).then(
      (value) => toEvent(input, { ok: true, value }, clock.now()),
      (error: unknown) => toEvent(input, { ok: false, error }, clock.now()),
    );
}

/** Each run's effects and clock, by the actor system of its XState actor (the actors are provided once). */
const runsBySystem = new WeakMap<object, { effects: Effects; clock: SimulatedClock }>();
const providedMachines = new WeakMap<MachineUnderTest, AnyStateMachine>();

/** The machine with the harness's actors, made once per machine under test: `provide` costs a new machine. */
function providedMachine(mut: MachineUnderTest): AnyStateMachine {
  let machine = providedMachines.get(mut);
  if (machine) return machine;
  const runOf = (system: object) => runsBySystem.get(system)!;
  const actors: Record<string, unknown> = {};
  for (const src of mut.invoked)
    actors[src] = fromPromise(
      ({ input: i, signal, system }: { input: unknown; signal: AbortSignal; system: object }) =>
        runOf(system).effects.invoke(src, i, signal),
    );
  for (const [src, toEvent] of Object.entries(mut.spawned ?? {})) {
    // As replyingActor (src/engine/machine-logic.ts), which cannot serve here: each run reads its effects from the
    // actor's system. One event, and no abort once sent.
    actors[src] = fromCallback<EventObject, never>(({ input: i, sendBack, system }) => {
      const { effects, clock } = runOf(system);
      const run = spawnedEffect(effects, src, toEvent, clock);
      const controller = new AbortController();
      let open = true;
      void run(i, controller.signal).then((event) => {
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
  machine = mut.machine.provide({ actors } as never);
  providedMachines.set(mut, machine);
  return machine;
}

export function xstateSide(mut: MachineUnderTest, input: unknown, startAt: number): Side {
  const clock = simulatedClock({ startAt });
  const effects = new Effects();
  const emitted: unknown[] = [];
  const visited = visitedStates(mut.machine.id);
  const see = (value: unknown) => {
    visited.add(JSON.stringify(value));
  };
  // Microsteps show the states an eventless transition passes through, which no snapshot shows, in the machine
  // and in its child machines; a transition's source shows a state left at once (a child's initial state).
  const inspect = (event: {
    type: string;
    snapshot?: { value?: unknown };
    actorRef?: { logic?: { id?: unknown } };
    _transitions?: readonly { source?: { id?: string } }[];
  }) => {
    if (event.type !== '@xstate.microstep') return;
    const id = event.actorRef?.logic?.id;
    const machineId = typeof id === 'string' ? id : mut.machine.id;
    visitedStates(machineId).add(JSON.stringify(event.snapshot?.value));
    for (const t of event._transitions ?? [])
      if (t.source?.id !== undefined) visitedStates(machineId).add(`#${t.source.id}`);
  };
  const actor = createActor(providedMachine(mut), { input, clock, inspect } as never);
  runsBySystem.set(actor.system, { effects, clock });
  actor.on('*', (event) => emitted.push(event));
  actor.subscribe({
    next: (snapshot) => see(snapshot.value),
    error: () => undefined,
  });
  actor.start();
  return {
    clock,
    effects,
    emitted,
    brokenRules: new Set(),
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
      const children: Observation['children'] = {};
      for (const [id, child] of Object.entries(
        (snapshot as unknown as { children: Record<string, { getSnapshot(): unknown }> }).children,
      )) {
        const s = child.getSnapshot() as {
          machine?: unknown;
          status: string;
          value: unknown;
          context: unknown;
        };
        // A done machine's snapshot still lists the children it stopped.
        if (s.machine !== undefined && s.status === 'active')
          children[id] = { value: s.value, context: s.context };
      }
      return {
        status: snapshot.status,
        value: snapshot.value,
        context: snapshot.context,
        children,
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
  /** Child machines' tables, by name, in place of `MachineUnderTest.machines`'. */
  machines?: Readonly<Record<string, MachineTable>>;
  timers?: (timers: Timers) => Timers;
}

const visitedByMachine = new Map<string, Set<string>>();

/** The state values (as JSON) the XState side of this machine (by its id) passed through, across runs. */
export function visitedStates(machineId: string): Set<string> {
  let visited = visitedByMachine.get(machineId);
  if (visited === undefined) visitedByMachine.set(machineId, (visited = new Set()));
  return visited;
}

/** The ids of the table's leaf states (atomic and final) that no visited value (JSON, as above) was in. */
export function unvisitedStates(table: MachineTable, visited: ReadonlySet<string>): string[] {
  const seen = new Set<string>();
  const walk = (value: unknown, path: string) => {
    if (typeof value === 'string') seen.add(`${path}.${value}`);
    else if (typeof value === 'object' && value !== null)
      for (const [key, sub] of Object.entries(value)) walk(sub, `${path}.${key}`);
  };
  for (const json of visited) {
    // A transition's source, by its id (see xstateSide).
    if (json.startsWith('#')) seen.add(json.slice(1));
    else walk(JSON.parse(json), table.id);
  }
  // A row without a type is an atomic state.
  const ids = stateIds(table);
  return table.states
    .flatMap((s, i) => (s.type === undefined || s.type === 'final' ? [ids[i]!] : []))
    .filter((id) => !seen.has(id));
}

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
    actors[src] = spawnedEffect(effects, src, toEvent, clock);
  let status = 'active';
  // Every logic function checked on every call: the runs hold the rules for logic authors too.
  const brokenRules = new Set<string>();
  const actor = new LeanActor(
    {
      table,
      logic: checkedLogic(table.id, mut.logic, brokenRules),
      timers,
      actors,
      machines: Object.fromEntries(
        Object.entries(mut.machines ?? {}).map(([name, m]) => {
          const childTable = mutation.machines?.[name] ?? m.table;
          return [name, childMachine(childTable, checkedLogic(childTable.id, m.logic, brokenRules))];
        }),
      ),
    },
    input as never,
    {
      emitted: (event) => void emitted.push(event),
      ended: (end) => void (status = end.status),
    },
  );
  actor.start();
  return {
    clock,
    effects,
    emitted,
    brokenRules,
    send: (event) => actor.send(event),
    observe: () => ({
      status: actor.status === 'active' ? status : actor.status,
      value: actor.value,
      context: actor.context,
      children: Object.fromEntries(
        runningChildMachines(actor as never).map(({ id, actor: child }) => [
          id,
          { value: child.value, context: child.context },
        ]),
      ),
      timers: actor.pendingTimers().sort(),
      output: actor.output,
      pendingHostTimers: clock.pending(),
    }),
  };
}

/** Lets promises, microtasks and 0 ms timers run on both sides. */
export async function settle(...sides: Side[]): Promise<void> {
  await settleIn(3, ...sides);
}

/**
 * As `settle`, in `rounds` rounds (each side's promises, then its timers due now). One is enough for a machine
 * whose waits are never 0 ms: each round lets every pending promise reaction run, on both sides.
 */
export async function settleIn(rounds: number, ...sides: Side[]): Promise<void> {
  for (let i = 0; i < rounds; i++) for (const side of sides) await side.clock.increment(0);
}

/** The two sides agree on everything observable; `where` says after which stimulus. */
export function expectSame(mut: MachineUnderTest, a: Side, b: Side, where: string): void {
  if (a.brokenRules.size + b.brokenRules.size > 0)
    expect(
      [...a.brokenRules, ...b.brokenRules],
      `${where}: rules for logic (machine-logic.ts, LogicArgs)`,
    ).toEqual([]);
  const oa = a.observe();
  const ob = b.observe();
  const strip = (context: Record<string, unknown>) => {
    const copy = { ...context };
    for (const key of mut.ignore ?? []) delete copy[key];
    return copy;
  };
  // Strict equality first (cheap): it implies every expectation below, which then names what differs.
  const all = (side: Side, o: Observation) => [
    o.status,
    o.value,
    strip(o.context),
    o.children,
    side.emitted,
    calls(side),
    o.timers,
    o.pendingHostTimers,
    side.clock.nextTimerAt(),
    o.output,
  ];
  if (isDeepStrictEqual(all(a, oa), all(b, ob))) return;
  expect(ob.status, `${where}: status`).toBe(oa.status);
  expect(ob.value, `${where}: state value`).toEqual(oa.value);
  expect(strip(ob.context), `${where}: context`).toEqual(strip(oa.context));
  expect(ob.children, `${where}: child machines`).toEqual(oa.children);
  expect(b.emitted, `${where}: emitted events`).toEqual(a.emitted);
  expect(calls(b), `${where}: invocations`).toEqual(calls(a));
  expect(ob.timers, `${where}: timers`).toEqual(oa.timers);
  expect(ob.pendingHostTimers, `${where}: host timers`).toBe(oa.pendingHostTimers);
  expect(b.clock.nextTimerAt(), `${where}: next timer`).toBe(a.clock.nextTimerAt());
  expect(ob.output, `${where}: output`).toEqual(oa.output);
}

const calls = (side: Side) =>
  side.effects.calls.map((c) => ({ src: c.src, input: c.input, aborted: c.aborted, settled: c.settled }));

/** The table with every use of the named guard replaced by its negation (a deliberately wrong executor). */
export function invertGuard(table: MachineTable, name: string): MachineTable {
  const flip = (guard: GuardRow): GuardRow => {
    if (guard === name) return { not: name };
    if (typeof guard === 'string') return guard;
    if ('and' in guard) return { and: guard.and.map(flip) };
    return { not: flip(guard.not) };
  };
  return mapTransitions(table, (row) => (row.guard === undefined ? row : { ...row, guard: flip(row.guard) }));
}

/** The table with every transition (eventless ones included) passed through `change`. */
export function mapTransitions(
  table: MachineTable,
  change: (row: TransitionRow) => TransitionRow,
): MachineTable {
  const rows = (list: readonly TransitionRow[] = []) => list.map(change);
  return {
    ...table,
    states: table.states.map((state) => ({
      ...state,
      always: rows(state.always),
      on: Object.fromEntries(Object.entries(state.on ?? {}).map(([type, list]) => [type, rows(list)])),
    })),
  };
}

/**
 * Answers the `pick`-th pending call (mod their number) on both sides with the same outcome, built once from
 * the first side's call and clock. False when either side has nothing pending.
 */
export function answerBoth(
  a: Side,
  b: Side,
  pick: number,
  outcomeFor: (call: Invocation, now: number) => Outcome,
): boolean {
  const pendingA = a.effects.pending();
  const pendingB = b.effects.pending();
  if (pendingA.length === 0 || pendingB.length === 0) return false;
  const callA = pendingA[pick % pendingA.length]!;
  const callB = pendingB[pick % pendingB.length]!;
  const outcome = outcomeFor(callA, a.clock.now());
  for (const call of [callA, callB]) {
    if (outcome.ok) call.resolve(outcome.value);
    else call.reject(outcome.error as Error);
  }
  return true;
}

/** Sends each side the event built from its own clock's time. */
export function sendBoth(a: Side, b: Side, event: (now: number) => EventObject): void {
  a.send(event(a.clock.now()));
  b.send(event(b.clock.now()));
}

/** Moves both clocks on by `ms`, one after the other. */
export async function advanceBoth(a: Side, b: Side, ms: number): Promise<void> {
  await a.clock.increment(ms);
  await b.clock.increment(ms);
}

/**
 * Moves both clocks to `short` ms before the first side's next timer is due: a timer fires exactly on time,
 * or is just not due yet. False (and no move) when no timer is armed.
 */
export async function toNextTimer(a: Side, b: Side, short = 0): Promise<boolean> {
  const due = a.clock.nextTimerAt();
  if (due === undefined) return false;
  await advanceBoth(a, b, Math.max(0, due - a.clock.now() - short));
  return true;
}

/**
 * A deliberately wrong executor must be caught: the property fails within `numRuns` runs (seeded, not shrunk),
 * and by a comparison of the two sides, not by anything else going wrong.
 */
export async function expectCaught<Ts extends [unknown, ...unknown[]]>(
  property: fc.IAsyncProperty<Ts>,
  numRuns = 500,
): Promise<void> {
  const result = await fc.check(property, { numRuns, seed: 42, endOnFailure: true });
  expect(result.failed, 'the wrong executor went unnoticed').toBe(true);
  expect((result.errorInstance as Error).name, String(result.errorInstance)).toBe('AssertionError');
}

/** How many runs each differential property makes (DIFF_RUNS=20000 to hunt for rare disagreements). */
export const DIFF_RUNS = Number(process.env.DIFF_RUNS ?? 2_000);

/** The shared means another suite of a machine uses the differential harness. */
export interface DifferentialSpec<TInput, TStimulus> {
  /** What the property checks, in its test name. */
  checks: string;
  machine: AnyStateMachine;
  table: MachineTable;
  input: fc.Arbitrary<TInput>;
  stimuli: fc.Arbitrary<TStimulus[]>;
  run(input: TInput, stimuli: TStimulus[], mutation?: Mutation): Promise<void>;
  /** Deliberately wrong executors, each of which the comparison must catch. */
  mutants: readonly [string, Mutation][];
  /** The tables of the machines it starts as children: the runs must reach every state of each too. */
  children?: readonly MachineTable[];
}

/**
 * One machine's differential suite: the property (DIFF_RUNS runs), the check that the runs reached every leaf
 * state, and one test per mutant showing that a wrong executor fails the comparison itself.
 */
export function describeDifferential<TInput, TStimulus>(spec: DifferentialSpec<TInput, TStimulus>): void {
  describe(`lean executor vs XState: ${spec.machine.id} machine`, () => {
    const visited = visitedStates(spec.machine.id);
    beforeAll(() => {
      visited.clear();
      for (const child of spec.children ?? []) visitedStates(child.id).clear();
    });

    test.prop({ input: spec.input, stimuli: spec.stimuli }, { numRuns: DIFF_RUNS })(
      spec.checks,
      async ({ input, stimuli }) => {
        await spec.run(input, stimuli);
      },
      // Time enough for many runs on a busy machine.
      60_000 + DIFF_RUNS * 40,
    );

    it('reached every state of the machine', () => {
      expect(unvisitedStates(spec.table, visited)).toEqual([]);
    });

    for (const child of spec.children ?? [])
      it(`reached every state of its child machine ${child.id}`, () => {
        expect(unvisitedStates(child, visitedStates(child.id))).toEqual([]);
      });

    for (const [name, mutation] of spec.mutants) {
      it(`fails for a wrong executor: ${name}`, async () => {
        await expectCaught(
          fc.asyncProperty(spec.input, spec.stimuli, (input, stimuli) => spec.run(input, stimuli, mutation)),
        );
      });
    }
  });
}

/** The mutants every machine's suite has: each delay shortened to `ms`, and a timer that is never armed. */
export const timerMutants = (ms: number): [string, Mutation][] => [
  [
    ms === 0
      ? 'a delay ignored (every timer fires at once)'
      : `a delay ignored (every timer fires after ${ms} ms)`,
    { timers: (timers) => ({ ...timers, set: (fn) => timers.set(fn, ms) }) },
  ],
  ['a timer never armed', { timers: () => ({ set: () => Symbol('never'), clear: () => undefined }) }],
];
