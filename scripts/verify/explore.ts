import { createHash } from 'node:crypto';
import { DrivenRun, type Call, type Stimulus } from './driven-run.js';
import { handledEvents } from './active-states.js';
import { instrument, markers } from './instrument.js';
import type { MachineModel, Snapshot } from './machine-model.js';
import { stateIds } from '../../src/engine/machine-table.js';
import { childMachine, runningChildMachines } from '../../src/engine/child-machine.js';

/**
 * A breadth-first search over every state a machine can reach in the lean executor from the model's inputs:
 * in each state it tries every stimulus (each event a state handles, each armed timer firing, each answer of
 * each waiting actor), and two runs are the same state when their abstractions are equal (state value, status,
 * the context the model keeps, armed timers, waiting actors, the monitor's state). A state is reached again by
 * replaying its path from its input: the executor cannot be copied, and replays are cheap and deterministic.
 */
export interface ExploreOptions {
  /** The search stops, and fails, past this many abstract states. */
  maxStates: number;
}

export interface Exploration {
  machine: string;
  inputs: number;
  states: number;
  /** Distinct (state, stimulus, next state) edges. */
  transitions: number;
  /** The goal of check (a), if the machine has one. */
  goal: string | undefined;
  /** The longest shortest path from an input to a state: the depth of the search. */
  longestPath: number;
  /** States of the table entered on some path, and those never entered (check b). */
  tableStates: { total: number; unreachable: string[] };
  /** Transitions of the table taken on some path. */
  tableTransitions: { total: number; neverTaken: string[] };
  /** The same for each machine it starts as a child (the outbox's `outboxEntry`), entered in any run. */
  children: {
    machine: string;
    tableStates: { total: number; unreachable: string[] };
    tableTransitions: { total: number; neverTaken: string[] };
  }[];
  /**
   * For each transition of the table taken, the first path found that takes it (breadth-first: a shortest
   * one), as labels: the paths the model-based scenarios tell to the real client.
   */
  witnesses: ReadonlyMap<string, readonly string[]>;
  capHit: boolean;
  /** Everything that failed a check, each with the shortest path that shows it. */
  violations: Violation[];
}

export interface Violation {
  check: 'a' | 'b' | 'c' | 'd' | 'e' | 'executor' | 'bound';
  message: string;
  path: string[];
}

interface Node {
  readonly input: number;
  readonly parent: number;
  readonly via: Stimulus | undefined;
  readonly depth: number;
  readonly monitor: unknown;
  goal: boolean;
}

