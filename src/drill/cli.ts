/**
 * `failwise-drill` (`npm start`): runs the failover test plan against real origins on 127.0.0.1 and prints
 * what the policy decided, what the origins saw and a verdict per scenario; writes a self-contained HTML
 * report. Exit code 0 when every scenario passed, 1 when one failed, 2 for a bad argument or a report that
 * could not be written.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import type { DrillScenario } from './drill-scenario.js';
import { renderHtmlReport } from './html-report.js';
import { runDrill } from './run-drill.js';
import { scenarios as plan } from './scenarios/index.js';
import { formatMs, summaryTable } from './summary-table.js';

export interface DrillIo {
  stdout: (text: string) => void;
  stderr: (text: string) => void;
  /** Whether stderr is a terminal: the progress line then rewrites itself in place. */
  isTTY: boolean;
}

const USAGE = `usage: failwise-drill [--scenario NAME]... [--json] [--report FILE | --no-report] [--list]

  --scenario NAME  run only this scenario (repeatable); --list shows the names
  --json           print the full report as JSON on stdout (progress goes to stderr)
  --report FILE    where to write the HTML report (default .drill/report.html)
  --no-report      do not write the HTML report
  --list           list the scenarios and exit`;

const processIo: DrillIo = {
  stdout: (text) => process.stdout.write(text),
  stderr: (text) => process.stderr.write(text),
  isTTY: process.stderr.isTTY === true,
};

/** Runs the drill as the command line asks; resolves with the exit code. */
export async function main(
  argv: readonly string[],
  io: DrillIo = processIo,
  available: readonly DrillScenario[] = plan,
): Promise<number> {
  let args;
  try {
    args = parseArgs({
      args: [...argv],
      options: {
        scenario: { type: 'string', multiple: true },
        json: { type: 'boolean', default: false },
        report: { type: 'string', default: '.drill/report.html' },
        'no-report': { type: 'boolean', default: false },
        list: { type: 'boolean', default: false },
        help: { type: 'boolean', short: 'h', default: false },
      },
      allowPositionals: false,
      strict: true,
    }).values;
  } catch (error) {
    io.stderr(`failwise-drill: ${(error as Error).message}\n${USAGE}\n`);
    return 2;
  }
  if (args.help) {
    io.stdout(`${USAGE}\n`);
    return 0;
  }
  if (args.list) {
    for (const scenario of available) io.stdout(`${scenario.name.padEnd(28)} ${scenario.title}\n`);
    return 0;
  }
  const names = args.scenario ?? [];
  const unknown = names.filter((name) => !available.some((scenario) => scenario.name === name));
  if (unknown.length > 0) {
    io.stderr(
      `failwise-drill: no scenario named ${unknown.map((name) => `"${name}"`).join(', ')}; ` +
        `the scenarios are: ${available.map((scenario) => scenario.name).join(', ')}\n`,
    );
    return 2;
  }
  const selected =
    names.length === 0 ? available : available.filter((scenario) => names.includes(scenario.name));

  const progress = (text: string, done: boolean) => {
    if (io.isTTY) io.stderr(`\r\x1b[2K${text}${done ? '\n' : ''}`);
    else if (done) io.stderr(`${text}\n`);
  };
  if (!args.json)
    io.stderr(`failwise drill: ${selected.length} scenarios against real HTTP origins on 127.0.0.1\n`);
  const report = await runDrill(selected, {
    onStart: (scenario, index, count) => progress(`[${index + 1}/${count}] ${scenario.name} ...`, false),
    onDone: (result, index, count) =>
      progress(
        `[${index + 1}/${count}] ${result.name} ${result.verdict === 'pass' ? 'pass' : 'FAIL'} ` +
          `(${formatMs(result.timeline.durationMs)} simulated, ${result.realMs} ms real)`,
        true,
      ),
  });

  let reportPath: string | undefined;
  let reportFailed = false;
  if (!args['no-report']) {
    const path = resolve(args.report);
    try {
      await mkdir(dirname(path), { recursive: true });
      await writeFile(path, renderHtmlReport(report));
      reportPath = path;
    } catch (error) {
      // The verdicts still count: print them, then say the report is missing.
      reportFailed = true;
      io.stderr(`failwise-drill: could not write the report to ${path}: ${(error as Error).message}\n`);
    }
  }
  if (args.json) io.stdout(`${JSON.stringify(report, null, 2)}\n`);
  else {
    io.stdout(`\n${summaryTable(report)}\n\n`);
    io.stdout(
      `${report.scenarios.length} scenario${report.scenarios.length === 1 ? '' : 's'}: ${report.passed} passed, ${report.failed} failed, ` +
        `in ${formatMs(report.realMs)}\n`,
    );
    if (reportPath !== undefined) io.stdout(`report: ${reportPath}\n`);
  }
  return report.failed > 0 ? 1 : reportFailed ? 2 : 0;
}
