import type { MachineLogic } from '../../src/engine/machine-logic.js';
import type { MachineTable } from '../../src/engine/machine-table.js';
import { leanRunner, type MachineRunner } from '../../src/engine/machine-runner.js';
import { instrument, type Instrumented } from './instrument.js';
import { childMachine } from '../../src/engine/child-machine.js';

/**
 * A `MachineRunner` for the real client (`createFailoverClient({ inspect: { runner } })`) that runs every
 * machine in the lean executor, as the client does by default, on a copy of its table with markers
 * (scripts/verify/instrument.ts): it counts, per machine, which transitions of the table the client took.
 * The markers are `emit` actions that emit nothing, so the machines behave exactly as without them.
 */
export interface TransitionCoverage {
  machine: string;
  /** Every transition of the table, by its place: `<state id> <event or "always"> #<index>`. */
  names: readonly string[];
  /** Each transition's guard and targets. */
  details: readonly string[];
  /** How many times each transition was taken. */
  counts: number[];
}

export interface CoverageRunner {
  runner: MachineRunner;
  /** The machines run so far, each with its transitions taken (in the order first started). */
  coverage(): TransitionCoverage[];
}

export function coverageRunner(): CoverageRunner {
  const byTable = new Map<MachineTable, { coverage: TransitionCoverage; instrumented: Instrumented }>();
  const instrumentedOf = (table: MachineTable, logic: MachineLogic<unknown, unknown>) => {
    let known = byTable.get(table);
    if (known === undefined) {
      const counts: number[] = [];
      const instrumented = instrument(table, logic, {
        onEnter: () => {},
        onTake: (i) => void (counts[i] = (counts[i] ?? 0) + 1),
      });
      for (let i = 0; i < instrumented.transitionNames.length; i++) counts[i] = 0;
      known = {
        instrumented,
        coverage: {
          machine: table.id,
          names: instrumented.transitionNames,
          details: instrumented.transitionDetails,
          counts,
        },
      };
      byTable.set(table, known);
    }
    return known.instrumented;
  };
  return {
    runner: {
      prepare(definition, options) {
        const { table, logic } = instrumentedOf(
          definition.table,
          definition.logic as MachineLogic<unknown, unknown>,
        );
        // The machines it starts as children (each outbox entry's lifecycle) are counted too.
        const machines = Object.fromEntries(
          Object.entries(definition.machines ?? {}).map(([name, child]) => {
            const instrumented = instrumentedOf(child.table, child.logic);
            return [name, childMachine(instrumented.table, instrumented.logic)];
          }),
        );
        return leanRunner.prepare({ table, logic: logic as typeof definition.logic, machines }, options);
      },
    },
    coverage: () => [...byTable.values()].map((k) => k.coverage),
  };
}

/** Several runs' coverage of the same machines, added up. */
export function mergeCoverage(runs: readonly (readonly TransitionCoverage[])[]): TransitionCoverage[] {
  const merged = new Map<string, TransitionCoverage>();
  for (const run of runs)
    for (const c of run) {
      const known = merged.get(c.machine);
      if (known === undefined) merged.set(c.machine, { ...c, counts: [...c.counts] });
      else c.counts.forEach((n, i) => (known.counts[i]! += n));
    }
  return [...merged.values()];
}