export function explore<M>(model: MachineModel<M>, options: ExploreOptions): Exploration {
  const { table, logic, transitionNames } = instrument(model.run.table, model.run.logic);
  // Child machines get markers of their own: what they enter and take, whichever run of them it is.
  const children = Object.entries(model.run.machines ?? {}).map(([name, child]) => {
    const entered = new Set<number>();
    const taken = new Set<number>();
    const instrumented = instrument(child.table, child.logic, {
      onEnter: (i) => void entered.add(i),
      onTake: (i) => void taken.add(i),
    });
    return { name, child, entered, taken, instrumented };
  });
  const spec = {
    ...model.run,
    table,
    logic,
    machines: Object.fromEntries(
      children.map((c) => [c.name, childMachine(c.instrumented.table, c.instrumented.logic)]),
    ),
  };
  const entered = new Set<number>();
  const taken = new Set<number>();
  const witnesses = new Map<string, readonly string[]>();
  // The path of the step being made; replays re-take only transitions their path took when first made.
  let stepPath: () => string[] = () => [];
  markers.onEnter = (i) => void entered.add(i);
  markers.onTake = (i) => {
    if (taken.has(i)) return;
    taken.add(i);
    witnesses.set(transitionNames[i]!, stepPath());
  };

  const nodes: Node[] = [];
  const index = new Map<string, number>();
  let transitions = 0;
  const successors: number[][] = [];
  const violations: Violation[] = [];
  let capHit = false;

  const pathOf = (n: number): Stimulus[] => {
    const path: Stimulus[] = [];
    for (let i = n; nodes[i]!.via !== undefined; i = nodes[i]!.parent) path.push(nodes[i]!.via!);
    return path.reverse();
  };
  const labelsOf = (n: number, last?: Stimulus) => [
    model.inputs[nodes[n]!.input]!.label,
    ...[...pathOf(n), ...(last ? [last] : [])].map(labelOf),
  ];
  const replay = (n: number): DrivenRun => {
    const run = new DrivenRun(spec, model.inputs[nodes[n]!.input]!.input());
    for (const stimulus of pathOf(n)) run.apply(stimulus);
    return run;
  };
  // Hashed: a million keys of a few hundred characters each would take gigabytes.
  const keyOf = (run: DrivenRun, input: number, monitor: unknown) =>
    hashOf([
      input,
      run.actor.status,
      run.actor.value,
      model.abstractContext(run.actor.context),
      run.timers().sort(),
      runningChildMachines(run.actor as never).map(({ id, actor }) => [
        id,
        actor.value,
        model.abstractChild
          ? model.abstractChild(actor.context as Record<string, unknown>, run.actor.context)
          : actor.context,
      ]),
      run.pending().map(([, c]) => [c.src, model.abstractCall ? model.abstractCall(c) : c.input]),
      monitor,
      model.pathKey?.(run),
    ]);
  /** The node for this run, made if new; undefined past the cap. */
  const nodeFor = (run: DrivenRun, node: Omit<Node, 'goal'>): number | undefined => {
    const key = keyOf(run, node.input, node.monitor);
    const known = index.get(key);
    if (known !== undefined) return known;
    if (nodes.length >= options.maxStates) {
      capHit = true;
      return undefined;
    }
    nodes.push({ ...node, goal: model.goal?.holds(run) ?? false });
    successors.push([]);
    index.set(key, nodes.length - 1);
    return nodes.length - 1;
  };

  model.inputs.forEach((entry, i) => {
    stepPath = () => [entry.label];
    const run = new DrivenRun(spec, entry.input());
    nodeFor(run, {
      input: i,
      parent: -1,
      via: undefined,
      depth: 0,
      monitor: model.monitor?.initial(entry.input()),
    });
  });

  for (let n = 0; n < nodes.length && !capHit; n++) {
    const node = nodes[n]!;
    const first = replay(n);
    if (first.actor.status !== 'active') continue;
    const stimuli = stimuliOf(model, first);
    const edges = new Set<string>();
    stimuli.forEach((stimulus, k) => {
      const run = k === 0 ? first : replay(n);
      const before = snapshotOf(run);
      const waiting = run.pending().map(([, c]) => c);
      const callsBefore = run.calls.length;
      stepPath = () => labelsOf(n, stimulus);
      try {
        run.apply(stimulus);
      } catch (error) {
        violations.push({
          check: 'executor',
          message: `the executor threw: ${String(error)}`,
          path: labelsOf(n, stimulus),
        });
        return;
      }
      if (run.actor.status === 'error')
        violations.push({
          check: 'executor',
          message: 'the machine failed (an actor error nothing handles)',
          path: labelsOf(n, stimulus),
        });
      let monitor = node.monitor;
      if (model.monitor) {
        const step = model.monitor.step(node.monitor as M, {
          stimulus,
          before,
          after: snapshotOf(run),
          input: model.inputs[node.input]!.input(),
          started: run.calls.slice(callsBefore),
          ended: waiting.filter((c: Call) => c.aborted || c.answered),
        });
        monitor = step.next;
        if (step.violation !== undefined)
          violations.push({
            check: model.monitor.check,
            message: step.violation,
            path: labelsOf(n, stimulus),
          });
      }
      const next = nodeFor(run, {
        input: node.input,
        parent: n,
        via: stimulus,
        depth: node.depth + 1,
        monitor,
      });
      if (next === undefined) return;
      const edge = `${next}:${labelOf(stimulus)}`;
      if (!edges.has(edge)) {
        edges.add(edge);
        transitions += 1;
        if (model.goal?.via?.(stimulus) ?? true) successors[n]!.push(next);
      }
    });
  }

  if (capHit)
    violations.push({
      check: 'bound',
      message: `the search passed ${options.maxStates} states and stopped: raise the cap or lower the bounds`,
      path: [],
    });
  else if (model.goal) violations.push(...cannotReachGoal(model.goal.name, nodes, successors, labelsOf));

  const ids = stateIds(model.run.table);
  const unreachable = ids.filter((_, i) => !entered.has(i));
  const childRows = children.map((c) => {
    const childIds = stateIds(c.child.table);
    return {
      machine: c.child.table.id,
      tableStates: { total: childIds.length, unreachable: childIds.filter((_, i) => !c.entered.has(i)) },
      tableTransitions: {
        total: c.instrumented.transitionNames.length,
        neverTaken: c.instrumented.transitionNames.filter((_, i) => !c.taken.has(i)),
      },
    };
  });
  if (!capHit && model.enterEveryState !== false)
    for (const id of [...unreachable, ...childRows.flatMap((c) => c.tableStates.unreachable)])
      violations.push({ check: 'b', message: `state ${id} is never entered`, path: [] });

  return {
    machine: model.name,
    inputs: model.inputs.length,
    goal: model.goal?.name,
    states: nodes.length,
    transitions,
    longestPath: nodes.reduce((max, node) => Math.max(max, node.depth), 0),
    tableStates: { total: ids.length, unreachable },
    tableTransitions: {
      total: transitionNames.length,
      neverTaken: transitionNames.filter((_, i) => !taken.has(i)),
    },
    children: childRows,
    witnesses,
    capHit,
    violations,
  };
}

