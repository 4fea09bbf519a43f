// `npm run bench:compare` (bench/compare.ts) runs end to end: this checkout against itself, two rounds, in a
// child process (it needs --expose-gc). Only the shape of what it prints is checked: nothing here is timed.
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

import { describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

describe('bench/compare.ts', () => {
  it('measures two checkouts side by side and prints their figures and ratios', async () => {
    const { stdout } = await promisify(execFile)(
      process.execPath,
      ['--expose-gc', '--import', 'tsx', 'bench/compare.ts', ROOT, '2'],
      { cwd: ROOT, timeout: 120_000 },
    );
    for (const column of [
      'µs per request (median round)',
      'CPU µs per request between waits',
      'bytes allocated per request',
      'heap per request in flight',
      'loopback JSON ÷ raw fetch',
      'loopback JSON CPU µs per request',
    ])
      expect(stdout).toContain(column);
    expect(stdout).toMatch(/'base'/);
    expect(stdout).toMatch(/'this'/);
    const ratios =
      /this ÷ base: time (\d+\.\d{3}), between waits (\d+\.\d{3}), allocation (\d+\.\d{3}), heap in flight (\d+\.\d{3}), loopback JSON (\d+\.\d{3}), its CPU (\d+\.\d{3})/.exec(
        stdout,
      );
    expect(ratios, stdout).not.toBeNull();
    // Every figure was measured: a ratio of two positive, finite numbers.
    for (const ratio of ratios!.slice(1)) expect(Number(ratio)).toBeGreaterThan(0);
  }, 150_000);

  it('refuses a run without a base checkout, or with fewer than two rounds', async () => {
    const run = (args: string[]) =>
      promisify(execFile)(process.execPath, ['--expose-gc', '--import', 'tsx', 'bench/compare.ts', ...args], {
        cwd: ROOT,
        timeout: 60_000,
      });
    await expect(run([])).rejects.toThrow(/usage: npm run bench:compare -- <base checkout directory>/);
    await expect(run([ROOT, '1'])).rejects.toThrow(/rounds: expected an integer >= 2, got 1/);
  }, 150_000);
});
