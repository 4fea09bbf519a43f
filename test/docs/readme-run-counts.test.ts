import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { fc } from '@fast-check/vitest';
import { FIXED_SEED } from '../setup/fixed-seed.js';

// The README's "Property tests" table says how many cases each property file runs; this reads the counts the
// files set (`numRuns: 1_000`, `const RUNS = 600`, `DIFF_RUNS = Number(process.env.DIFF_RUNS ?? 2_000)`) and
// checks the table says the same, and names every file that runs a property.

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
const section = /## Property tests\n([\s\S]*?)\n## /.exec(readme)?.[1] ?? '';

/** The table's rows: the file named in the first cell, the numbers in the second. */
const rows = [...section.matchAll(/^\| `([^`]+)`[^|]*\| ([^|]+) \|/gm)].map(([, file, runs]) => ({
  file: file!,
  runs: [...runs!.matchAll(/\d[\d,]*/g)].map(([n]) => Number(n.replaceAll(',', ''))),
}));

/** The run counts a file sets, as literals. */
function countsIn(file: string): number[] {
  const text = readFileSync(join(ROOT, file), 'utf8');
  const literals = [
    ...text.matchAll(/numRuns(?::| =) ([\d_]+)/g),
    ...text.matchAll(/const RUNS = ([\d_]+)/g),
    ...text.matchAll(/DIFF_RUNS = Number\(process\.env\.DIFF_RUNS \?\? ([\d_]+)\)/g),
  ];
  return [...new Set(literals.map(([, n]) => Number(n!.replaceAll('_', ''))))].sort((a, b) => a - b);
}

/** Every test file (or shared harness) that runs a property. */
function propertyFiles(dir: string): string[] {
  return readdirSync(join(ROOT, dir), { recursive: true, encoding: 'utf8' })
    .filter((file) => file.endsWith('.ts'))
    .map((file) => join(dir, file))
    .filter((file) => /\b(test\.prop|fc\.assert|fc\.check)\(/.test(readFileSync(join(ROOT, file), 'utf8')));
}

describe("the README's property-test table", () => {
  it('names every file that runs a property', () => {
    expect(rows.map(({ file }) => file).sort()).toEqual(propertyFiles('test').sort());
  });

  it.each(rows)('says how many cases $file runs', ({ file, runs }) => {
    expect([...new Set(runs)].sort((a, b) => a - b)).toEqual(countsIn(file));
  });

  it('is right that npm test runs them from one fixed seed', () => {
    if (process.env['FAILWISE_FC_SEED'] === undefined) expect(fc.readConfigureGlobal().seed).toBe(FIXED_SEED);
    else expect(fc.readConfigureGlobal().seed).toBe(Number(process.env['FAILWISE_FC_SEED']));
  });
});
