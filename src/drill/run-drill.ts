/** Runs scenarios one after another (they share nothing) and gathers their reports. */
import type { DrillReport, ScenarioReport } from './drill-report.js';
import type { DrillScenario } from './drill-scenario.js';
import { runScenario } from './run-scenario.js';
import type { DrillHarnessOptions } from './drill-harness.js';

export interface RunDrillOptions extends DrillHarnessOptions {
  /** Called before each scenario starts, with its index (from 0) and the count. */
  onStart?: (scenario: DrillScenario, index: number, count: number) => void;
  onDone?: (report: ScenarioReport, index: number, count: number) => void;
}

export async function runDrill(
  selected: readonly DrillScenario[],
  options: RunDrillOptions = {},
): Promise<DrillReport> {
  const startedAt = new Date();
  const realStart = performance.now();
  const reports: ScenarioReport[] = [];
  for (const [index, scenario] of selected.entries()) {
    options.onStart?.(scenario, index, selected.length);
    const report = await runScenario(scenario, options);
    reports.push(report);
    options.onDone?.(report, index, selected.length);
  }
  const passed = reports.filter((report) => report.verdict === 'pass').length;
  return {
    startedAt: startedAt.toISOString(),
    node: process.version,
    passed,
    failed: reports.length - passed,
    realMs: Math.round(performance.now() - realStart),
    scenarios: reports,
  };
}
