import { readFileSync } from 'node:fs';
import { and, assign, createMachine, fromPromise, not, or, setup, type AnyStateMachine } from 'xstate';
import { describe, expect, it } from 'vitest';
import { deriveTable, TableDerivationError } from '../../src/engine/derive-table.js';
import type { MachineLogic } from '../../src/engine/machine-logic.js';
import { stateIds } from '../../src/engine/machine-table.js';
import { machineTables, renderTable } from '../../scripts/machine-tables.js';

describe('derived machine tables', () => {
  for (const entry of machineTables) {
    it(`${entry.file} is what \`npm run tables\` derives from ${entry.source}`, async () => {
      expect(readFileSync(new URL(`../../${entry.file}`, import.meta.url), 'utf8')).toBe(
        await renderTable(entry),
      );
    });
  }
});

describe('the derivation refuses what the lean executor does not run', () => {
  const context = ({ input }: { input: { n: number } }) => ({ n: input.n });
  const guards = { isBig: () => true, isSmall: () => false };
  const delays = { wait: () => 10 };
  const logic = {
    context,
    guards,
    delays,
    actions: { bump: { kind: 'assign', run: () => ({}) } },
    inputs: {},
    params: {},
    outputs: {},
  } as unknown as MachineLogic<never, never>;
  const base = setup({
    types: { context: {} as { n: number }, input: {} as { n: number } },
    guards,
    delays,
    actions: { bump: assign({}) },
    actors: { job: fromPromise(() => Promise.resolve(1)) },
  });
  const refuses = (config: object, why: RegExp) =>
    expect(() =>
      deriveTable(
        base.createMachine({ id: 'm', context, ...config } as never) as unknown as AnyStateMachine,
        logic,
      ),
    ).toThrow(
      expect.objectContaining({ name: TableDerivationError.name, message: expect.stringMatching(why) }),
    );

  it('accepts a machine made of the supported parts', () => {
    const machine = base.createMachine({
      id: 'm',
      context,
      initial: 'a',
      states: {
        a: {
          entry: 'bump',
          after: { wait: 'b' },
          always: { guard: and(['isBig', 'isSmall']), target: 'b' },
          on: { GO: { target: 'b', actions: { type: 'bump', params: { by: 1 } } } },
        },
        b: { type: 'final' },
      },
    });
    const table = deriveTable(machine, logic);
    expect(stateIds(table)).toEqual(['m', 'm.a', 'm.b']);
    expect(table.states.map((s) => s.type)).toEqual(['compound', undefined, 'final']);
    expect(table.states[1]!.after).toEqual(['wait']);
    expect(table.states[1]!.entry).toEqual(['bump']);
    expect(table.states[1]!.on?.['xstate.after.wait.m.a']).toEqual([{ targets: [2] }]);
    expect(table.states[1]!.always?.[0]?.guard).toEqual({ and: ['isBig', 'isSmall'] });
  });
  it('an inline guard', () =>
    refuses(
      { initial: 'a', states: { a: { on: { GO: { guard: () => true, target: 'b' } } }, b: {} } },
      /inline guards/,
    ));
  it('an `or` guard', () =>
    refuses(
      { initial: 'a', states: { a: { on: { GO: { guard: or(['isBig']), target: 'b' } } }, b: {} } },
      /guard/,
    ));
  it('an inline action', () =>
    refuses({ initial: 'a', states: { a: { entry: () => undefined } } }, /action must be named/));
  it('a built-in action in the config', () =>
    refuses({ initial: 'a', states: { a: { entry: assign({ n: 1 }) } } }, /action must be named/));
  it('a literal delay', () =>
    refuses({ initial: 'a', states: { a: { after: { 100: 'b' } }, b: {} } }, /delay `100`/));
  it('an invocation without an id', () =>
    refuses({ initial: 'a', states: { a: { invoke: { src: 'job' } } } }, /explicit `id`/));
  it('an inline actor', () =>
    refuses(
      { initial: 'a', states: { a: { invoke: { id: 'j', src: fromPromise(() => Promise.resolve(1)) } } } },
      /actor’s name/,
    ));
  it('an inline invocation input', () =>
    refuses(
      { initial: 'a', states: { a: { invoke: { id: 'j', src: 'job', input: () => 1 } } } },
      /named inputs/,
    ));
  it('a history state', () =>
    refuses({ initial: 'a', states: { a: {}, h: { type: 'history' } } }, /state type `history`/));
  it('a final state below the root', () =>
    refuses(
      { initial: 'a', states: { a: { initial: 'x', states: { x: { type: 'final' } } } } },
      /final state/,
    ));
  it('schemas given to setup()', () =>
    expect(() =>
      deriveTable(
        setup({ schemas: { events: {} }, guards, delays }).createMachine({
          id: 'm',
          context,
          initial: 'a',
          states: { a: {} },
        } as never) as unknown as AnyStateMachine,
        logic,
      ),
    ).toThrow(/state m: the state field `schemas` is not supported/));
  it('tags', () => refuses({ initial: 'a', states: { a: { tags: ['busy'] } } }, /field `tags`/));
  it('a wildcard event', () =>
    refuses({ initial: 'a', states: { a: { on: { '*': 'b' } }, b: {} } }, /wildcard/));
  it('more states than the executor’s 31 bits', () => {
    const states = (n: number) => Object.fromEntries(Array.from({ length: n }, (_, i) => [`s${i}`, {}]));
    // The root and 30 states fit; the root and 31 do not.
    expect(
      stateIds(
        deriveTable(base.createMachine({ id: 'm', context, initial: 's0', states: states(30) }), logic),
      ),
    ).toHaveLength(31);
    refuses({ initial: 's0', states: states(31) }, /it has 32 states; at most 31 are supported/);
  });
  it('a custom id or context below the root', () => {
    refuses({ initial: 'a', states: { a: { id: 'own' } } }, /custom state id or context below the root/);
    refuses({ initial: 'a', states: { a: { context } } }, /custom state id or context below the root/);
  });
  it('an initial transition with actions', () =>
    refuses(
      { initial: { target: 'a', actions: 'bump' }, states: { a: {} } },
      /state m: an initial transition with actions/,
    ));
  it('an XState event that is not the state’s own timer or reply', () =>
    refuses(
      {
        initial: 'a',
        states: { a: { invoke: { id: 'j', src: 'job' }, on: { 'xstate.done.actor.k': 'b' } }, b: {} },
      },
      /state m\.a: the event `xstate\.done\.actor\.k` is not supported/,
    ));
  it('an output on a state that is not final', () =>
    refuses({ initial: 'a', states: { a: { output: () => 1 } } }, /only a final state \(or the machine\)/));
  it('an output function not among the logic’s', () => {
    refuses(
      { initial: 'a', states: { a: { type: 'final', output: () => 1 } } },
      /one of the logic’s named outputs/,
    );
    refuses({ initial: 'a', states: { a: {} }, output: () => 1 }, /state m: its output function must be/);
  });
  it('an invoke field it does not run, or an actor the machine lacks', () => {
    refuses(
      { initial: 'a', states: { a: { invoke: { id: 'j', src: 'job', systemId: 's' } } } },
      /invoke field `systemId`/,
    );
    refuses(
      { initial: 'a', states: { a: { invoke: { id: 'j', src: 'nope' } } } },
      /actor `nope` is not one of/,
    );
  });
  it('a transition field it does not run', () =>
    refuses(
      { initial: 'a', states: { a: { on: { GO: { target: 'b', meta: 1 } } }, b: {} } },
      /transition field `meta`/,
    ));
  it('a guard or action name the logic lacks', () => {
    refuses(
      { initial: 'a', states: { a: { on: { GO: { guard: 'isHuge', target: 'b' } } }, b: {} } },
      /guard `isHuge` is not a named guard/,
    );
    refuses({ initial: 'a', states: { a: { entry: 'shout' } } }, /action `shout` is not a named action/);
  });
  it('an action with fields other than params', () =>
    refuses(
      { initial: 'a', states: { a: { entry: { type: 'bump', id: 'x' } } } },
      /action `bump` has fields other than params/,
    ));
  it('params that are not plain data, nor a named params function', () => {
    const notPlain = /params of `bump` must be plain data or a named params function/;
    refuses({ initial: 'a', states: { a: { entry: { type: 'bump', params: Symbol('s') } } } }, notPlain);
    refuses(
      { initial: 'a', states: { a: { entry: { type: 'bump', params: { f: { g: () => 1 } } } } } },
      notPlain,
    );
    // A function beside plain data (JSON.stringify drops it silently).
    refuses(
      { initial: 'a', states: { a: { entry: { type: 'bump', params: { by: 1, f: () => 1 } } } } },
      notPlain,
    );
    refuses(
      { initial: 'a', states: { a: { entry: { type: 'bump', params: () => 1 } } } },
      /its params function must be one of the logic’s named/,
    );
  });
  it('keeps what it accepts exactly: exit actions, `not` guards, a reply of each invocation, nested params', () => {
    const machine = base.createMachine({
      id: 'm',
      context,
      initial: 'a',
      states: {
        a: {
          exit: 'bump',
          invoke: [
            { id: 'j', src: 'job' },
            { id: 'k', src: 'job' },
          ],
          on: {
            'xstate.done.actor.k': { guard: not('isSmall'), target: 'b' },
            GO: { target: 'b', actions: { type: 'bump', params: { by: [1, { n: null }] } } },
          },
        },
        b: { type: 'final' },
      },
    });
    const table = deriveTable(machine, logic);
    expect(table.states[0]).toEqual({ key: 'm', type: 'compound', parent: -1, initial: 1 });
    expect(table.states[1]).toEqual({
      key: 'a',
      parent: 0,
      exit: ['bump'],
      invoke: [
        { id: 'j', src: 'job' },
        { id: 'k', src: 'job' },
      ],
      on: {
        'xstate.done.actor.k': [{ targets: [2], guard: { not: 'isSmall' } }],
        GO: [{ targets: [2], actions: [{ name: 'bump', params: { value: { by: [1, { n: null }] } } }] }],
      },
    });
    expect(Object.keys(table.states[1]!)).not.toContain('initial');
  });
  it('a null action, and an action object without a string type, are refused as unnamed', () => {
    const unnamed =
      /^machine m, state m\.a: an action must be named \(no inline or built-in actions in the config\)$/;
    refuses({ initial: 'a', states: { a: { entry: null } } }, unnamed);
    refuses({ initial: 'a', states: { a: { entry: { type: 1 } } } }, unnamed);
    refuses({ initial: 'a', states: { a: { exit: [{ params: { by: 1 } }] } } }, unnamed);
  });
  it('a machine whose root is a final state: one final row, no parent', () =>
    expect(deriveTable(base.createMachine({ id: 'm', context, type: 'final' }), logic)).toEqual({
      id: 'm',
      states: [{ key: 'm', type: 'final', parent: -1 }],
    }));
  it('a context that is not the logic’s', () =>
    expect(() => deriveTable(createMachine({ id: 'm', context: { n: 1 } }), logic)).toThrow(/context/));
});
