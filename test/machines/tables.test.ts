import { readFileSync } from 'node:fs';
import { and, assign, createMachine, fromPromise, or, setup, type AnyStateMachine } from 'xstate';
import { describe, expect, it } from 'vitest';
import { deriveTable, TableDerivationError } from '../../machines/derive-table.js';
import type { MachineLogic } from '../../machines/machine-logic.js';
import { stateIds } from '../../machines/machine-table.js';
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
  it('tags', () => refuses({ initial: 'a', states: { a: { tags: ['busy'] } } }, /field `tags`/));
  it('a wildcard event', () =>
    refuses({ initial: 'a', states: { a: { on: { '*': 'b' } }, b: {} } }, /wildcard/));
  it('a context that is not the logic’s', () =>
    expect(() => deriveTable(createMachine({ id: 'm', context: { n: 1 } }), logic)).toThrow(/context/));
});
