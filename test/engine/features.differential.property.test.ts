import { fc } from '@fast-check/vitest';
import { fromPromise, setup } from 'xstate';
import { deriveTable } from '../../src/engine/derive-table.js';
import { xstateActions, type MachineLogic } from '../../src/engine/machine-logic.js';
import {
  advanceBoth,
  answerBoth,
  describeDifferential,
  expectSame,
  invertGuard,
  leanSide,
  mapTransitions,
  sendBoth,
  settle,
  timerMutants,
  xstateSide,
  type MachineUnderTest,
  type Mutation,
} from './differential-harness.js';

/**
 * The lean executor against XState on the parts of the algorithm that failwise's own machines barely reach:
 * exit actions (and their order, deepest first, across parallel regions), a transition that leaves and
 * re-enters its own state (`reenter: true`, with an invocation, a timer and exit and entry actions), two regions
 * whose transitions for one event both leave their parallel state (the first in document order wins), a region's
 * transition against one of its parallel state's own (the deeper source wins), eventless transitions on context,
 * a raised event, an emitted event in an entry, and a final state's output. Every action writes what it did into
 * `log`, so the order of entries, exits and transition actions is part of the compared context.
 */
interface FeaturesContext {
  log: string[];
  n: number;
}

type Args = { context: FeaturesContext; event: { type: string } };

const note = (what: string) => ({ type: 'note' as const, params: { value: what } });

const featuresLogic = {
  context: ({ input }: { input: { n: number } }): FeaturesContext => ({ log: [], n: input.n }),
  guards: {
    isEven: ({ context }: Args) => context.n % 2 === 0,
    isBig: ({ context }: Args) => context.n >= 4,
  },
  delays: { patience: ({ context }: { context: FeaturesContext }) => 50 + 10 * context.n },
  actions: {
    note: {
      kind: 'assign' as const,
      run: ({ context }: Args, params: { value: string }) => ({ log: [...context.log, params.value] }),
    },
    bump: { kind: 'assign' as const, run: ({ context }: Args) => ({ n: context.n + 1 }) },
    announce: {
      kind: 'emit' as const,
      run: ({ context }: Args, params: { value: string }) => ({
        type: 'announced',
        what: params.value,
        n: context.n,
      }),
    },
    raiseBump: { kind: 'raise' as const, event: { type: 'BUMP' } },
  },
  inputs: { work: ({ context }: Args) => ({ n: context.n, entries: context.log.length }) },
  params: {},
  outputs: { result: ({ context }: Args) => ({ n: context.n, log: context.log }) },
};

const features = setup({
  types: {
    context: {} as FeaturesContext,
    input: {} as { n: number },
    events: {} as { type: 'GO' | 'SWAP' | 'REENTER' | 'BUMP' | 'FINISH' },
  },
  guards: featuresLogic.guards,
  delays: featuresLogic.delays,
  actions: xstateActions(featuresLogic.actions),
  // The harness provides the real one (each run answers it by hand); this one never answers.
  actors: { work: fromPromise<unknown, { n: number; entries: number }>(() => new Promise(() => {})) },
}).createMachine({
  id: 'features',
  context: featuresLogic.context,
  initial: 'outer',
  output: featuresLogic.outputs.result,
  states: {
    outer: {
      entry: note('enter:outer'),
      exit: note('exit:outer'),
      initial: 'idle',
      on: { FINISH: { target: 'finished', actions: note('finish') } },
      states: {
        idle: {
          entry: note('enter:idle'),
          exit: note('exit:idle'),
          always: { guard: 'isBig', target: 'split', actions: note('idle:big') },
          on: { GO: { target: 'busy', actions: note('idle:go') }, BUMP: { actions: 'bump' } },
        },
        busy: {
          entry: [note('enter:busy'), { type: 'announce', params: { value: 'busy' } }],
          exit: note('exit:busy'),
          invoke: {
            id: 'work',
            src: 'work',
            input: featuresLogic.inputs.work,
            onDone: { target: 'idle', actions: note('work:done') },
            onError: { target: 'idle', actions: note('work:error') },
          },
          after: { patience: { target: 'idle', actions: note('busy:timeout') } },
          on: {
            REENTER: { target: 'busy', reenter: true, actions: note('busy:reenter') },
            BUMP: { actions: ['bump', note('busy:bump')] },
            GO: { target: 'split', actions: note('busy:go') },
          },
        },
        split: {
          type: 'parallel',
          entry: note('enter:split'),
          exit: note('exit:split'),
          // For a region with no SWAP of its own: the other region's own SWAP, deeper, wins over this one.
          on: { SWAP: { target: 'idle', actions: note('split:swap') } },
          states: {
            left: {
              initial: 'l1',
              exit: note('exit:left'),
              states: {
                l1: {
                  entry: note('enter:l1'),
                  exit: note('exit:l1'),
                  on: {
                    SWAP: { target: 'l2', actions: note('l1:swap') },
                    // Both regions leave `split` on GO: this one, first in document order, wins.
                    GO: { target: '#features.outer.idle', actions: note('l1:go') },
                  },
                },
                l2: {
                  entry: [note('enter:l2'), 'raiseBump'],
                  exit: note('exit:l2'),
                  on: {
                    SWAP: { target: 'l1', actions: note('l2:swap') },
                    REENTER: { target: 'l2', reenter: true, actions: note('l2:reenter') },
                  },
                },
              },
            },
            right: {
              initial: 'r1',
              exit: note('exit:right'),
              states: {
                r1: {
                  entry: note('enter:r1'),
                  exit: note('exit:r1'),
                  on: {
                    SWAP: { guard: 'isEven', target: 'r2', actions: note('r1:swap') },
                    GO: { target: '#features.outer.busy', actions: note('r1:go') },
                    BUMP: { actions: ['bump', note('r1:bump')] },
                  },
                },
                r2: {
                  entry: note('enter:r2'),
                  exit: note('exit:r2'),
                  on: { BUMP: { target: 'r1', actions: note('r2:bump') } },
                },
              },
            },
          },
        },
      },
    },
    finished: { type: 'final' },
  },
});

