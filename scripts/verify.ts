import { explore } from './verify/explore.js';
import { healthModel } from './verify/health-model.js';
import { isComplete, reportCoverage } from './verify/coverage-report.js';
import { runScenarios } from './verify/model-based/run-scenarios.js';
import { scenarios } from './verify/model-based/scenarios.js';
import { outboxModel } from './verify/outbox-model.js';
import { reportDetails, reportTable, reportWitnesses } from './verify/report.js';
import { requestModel } from './verify/request-model.js';

/**
 * `npm run verify`: the exhaustive bounded exploration of the machines (docs/verification.md), with the full
 * bounds, then the model-based scenarios on the real client with their transition coverage. Prints a table
 * per machine and the coverage, and exits 1 on any violation (or when a search passes its cap), on a scenario
 * that fails, or below 100 % coverage. `-- --paths` also prints, per transition of each table, the shortest
 * path the exploration found to it.
 */
const started = performance.now();
const explorations = [
  // Up to 4 attempts: with the origins a request has seen fail in its state (a read's retry goes elsewhere), 5
  // no longer fits in memory on a 24 GiB machine; 4 enters every state (docs/verification.md, "Bounds").
  explore(requestModel({ maxAttempts: [1, 2, 3, 4], methods: ['GET', 'POST', 'PUT'] }), {
    maxStates: 1_500_000,
  }),
  explore(healthModel({ maxEvents: 6 }), { maxStates: 1_500_000 }),
  explore(outboxModel({ entries: 1 }), { maxStates: 500_000 }),
  // Two entries (docs/verification.md, "Bounds"): no caller event but their enqueues; with the same orderKey
  // one success and one failure of each kind; with different ones (both in flight at once) the fewest answers:
  // with the same answers as for one key the search had not ended after 25 minutes.
  explore(outboxModel({ entries: 2, keys: 'same', answers: 'few', callerEvents: 0, online: [true] }), {
    maxStates: 500_000,
  }),
  explore(
    outboxModel({ entries: 2, keys: 'different', answers: 'fewest', callerEvents: 0, online: [true] }),
    {
      maxStates: 500_000,
    },
  ),
];
console.log(reportTable(explorations));
const details = reportDetails(explorations);
if (details) console.log(`\n${details}`);
if (process.argv.includes('--paths')) console.log(`\n${reportWitnesses(explorations)}`);
console.log(`\nexploration: ${((performance.now() - started) / 1000).toFixed(1)} s\n`);

const modelBased = performance.now();
const { results, summary } = await runScenarios(scenarios);
for (const r of results.filter((r) => r.error !== undefined))
  console.log(`scenario failed: ${r.name}: ${String(r.error)}`);
console.log(reportCoverage(summary));
console.log(
  `\nmodel-based: ${results.length} scenarios, ${((performance.now() - modelBased) / 1000).toFixed(1)} s`,
);
process.exitCode =
  explorations.some((e) => e.violations.length > 0) ||
  results.some((r) => r.error !== undefined) ||
  !isComplete(summary)
    ? 1
    : 0;
