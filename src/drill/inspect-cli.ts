/**
 * `npm run inspect -- [--scenario NAME] [--port N] [--pace N] [--no-wait] [--exit]`: runs one drill
 * scenario while its machines stream to the Stately inspector (docs/inspect.md). It prints the page to
 * open, waits for a viewer, runs the scenario at a pace a person can follow, prints the verdict, and stays
 * up until Ctrl-C (or exits at once with --exit). Exit code: 0 pass, 1 fail, 2 bad arguments, 130
 * interrupted before the verdict.
 */
import { parseArgs } from 'node:util';
import type { DrillScenario } from './drill-scenario.js';
import { DEFAULT_INSPECT_PORT, STATELY_INSPECTOR_URL, startLiveInspection } from './live-inspection.js';
import { runScenario } from './run-scenario.js';
import { scenarios } from './scenarios/index.js';

/** The scenario shown when none is named: failover and failback moves every machine. */
const DEFAULT_SCENARIO = 'failover-failback';
/** Real milliseconds per simulated second: a 5 s attempt timeout takes 1 s to watch. */
const DEFAULT_PACE = 200;

const USAGE = `usage: npm run inspect -- [--scenario NAME] [--port N] [--pace N] [--no-wait] [--exit]
  --scenario NAME  the scenario to run (default: ${DEFAULT_SCENARIO} if present, else the first)
  --port N         the loopback port for the page and the relay; 0 for any free port (default ${DEFAULT_INSPECT_PORT})
  --pace N         real milliseconds per simulated second; 0 runs at full speed (default ${DEFAULT_PACE})
  --no-wait        start at once instead of waiting for a viewer to connect
  --exit           exit when the scenario is done instead of staying up until Ctrl-C`;

class UsageError extends Error {
  override name = 'UsageError';
}

interface InspectArgs {
  scenario: DrillScenario;
  port: number;
  pace: number;
  wait: boolean;
  exit: boolean;
}

function parseInspectArgs(argv: readonly string[]): InspectArgs {
  let values;
  try {
    ({ values } = parseArgs({
      args: [...argv],
      strict: true,
      allowPositionals: false,
      options: {
        scenario: { type: 'string' },
        port: { type: 'string' },
        pace: { type: 'string' },
        'no-wait': { type: 'boolean', default: false },
        exit: { type: 'boolean', default: false },
      },
    }));
  } catch (error) {
    throw new UsageError(error instanceof Error ? error.message : String(error));
  }
  const names = scenarios.map((scenario) => scenario.name);
  const scenario =
    values.scenario === undefined
      ? (scenarios.find((candidate) => candidate.name === DEFAULT_SCENARIO) ?? scenarios[0])
      : scenarios.find((candidate) => candidate.name === values.scenario);
  if (scenario === undefined)
    throw new UsageError(
      values.scenario === undefined
        ? 'no drill scenario is defined (src/drill/scenarios/index.ts)'
        : `unknown scenario '${values.scenario}'; the scenarios are: ${names.join(', ')}`,
    );
  const port = values.port === undefined ? DEFAULT_INSPECT_PORT : Number(values.port);
  if (!Number.isInteger(port) || port < 0 || port > 65_535)
    throw new UsageError(`--port must be an integer from 0 to 65535, got '${values.port}'`);
  const pace = values.pace === undefined ? DEFAULT_PACE : Number(values.pace);
  if (values.pace?.trim() === '' || !Number.isFinite(pace) || pace < 0)
    throw new UsageError(`--pace must be a number >= 0 (real ms per simulated second), got '${values.pace}'`);
  return { scenario, port, pace, wait: !values['no-wait'], exit: values.exit };
}

const seconds = (ms: number) => `${Number((ms / 1_000).toFixed(1))} s`;

/** Resolves on the first SIGINT or SIGTERM; a second one while the scenario runs ends the process at once. */
function onInterrupt(): { interrupted: Promise<string>; signal: AbortSignal; dispose: () => void } {
  const controller = new AbortController();
  let received: string | undefined;
  let resolve!: (signal: string) => void;
  const interrupted = new Promise<string>((r) => (resolve = r));
  const handler = (signal: NodeJS.Signals) => {
    if (received !== undefined) process.exit(130);
    received = signal;
    controller.abort(new Error(signal));
    resolve(signal);
  };
  process.on('SIGINT', handler);
  process.on('SIGTERM', handler);
  return {
    interrupted,
    signal: controller.signal,
    dispose: () => {
      process.off('SIGINT', handler);
      process.off('SIGTERM', handler);
    },
  };
}

async function main(argv: readonly string[]): Promise<number> {
  let args: InspectArgs;
  try {
    args = parseInspectArgs(argv);
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    console.error(`inspect: ${error.message}\n${USAGE}`);
    return 2;
  }
  const { scenario } = args;
  const live = await startLiveInspection({ port: args.port });
  const interrupt = onInterrupt();
  try {
    console.log(`failwise inspect: ${scenario.name}: ${scenario.title}`);
    console.log(`Open ${live.url} in a browser to watch the machines in the Stately inspector.`);
    console.log(
      `  (the page embeds ${STATELY_INSPECTOR_URL}, so that browser needs internet; this process does not)`,
    );
    console.log(`  other viewers (a WebSocket client) can connect to ${live.relayUrl}`);
    if (args.wait) {
      console.log('Waiting for a viewer to connect (Ctrl-C to quit, --no-wait to start at once)...');
      try {
        await live.waitForViewer({ signal: interrupt.signal });
      } catch {
        console.log('Interrupted before the scenario ran.');
        return 130;
      }
      console.log('Viewer connected.');
    }
    console.log(
      args.pace > 0 ? `Running at ${args.pace} ms per simulated second...` : 'Running at full speed...',
    );
    const report = await runScenario(scenario, { inspect: live.inspect, paceMsPerSecond: args.pace });
    const passed = report.checks.filter((check) => check.pass).length;
    console.log(
      `${report.verdict === 'pass' ? 'PASS' : 'FAIL'} ${report.name}: ${passed}/${report.checks.length} checks passed, ` +
        `${seconds(report.timeline.durationMs)} simulated, ${seconds(report.realMs)} real`,
    );
    for (const check of report.checks.filter((check) => !check.pass))
      console.log(`  failed: ${check.label}${check.detail === undefined ? '' : ` (${check.detail})`}`);
    if (report.error !== undefined) console.log(`  error: ${report.error}`);
    const code = report.verdict === 'pass' ? 0 : 1;
    if (interrupt.signal.aborted) return 130;
    if (!args.exit) {
      console.log(`Still serving ${live.url} so the viewer can look around; Ctrl-C to stop.`);
      await interrupt.interrupted;
    }
    return code;
  } finally {
    interrupt.dispose();
    await live.stop();
    console.log(`Closed; ${live.relayed()} inspection messages relayed.`);
  }
}

try {
  // No process.exit on success: the process ends by itself once everything is closed.
  process.exitCode = await main(process.argv.slice(2));
} catch (error) {
  console.error(`inspect: ${error instanceof Error ? error.message : String(error)}`);
  process.exitCode = 1;
}
