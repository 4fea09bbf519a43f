import { instrument } from '../instrument.js';
import { coverageRunner, type TransitionCoverage } from '../coverage-runner.js';
import { summarize, type CoverageSummary } from '../coverage-report.js';
import { requestTable } from '../../../machines/request/request.table.js';
import { requestLogic } from '../../../machines/request/request.logic.js';
import { originHealthTable } from '../../../machines/origin-health/origin-health.table.js';
import { originHealthLogic } from '../../../machines/origin-health/origin-health.logic.js';
import { outboxTable } from '../../../machines/outbox/outbox.table.js';
import { outboxLogic } from '../../../machines/outbox/outbox.logic.js';
import { outboxEntryTable } from '../../../machines/outbox-entry/outbox-entry.table.js';
import { outboxEntryLogic } from '../../../machines/outbox-entry/outbox-entry.logic.js';
import type { MachineLogic } from '../../../src/engine/machine-logic.js';
import { createWorld } from './world.js';
import type { Scenario } from './scenarios.js';
import { unreachableThroughClient } from './unreachable.js';

/** Every transition of each machine's table: the denominator of the coverage. */
export const transitionTotals: Readonly<Record<string, number>> = Object.fromEntries(
  (
    [
      [requestTable, requestLogic],
      [originHealthTable, originHealthLogic],
      [outboxTable, outboxLogic],
      [outboxEntryTable, outboxEntryLogic],
    ] as const
  ).map(([table, logic]) => [
    table.id,
    instrument(table, logic as unknown as MachineLogic<unknown, unknown>).transitionNames.length,
  ]),
);

export interface ScenarioResult {
  name: string;
  error?: unknown;
  /** Transitions this scenario took (`<machine>: <name>`). */
  taken: string[];
  /** Of those, the ones no scenario before it had taken. */
  firstTaken: string[];
}

/**
 * Runs each scenario on a fresh real client, one after another, every client's machines counted by one
 * coverage runner; a scenario that throws is reported and the others still run.
 */
export async function runScenarios(
  scenarios: readonly Scenario[],
): Promise<{ results: ScenarioResult[]; coverage: TransitionCoverage[]; summary: CoverageSummary }> {
  const coverage = coverageRunner();
  const results: ScenarioResult[] = [];
  /** How many times each transition was taken so far, by `<machine>: <name>`. */
  const countsNow = () =>
    new Map(
      coverage
        .coverage()
        .flatMap((c) => c.names.map((n, i): [string, number] => [`${c.machine}: ${n}`, c.counts[i]!])),
    );
  for (const scenario of scenarios) {
    const before = countsNow();
    let error: unknown;
    try {
      const world = await createWorld(coverage, scenario.options);
      try {
        await scenario.run(world);
      } catch (e) {
        error = e;
      }
      await world.close();
    } catch (e) {
      error ??= e;
    }
    const taken = [...countsNow()].flatMap(([t, n]) => (n > (before.get(t) ?? 0) ? [t] : []));
    const firstTaken = taken.filter((t) => !before.get(t));
    results.push({ name: scenario.name, ...(error === undefined ? {} : { error }), taken, firstTaken });
  }
  return {
    results,
    coverage: coverage.coverage(),
    summary: summarize(coverage.coverage(), transitionTotals, unreachableThroughClient),
  };
}