/** Check (a): the states from which no path leads to a goal state, shown by the shortest path to the first. */
function cannotReachGoal(
  goal: string,
  nodes: readonly Node[],
  successors: readonly number[][],
  labelsOf: (n: number) => string[],
): Violation[] {
  const predecessors: number[][] = nodes.map(() => []);
  successors.forEach((list, from) => list.forEach((to) => predecessors[to]!.push(from)));
  const reaches = nodes.map((node) => node.goal);
  const queue = nodes.flatMap((node, i) => (node.goal ? [i] : []));
  for (let q = 0; q < queue.length; q++)
    for (const p of predecessors[queue[q]!]!)
      if (!reaches[p]) {
        reaches[p] = true;
        queue.push(p);
      }
  const stuck = reaches.flatMap((ok, i) => (ok ? [] : [i]));
  if (stuck.length === 0) return [];
  return [
    {
      check: 'a',
      message: `${stuck.length} state(s) cannot reach ${goal}; the first is reached by`,
      path: labelsOf(stuck[0]!),
    },
  ];
}

function stimuliOf<M>(model: MachineModel<M>, run: DrivenRun): Stimulus[] {
  const stimuli: Stimulus[] = [];
  for (const type of handledEvents(model.run.table, run.actor.value))
    for (const event of model.events(type, run)) stimuli.push({ kind: 'event', event });
  for (const event of new Set(run.timers())) stimuli.push({ kind: 'timer', event });
  for (const [call, c] of run.pending())
    for (const answer of model.answers(c, run)) stimuli.push({ kind: 'answer', call, ...answer });
  return stimuli;
}

function snapshotOf(run: DrivenRun): Snapshot {
  return { value: run.actor.value, context: { ...run.actor.context } };
}

/** A stimulus as a path shows it. */
export function labelOf(stimulus: Stimulus): string {
  if (stimulus.kind === 'event') {
    const { type, at: _at, ...payload } = stimulus.event;
    // An entry record shows as its id.
    const shown = (v: unknown) =>
      typeof v === 'object' && v !== null && 'id' in v ? String(v.id) : String(v);
    return [type, ...Object.values(payload).map(shown)].join(' ');
  }
  if (stimulus.kind === 'timer') return `timer ${stimulus.event.split('.')[2]}`;
  return stimulus.label;
}

const hashOf = (parts: unknown[]): string =>
  createHash('sha1').update(JSON.stringify(parts)).digest('base64');
