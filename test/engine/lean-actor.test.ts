// What the lean executor refuses, on small tables written for the test (the differential suites check how it
// runs what it accepts): each way to fail ends the run with a `MachineError` that names what went wrong.
import { describe, expect, it } from 'vitest';

import type { MachineLogic } from '../../src/engine/machine-logic.js';
import type { MachineTable, StateRow } from '../../src/engine/machine-table.js';
import { simulatedClock } from '../../src/clock/simulated-clock.js';
import { LeanActor, type LeanEnd, type LeanMachine } from '../../src/engine/lean-actor.js';
import { childMachine, runningChildMachines } from '../../src/engine/child-machine.js';
import { clockTimers } from '../../src/engine/timers.js';
import { MachineError } from '../../src/errors/machine-error.js';

interface Ctx {
  entries: number;
}

const logic = {
  context: () => ({ entries: 0 }),
  guards: {},
  delays: {},
  actions: {
    countEntry: {
      kind: 'assign',
      run: ({ context }: { context: Ctx }) => ({ entries: context.entries + 1 }),
    },
    startWorker: {
      kind: 'step',
      run: () => ({ changes: {}, start: [{ src: 'worker', id: 'w', input: undefined }] }),
    },
    sendToWorker: {
      kind: 'step',
      run: () => ({ changes: {}, send: [{ to: 'w', event: { type: 'PING' } }] }),
    },
    sendToNobody: {
      kind: 'step',
      run: () => ({ changes: {}, send: [{ to: 'nobody', event: { type: 'PING' } }] }),
    },
  },
  inputs: {},
  params: {},
  outputs: {},
} as unknown as MachineLogic<Ctx, unknown>;

/** A root with one atomic state `a`, whose entry counts, and transitions on `a` as given. */
const table = (on: StateRow['on'] = {}): MachineTable => ({
  id: 'probe',
  states: [
    { key: 'probe', type: 'compound', parent: -1, initial: 1 },
    { key: 'a', parent: 0, entry: ['countEntry'], on },
  ],
});

function run(machineTable: MachineTable, machines: LeanMachine<Ctx, unknown>['machines'] = undefined) {
  const ends: LeanEnd[] = [];
  const machine: LeanMachine<Ctx, unknown> = {
    table: machineTable,
    logic,
    timers: clockTimers(simulatedClock()),
    // A worker that never answers: the tests only send it events.
    actors: { worker: () => new Promise(() => {}) },
    machines,
  };
  const actor = new LeanActor(machine, undefined, { ended: (end) => void ends.push(end) }).start();
  return { actor, ends };
}

/** The run failed with a `MachineError` that says `message`. */
function expectFailedWith(ends: readonly LeanEnd[], message: string): void {
  expect(ends).toHaveLength(1);
  const end = ends[0] as { status: 'error'; error: unknown };
  expect(end.status).toBe('error');
  expect(end.error).toBeInstanceOf(MachineError);
  expect((end.error as Error).message).toBe(message);
}

describe('the lean executor refuses', () => {
  it('an event that is not an event (undefined): the run fails, it does not start again', () => {
    const { actor, ends } = run(table());
    expect(actor.context.entries).toBe(1);
    actor.send(undefined as never);
    expect(actor.status).toBe('error');
    expect(ends).toHaveLength(1);
    expect(ends[0]?.status).toBe('error');
    // Entered once: the initial step did not run again.
    expect(actor.context.entries).toBe(1);
  });

  it('an undefined sent while a step runs (from a listener): the run fails there, as when sent alone', () => {
    const ends: LeanEnd[] = [];
    let armed = false;
    const machine: LeanMachine<Ctx, unknown> = {
      table: table({ GO: [{ actions: ['countEntry'] }] }),
      logic,
      timers: clockTimers(simulatedClock()),
      actors: {},
    };
    const actor: LeanActor<Ctx> = new LeanActor(machine, undefined, {
      // After the step that GO takes: an undefined, then another GO, both while the step's listeners run.
      changed: () => {
        if (!armed) return;
        armed = false;
        actor.send(undefined as never);
        actor.send({ type: 'GO' });
      },
      ended: (end) => void ends.push(end),
    }).start();
    armed = true;
    actor.send({ type: 'GO' });
    expect(actor.status).toBe('error');
    expect(ends.map((end) => end.status)).toEqual(['error']);
    // The first GO counted; the one after the undefined was not taken.
    expect(actor.context.entries).toBe(2);
  });

  it('sendTo a child that is not running, naming it', () => {
    const { actor, ends } = run(table({ GO: [{ actions: ['sendToNobody'] }] }));
    actor.send({ type: 'GO' });
    expect(actor.status).toBe('error');
    expectFailedWith(ends, 'probe: sendTo `nobody`, which is not running');
  });

  it('sendTo a child that is not a machine, naming it', () => {
    const { actor, ends } = run(
      table({ GO: [{ actions: ['startWorker'] }], POKE: [{ actions: ['sendToWorker'] }] }),
    );
    actor.send({ type: 'GO' });
    expect(actor.status).toBe('active');
    actor.send({ type: 'POKE' });
    expect(actor.status).toBe('error');
    expectFailedWith(ends, 'probe: sendTo `w`, which is not a machine');
  });

  it('sends to a running child machine (the case the two refusals leave)', () => {
    // `worker` is now a machine: one state that counts the events it gets.
    const childTable: MachineTable = {
      id: 'child',
      states: [
        { key: 'child', type: 'compound', parent: -1, initial: 1 },
        { key: 'waiting', parent: 0, on: { PING: [{ actions: ['countEntry'] }] } },
      ],
    };
    const { actor } = run(
      table({ GO: [{ actions: ['startWorker'] }], POKE: [{ actions: ['sendToWorker'] }] }),
      {
        worker: childMachine(childTable, logic as MachineLogic<unknown, unknown>),
      },
    );
    actor.send({ type: 'GO' });
    actor.send({ type: 'POKE' });
    actor.send({ type: 'POKE' });
    expect(actor.status).toBe('active');
    const [child] = runningChildMachines(actor as never);
    expect(child?.id).toBe('w');
    expect(child?.actor.context).toEqual({ entries: 2 });
  });

  it('a table of more than 31 states, which one 32-bit configuration cannot hold', () => {
    const states: StateRow[] = [{ key: 'big', type: 'compound', parent: -1, initial: 1 }];
    for (let i = 1; i < 32; i++) states.push({ key: `s${i}`, parent: 0 });
    expect(() => run({ id: 'big', states })).toThrow(
      new MachineError('big: 32 states, more than the 31 the executor can run'),
    );
    // 31 states run.
    expect(run({ id: 'big', states: states.slice(0, 31) }).actor.status).toBe('active');
  });
});
