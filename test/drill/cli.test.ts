import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { main, type DrillIo } from '../../src/drill/cli.js';
import { originConfig } from '../../src/drill/drill-origin.js';
import type { DrillReport } from '../../src/drill/drill-report.js';
import type { DrillScenario } from '../../src/drill/drill-scenario.js';
import { scenarios } from '../../src/drill/scenarios/index.js';

const root = fileURLToPath(new URL('../..', import.meta.url));
const work = mkdtempSync(join(tmpdir(), 'failwise-drill-cli-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

function captured() {
  let stdout = '';
  let stderr = '';
  const io: DrillIo = {
    stdout: (text) => void (stdout += text),
    stderr: (text) => void (stderr += text),
    isTTY: false,
  };
  return { io, out: () => stdout, err: () => stderr };
}

/** A real scenario (one GET to a real origin) whose verdict the test chooses. */
const scenario = (name: string, expectOrigin: string): DrillScenario => ({
  name,
  title: `one read, expecting origin ${expectOrigin}`,
  expected: `the read succeeds on ${expectOrigin}`,
  async run(drill) {
    const primary = await drill.origin('primary');
    const outcome = await drill.run(drill.client({ origins: [originConfig(primary)] }), {
      path: '/v1/items',
    });
    drill.expectEqual(
      `served by ${expectOrigin}`,
      outcome.status === 'succeeded' && outcome.origin,
      expectOrigin,
    );
  },
});
const passing = scenario('reads-from-primary', 'primary');
const failing = scenario('reads-from-elsewhere', 'elsewhere');

describe('failwise-drill (npm start)', () => {
  it('exits 1 when a scenario fails, naming the check that failed, and still writes the report', async () => {
    const { io, out, err } = captured();
    const report = join(work, 'failing.html');
    const code = await main(['--report', report], io, [passing, failing]);
    expect(code).toBe(1);
    expect(out()).toMatch(/^reads-from-primary\s.*\spass$/m);
    expect(out()).toMatch(/^reads-from-elsewhere\s.*\sFAIL$/m);
    expect(out()).toContain('x served by elsewhere (saw "primary")');
    expect(out()).toContain('2 scenarios: 1 passed, 1 failed');
    expect(err()).toContain('[2/2] reads-from-elsewhere FAIL');
    expect(readFileSync(report, 'utf8')).toMatch(/^<!doctype html>/i);
  });

  it('--scenario runs one scenario, --json prints the report on stdout and nothing else', async () => {
    const { io, out } = captured();
    const code = await main(['--scenario', 'reads-from-primary', '--json', '--no-report'], io, [
      passing,
      failing,
    ]);
    expect(code).toBe(0);
    const report = JSON.parse(out()) as DrillReport;
    expect(report.scenarios.map((s) => [s.name, s.verdict])).toEqual([['reads-from-primary', 'pass']]);
    expect(report).toMatchObject({ passed: 1, failed: 0 });
    expect(report.scenarios[0]!.seen).toEqual([
      { origin: 'primary', requests: 1, probes: 0, writesApplied: 0 },
    ]);
  });

  it('refuses an unknown scenario or flag with exit code 2, listing the scenario names', async () => {
    const unknown = captured();
    expect(await main(['--scenario', 'nope'], unknown.io, [passing, failing])).toBe(2);
    expect(unknown.err()).toContain(
      'no scenario named "nope"; the scenarios are: reads-from-primary, reads-from-elsewhere',
    );
    const flag = captured();
    expect(await main(['--fast'], flag.io, [passing])).toBe(2);
    expect(flag.err()).toMatch(/Unknown option '--fast'[\s\S]*usage: failwise-drill/);
    expect(flag.out()).toBe('');
  });

  it("the README's scenario table lists exactly the scenarios of the plan, in order", () => {
    const readme = readFileSync(join(root, 'README.md'), 'utf8');
    const section = readme.slice(readme.indexOf('## The failure drill'), readme.indexOf('## Read next'));
    const listed = [...section.matchAll(/^\| `([a-z0-9-]+)` /gm)].map((match) => match[1]);
    expect(listed).toEqual(scenarios.map((scenario) => scenario.name));
    expect(readme).toContain(`the failure drill: ${scenarios.length} faults`);
  });

  it('shows progress on a terminal as one line that rewrites itself', async () => {
    const { io, err } = captured();
    await main(['--no-report'], { ...io, isTTY: true }, [passing]);
    expect(err()).toContain('\r\x1b[2K[1/1] reads-from-primary ...');
    const line = err().split('\r\x1b[2K').at(-1)!;
    expect(line).toMatch(/^\[1\/1\] reads-from-primary pass \(\d+ ms simulated, \d+ ms real\)\n$/);
  });

  it('still prints the verdicts when the report cannot be written, and exits 2 saying why', async () => {
    const { io, out, err } = captured();
    const blocked = join(work, 'a-file');
    writeFileSync(blocked, 'not a directory');
    const code = await main(['--report', join(blocked, 'report.html')], io, [passing]);
    expect(code).toBe(2);
    expect(out()).toMatch(/^reads-from-primary\s.*\spass$/m);
    expect(out()).not.toContain('report:');
    expect(err()).toContain(`failwise-drill: could not write the report to ${join(blocked, 'report.html')}:`);
  });

  it('--list names every scenario of the plan', async () => {
    const { io, out } = captured();
    expect(await main(['--list'], io)).toBe(0);
    for (const { name } of scenarios) expect(out()).toMatch(new RegExp(`^${name}\\s`, 'm'));
  });

  it('npm start runs every scenario against real origins, passes them all, writes the report and exits 0', () => {
    const report = join(work, 'report.html');
    const result = spawnSync('npm', ['start', '--silent', '--', '--report', report], {
      cwd: root,
      encoding: 'utf8',
      timeout: 60_000,
    });
    expect(result.stderr).not.toContain('FAIL');
    expect(result.status).toBe(0);
    for (const { name } of scenarios) expect(result.stdout).toMatch(new RegExp(`^${name}\\s.*\\spass$`, 'm'));
    expect(result.stdout).toContain(`${scenarios.length} scenarios: ${scenarios.length} passed, 0 failed`);
    expect(existsSync(report)).toBe(true);
  });
});
