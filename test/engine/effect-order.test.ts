// The order the lean executor runs a step's effects in, pinned on a small machine written for the test: after
// the step, not during it, in the order the step left them (XState's deferred actions), then the observer's
// `changed`. The differential suites compare emitted events and invocations with XState's on every machine;
// here the whole order is named, timers and aborts among them, and checked against the XState actor's.
import { describe, expect, it } from 'vitest';
import { createActor, fromPromise, setup } from 'xstate';

import { deriveTable } from '../../src/engine/derive-table.js';
import { LeanActor } from '../../src/engine/lean-actor.js';
import { xstateActions, type MachineLogic } from '../../src/engine/machine-logic.js';
import type { TimerTarget, Timers } from '../../src/engine/timers.js';

const say = (type: string) => ({ kind: 'emit' as const, run: () => ({ type }) });

const orderLogic = {
  context: () => ({}),
  guards: {},
  delays: { slow: () => 100 },
  actions: {
    sayExitA: say('exit a'),
    sayGo: say('go'),
    sayEnterB: say('enter b'),
    spawnWorker: {
      kind: 'step' as const,
      run: () => ({
        changes: {},
        start: [{ src: 'worker', id: 'w', input: 'w' }],
        emit: [{ type: 'spawned' }],
      }),
    },
  },
  inputs: {},
  params: {},
  outputs: {},
};

/** What each side's actors do: note that they started, and that they were aborted; never answer. */
type Started = (name: string, signal: AbortSignal) => Promise<never>;

/**
 * `a` (a timer, an invoked job, an exit action) goes on GO to `b` (an entry action, a timer, an invoked job),
 * running two actions: one emits, one spawns a worker and emits.
 */
const orderMachine = (started: Started) =>
  setup({
    delays: orderLogic.delays,
    actions: xstateActions(orderLogic.actions),
    actors: {
      job: fromPromise(({ signal }) => started('job', signal)),
      worker: fromPromise<never, string>(({ input, signal }) => started(`worker ${input}`, signal)),
    },
  }).createMachine({
    id: 'order',
    context: orderLogic.context,
    initial: 'a',
    states: {
      a: {
        exit: ['sayExitA'],
        invoke: { id: 'jobA', src: 'job' },
        after: { slow: {} },
        on: { GO: { target: 'b', actions: ['sayGo', 'spawnWorker'] } },
      },
      b: { entry: ['sayEnterB'], invoke: { id: 'jobB', src: 'job' }, after: { slow: {} } },
    },
  });

/** A run's log, and how each side notes an effect: with the state it runs in (the step is over by then). */
function recorder(value: () => unknown) {
  const log: string[] = [];
  const note = (what: string) => void log.push(`${what} (in ${String(value())})`);
  const started: Started = (name, signal) => {
    note(`start ${name}`);
    signal.addEventListener('abort', () => note(`abort ${name}`));
    return new Promise(() => {});
  };
  return { log, note, started };
}

function leanRun() {
  let actor: LeanActor<object> | undefined = undefined;
  const { log, note, started } = recorder(() => actor?.value);
  let armed = 0;
  const timers: Timers = {
    set: (_target: TimerTarget, delayMs: number) => {
      note(`arm #${++armed} for ${delayMs} ms`);
      return armed;
    },
    clear: (handle) => note(`clear #${String(handle)}`),
  };
  const logic = orderLogic as unknown as MachineLogic<object, unknown>;
  actor = new LeanActor(
    {
      table: deriveTable(orderMachine(started), orderLogic as unknown as MachineLogic<never, never>),
      logic,
      timers,
      actors: {
        job: (_input: never, signal: AbortSignal) => started('job', signal),
        worker: (input: never, signal: AbortSignal) => started(`worker ${String(input)}`, signal),
      },
    },
    undefined,
    { emitted: (event) => note(`emit ${event.type}`), changed: () => note('changed') },
  );
  return { actor, log };
}

function xstateRun() {
  let snapshotValue: () => unknown = () => undefined;
  const { log, note, started } = recorder(() => snapshotValue());
  let armed = 0;
  const clock = {
    setTimeout: (_fn: () => void, delayMs: number) => {
      note(`arm #${++armed} for ${delayMs} ms`);
      return armed;
    },
    clearTimeout: (handle: unknown) => note(`clear #${String(handle)}`),
  };
  const actor = createActor(orderMachine(started), { clock });
  snapshotValue = () => actor.getSnapshot().value;
  actor.on('*', (event) => note(`emit ${event.type}`));
  actor.subscribe(() => note('changed'));
  return { actor, log };
}

/** The effects of leaving `a` for `b`: what both runners do, in this order. */
const GO_EFFECTS = [
  // Leaving `a`: its exit action, its timer cleared, its actor aborted.
  'emit exit a (in b)',
  'clear #1 (in b)',
  'abort job (in b)',
  // The transition's actions, in their order: an emit, then a step's spawn and its emit.
  'emit go (in b)',
  'start worker w (in b)',
  'emit spawned (in b)',
  // Entering `b`: its entry action, its timer, its actor.
  'emit enter b (in b)',
  'arm #2 for 100 ms (in b)',
  'start job (in b)',
  // Then the observer hears the step is over.
  'changed (in b)',
];

describe('the effects of a step', () => {
  it('of the first: the initial state’s timer armed, then its actor started, then `changed`', () => {
    const { actor, log } = leanRun();
    actor.start();
    // XState starts the initial state's actors first, then arms its timers (its actor starts the children of
    // its first snapshot before it runs that step's deferred actions). The machine sees no difference: an
    // actor's answer, and a timer's event, reach it only after every effect of the step has run. (Only a timer
    // that an actor itself arms on the same timers, due at the very same instant, could fire in another order.)
    expect(log).toEqual(['arm #1 for 100 ms (in a)', 'start job (in a)', 'changed (in a)']);
  });

  it('run after the step, in the order it left them: exit, transition, entry; actions, timers, actors', () => {
    const { actor, log } = leanRun();
    actor.start();
    log.length = 0;
    actor.send({ type: 'GO' });
    expect(log).toEqual(GO_EFFECTS);
  });

  it('run in the order XState runs them', () => {
    const { actor, log } = xstateRun();
    actor.start();
    log.length = 0;
    actor.send({ type: 'GO' });
    expect(log).toEqual(GO_EFFECTS);
  });
});