const featuresLogicForTable = featuresLogic as unknown as MachineLogic<never, never>;

const featuresUnderTest: MachineUnderTest = {
  machine: features,
  table: deriveTable(features, featuresLogicForTable),
  logic: featuresLogicForTable,
  invoked: ['work'],
};

type Stimulus =
  | { kind: 'event'; type: 'GO' | 'SWAP' | 'REENTER' | 'BUMP' | 'FINISH' }
  | { kind: 'answer'; pick: number; ok: boolean }
  | { kind: 'advance'; ms: number };

const stimulusArb: fc.Arbitrary<Stimulus> = fc.oneof(
  {
    weight: 6,
    arbitrary: fc.record({
      kind: fc.constant('event' as const),
      // FINISH rarely: it ends the run.
      type: fc.oneof(
        { weight: 8, arbitrary: fc.constantFrom('GO', 'SWAP', 'REENTER', 'BUMP' as const) },
        { weight: 1, arbitrary: fc.constant('FINISH' as const) },
      ),
    }),
  },
  {
    weight: 2,
    arbitrary: fc.record({ kind: fc.constant('answer' as const), pick: fc.nat(3), ok: fc.boolean() }),
  },
  {
    weight: 2,
    arbitrary: fc.record({ kind: fc.constant('advance' as const), ms: fc.integer({ min: 0, max: 150 }) }),
  },
);

async function runFeatures(start: { n: number }, stimuli: readonly Stimulus[], mutation?: Mutation) {
  const mut = featuresUnderTest;
  const a = xstateSide(mut, start, 1_000);
  const b = leanSide(mut, start, 1_000, mutation);
  await settle(a, b);
  expectSame(mut, a, b, 'start');
  let step = 0;
  for (const s of stimuli) {
    step++;
    if (s.kind === 'event') sendBoth(a, b, () => ({ type: s.type }));
    else if (s.kind === 'answer')
      answerBoth(a, b, s.pick, () =>
        s.ok ? { ok: true, value: 'worked' } : { ok: false, error: new Error('no') },
      );
    else await advanceBoth(a, b, s.ms);
    await settle(a, b);
    expectSame(mut, a, b, `step ${step} (${JSON.stringify(s)})`);
  }
  // Then to the end: FINISH, which every state of `outer` takes.
  sendBoth(a, b, () => ({ type: 'FINISH' }));
  await settle(a, b);
  expectSame(mut, a, b, 'end');
}

describeDifferential({
  checks: 'same exits, entries, actions, invocations, timers, emitted events and output at every step',
  machine: features,
  table: featuresUnderTest.table,
  input: fc.record({ n: fc.integer({ min: 0, max: 5 }) }),
  stimuli: fc.array(stimulusArb, { maxLength: 16 }),
  run: runFeatures,
  mutants: [
    ['a guard inverted (isEven)', { table: invertGuard(featuresUnderTest.table, 'isEven') }],
    ['a guard inverted (isBig)', { table: invertGuard(featuresUnderTest.table, 'isBig') }],
    [
      'a re-entering transition that does not leave its state',
      { table: mapTransitions(featuresUnderTest.table, ({ reenter: _reenter, ...row }) => row) },
    ],
    [
      'exit actions dropped',
      {
        table: {
          ...featuresUnderTest.table,
          states: featuresUnderTest.table.states.map(({ exit: _exit, ...state }) => state),
        },
      },
    ],
    ...timerMutants(0),
  ],
});
