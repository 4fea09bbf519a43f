import { describe, expect, it } from 'vitest';
import { runScenario } from '../../src/drill/run-scenario.js';
import { scenarios } from '../../src/drill/scenarios/index.js';

// Every scenario of the drill, each against its own real 127.0.0.1 origins and a simulated clock. A scenario
// passes only when every one of its checks does; the message lists the checks that failed.
describe('the failure drill', () => {
  it('has scenarios with unique names that --scenario can take', () => {
    const names = scenarios.map((scenario) => scenario.name);
    expect(new Set(names).size).toBe(names.length);
    for (const name of names) expect(name).toMatch(/^[a-z0-9]+(-[a-z0-9]+)*$/);
  });

  for (const scenario of scenarios) {
    it(`${scenario.name}: ${scenario.expected}`, async () => {
      const report = await runScenario(scenario);
      const failed = report.checks.filter((check) => !check.pass);
      expect({ error: report.error, failed }).toEqual({ error: undefined, failed: [] });
      expect(report.checks.length).toBeGreaterThan(0);
      expect(report.verdict).toBe('pass');
    });
  }
});
