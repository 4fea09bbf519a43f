import type { EmitImpl, MachineLogic } from '../../machines/machine-logic.js';
import {
  stateIds,
  type ActionRow,
  type MachineTable,
  type TransitionRow,
} from '../../machines/machine-table.js';

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
}

/** Where markers report while a run is driven (one run at a time: the exploration is synchronous). */
export const markers = {
  onEnter: (_state: number) => {},
  onTake: (_transition: number) => {},
};

const VISIT = '__verifyEnter';
const TAKE = '__verifyTake';

export function instrument(table: MachineTable, logic: MachineLogic<unknown, unknown>): Instrumented {
  const transitionNames: string[] = [];
  const mark = (row: TransitionRow, where: string): TransitionRow => {
    const id = transitionNames.push(where) - 1;
    const taken: ActionRow = { name: TAKE, params: { value: id } };
    return { ...row, actions: [taken, ...(row.actions ?? [])] };
  };
  const ids = stateIds(table);
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
        [VISIT]: marker((i) => markers.onEnter(i)),
        [TAKE]: marker((i) => markers.onTake(i)),
      },
    },
    transitionNames,
  };
}
