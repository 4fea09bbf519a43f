import { describe, expect, it } from 'vitest';
import type { TransitionCoverage } from '../../scripts/verify/coverage-runner.js';
import { isComplete, reportCoverage, summarize } from '../../scripts/verify/coverage-report.js';
import { runScenarios, transitionTotals } from '../../scripts/verify/model-based/run-scenarios.js';
import { scenarios } from '../../scripts/verify/model-based/scenarios.js';
import { unreachableThroughClient } from '../../scripts/verify/model-based/unreachable.js';

/**
 * Model-based tests (docs/verification.md): the exploration's paths told to the real client
 * (`createFailoverClient`, the real fetch transport, two real HTTP origins on 127.0.0.1, a real memory store,
 * a simulated clock), with every machine's transitions counted from its table as the client runs it. Passes
 * only when every scenario ends as it says, takes the transitions it names, and together they take every
 * transition of the request, origin-health and outbox tables that the client can take; the few it cannot
 * are listed, with why, and must stay untaken.
 */
describe('model-based tests on the real client', () => {
  it('take every transition the client can take', async () => {
    const { results, summary } = await runScenarios(scenarios);
    console.log(reportCoverage(summary));
    for (const r of results) {
      expect(r.error, r.name).toBeUndefined();
      const claimed = scenarios.find((s) => s.name === r.name)!.takes;
      const missing = claimed.filter((t) => !r.taken.some((taken) => taken.endsWith(t)));
      expect(missing, `${r.name}: transitions it names but did not take`).toEqual([]);
    }
    expect(summary.neverTaken).toEqual([]);
    expect(summary.takenButListedUnreachable).toEqual([]);
    expect(isComplete(summary)).toBe(true);
  }, 60_000);

  it('fails below 100 %: one scenario alone leaves transitions untaken', async () => {
    const { summary } = await runScenarios(scenarios.slice(0, 1));
    expect(isComplete(summary)).toBe(false);
    expect(summary.neverTaken).toContain(
      'request: request.active.evaluating always #4 [not isRetryableFailure] -> givingUp',
    );
    expect(reportCoverage(summary)).toMatch(/^request transition coverage: (\d|\.)+ %$/m);
    expect(reportCoverage(summary)).not.toMatch(/^transition coverage: 100 %/m);
  });

  it('fails when a transition listed as unreachable is taken', () => {
    const [listed] = Object.keys(unreachableThroughClient);
    const [machine, name] = listed!.split(': ') as [string, string];
    const coverage: TransitionCoverage = {
      machine,
      names: [name],
      details: [''],
      counts: [1],
    };
    const summary = summarize([coverage], transitionTotals, unreachableThroughClient);
    expect(summary.takenButListedUnreachable).toEqual([listed]);
    expect(isComplete(summary)).toBe(false);
  });
});
