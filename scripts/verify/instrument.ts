import type { EmitImpl, MachineLogic } from '../../src/engine/machine-logic.js';
import {
  stateIds,
  type ActionRow,
  type GuardRow,
  type MachineTable,
  type TransitionRow,
} from '../../src/engine/machine-table.js';

/**
 * A table whose every state's entry and every transition also runs a marker action, so that the exploration
 * sees the states an eventless transition only passes through (`evaluating`, `givingUp`), which no settled
 * state value shows, and which transitions of the table were taken. The markers change nothing: they are
 * `emit` actions that emit nothing, so the executor neither copies context nor re-selects eventless
 * transitions because of them.
 */
export interface Instrumented {
  table: MachineTable;
  logic: MachineLogic<unknown, unknown>;
  /** Each transition's place in the table: `<state id> <event or "always"> #<index>`. */
  transitionNames: readonly string[];
  /** Each transition's guard and targets, as a reader of the machine knows it: `[guard] -> target`. */
  transitionDetails: readonly string[];
}

/** Where markers report: each state entered and each transition taken, by its index. */
export interface MarkerSink {
  onEnter(state: number): void;
  onTake(transition: number): void;
}

/** Where markers report by default while a run is driven (one run at a time: the exploration is synchronous). */
export const markers: MarkerSink = {
  onEnter: (_state: number) => {},
  onTake: (_transition: number) => {},
};

const VISIT = '__verifyEnter';
const TAKE = '__verifyTake';

export function instrument(
  table: MachineTable,
  logic: MachineLogic<unknown, unknown>,
  sink: MarkerSink = markers,
): Instrumented {
  const transitionNames: string[] = [];
  const transitionDetails: string[] = [];
  const ids = stateIds(table);
  const mark = (row: TransitionRow, where: string): TransitionRow => {
    const id = transitionNames.push(where) - 1;
    transitionDetails.push(detailOf(row, ids));
    const taken: ActionRow = { name: TAKE, params: { value: id } };
    return { ...row, actions: [taken, ...(row.actions ?? [])] };
  };
  const states = table.states.map((state, i) => {
    const path = ids[i]!;
    return {
      ...state,
      entry: [{ name: VISIT, params: { value: i } }, ...(state.entry ?? [])],
      ...(state.always ? { always: state.always.map((row, n) => mark(row, `${path} always #${n}`)) } : {}),
      on: Object.fromEntries(
        Object.entries(state.on ?? {}).map(([type, rows]) => [
          type,
          rows.map((row, n) => mark(row, `${path} ${type} #${n}`)),
        ]),
      ),
    };
  });
  const marker = (report: (value: number) => void): EmitImpl<unknown> => ({
    kind: 'emit',
    run: (_args, params: never) => {
      // A fixed parameter reaches the action as the value itself.
      report(params);
      return undefined;
    },
  });
  return {
    table: { ...table, states },
    logic: {
      ...logic,
      actions: {
        ...logic.actions,
        [VISIT]: marker((i) => sink.onEnter(i)),
        [TAKE]: marker((i) => sink.onTake(i)),
      },
    },
    transitionNames,
    transitionDetails,
  };
}

function detailOf(row: TransitionRow, ids: readonly string[]): string {
  const guard = row.guard === undefined ? '' : `[${guardText(row.guard)}] `;
  const targets = row.targets?.map((t) => ids[t]!.split('.').pop()).join(', ');
  return `${guard}-> ${targets ?? '(actions only)'}`;
}

const guardText = (guard: GuardRow): string =>
  typeof guard === 'string'
    ? guard
    : 'not' in guard
      ? `not ${guardText(guard.not)}`
      : guard.and.map(guardText).join(' and ');
