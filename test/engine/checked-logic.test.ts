// The check of the rules for logic authors (checked-logic.ts, on every differential run) notices each way to
// break them, on a small table written for the test run through the harness's lean side; and logic that keeps
// them passes clean.
import { describe, expect, it } from 'vitest';

import type { MachineLogic } from '../../src/engine/machine-logic.js';
import type { MachineTable } from '../../src/engine/machine-table.js';
import { leanSide, type MachineUnderTest } from './differential-harness.js';

interface Ctx {
  n: number;
  list: number[];
}

/** A root with `a`; GO, guarded by `guard`, runs `action` and goes to `b`, whose timer's delay is `delay`. */
const table: MachineTable = {
  id: 'rules',
  states: [
    { key: 'rules', type: 'compound', parent: -1, initial: 1 },
    { key: 'a', parent: 0, on: { GO: [{ targets: [2], guard: 'guard', actions: ['action'] }] } },
    { key: 'b', parent: 0, after: ['delay'] },
  ],
};

type Parts = Partial<Pick<MachineLogic<Ctx, unknown>, 'guards' | 'actions' | 'delays'>>;

function brokenRules(parts: Parts): string[] {
  const logic = {
    context: () => ({ n: 0, list: [] }),
    guards: { guard: () => true },
    delays: { delay: () => 10 },
    actions: { action: { kind: 'assign', run: ({ context }: { context: Ctx }) => ({ n: context.n + 1 }) } },
    inputs: {},
    params: {},
    outputs: {},
    ...parts,
  };
  const mut: MachineUnderTest = {
    // The lean side alone runs here: no XState machine is needed.
    machine: undefined as never,
    table,
    logic: logic as unknown as MachineLogic<never, never>,
    invoked: [],
  };
  const side = leanSide(mut, undefined, 0);
  side.send({ type: 'GO' });
  // Whatever kept its arguments reads them now, after its call returned.
  kept.forEach((use) => use());
  kept.length = 0;
  return [...side.brokenRules];
}

const kept: (() => void)[] = [];

describe('the rules for logic authors, checked on every differential run', () => {
  it('pass logic that only reads what it is given and keeps none of it', () => {
    expect(brokenRules({})).toEqual([]);
  });

  it('catch a guard that changes the context', () => {
    const guards = {
      guard: ({ context }: { context: Ctx }) => {
        context.list.push(1);
        return true;
      },
    };
    expect(brokenRules({ guards })).toEqual(['rules: guard guard changed what it was given']);
  });

  it('catch a guard that keeps its arguments object and reads it later', () => {
    const guards = {
      guard: (args: { context: Ctx }) => {
        kept.push(() => void args.context);
        return true;
      },
    };
    expect(brokenRules({ guards })).toEqual([
      'rules: guard guard kept its arguments and read them after it returned',
    ]);
  });

  it('catch an assign that changes the context in place rather than returning the change', () => {
    const actions = {
      action: {
        kind: 'assign' as const,
        run: ({ context }: { context: Ctx }) => {
          context.n += 1;
          return {};
        },
      },
    };
    expect(brokenRules({ actions })).toEqual(['rules: assign action action changed what it was given']);
  });

  it('catch an action that keeps the context and reads it later', () => {
    const actions = {
      action: {
        kind: 'assign' as const,
        run: ({ context }: { context: Ctx }) => {
          kept.push(() => void context.n);
          return {};
        },
      },
    };
    expect(brokenRules({ actions })).toEqual([
      'rules: assign action action kept what it was given and used it after it returned',
    ]);
  });

  it('catch a delay that changes the context', () => {
    const delays = {
      delay: ({ context }: { context: Ctx }) => {
        context.list.length = 0;
        context.list.push(7);
        return 10;
      },
    };
    expect(brokenRules({ delays })).toEqual(['rules: delay delay changed what it was given']);
  });
});
