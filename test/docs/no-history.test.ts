import { readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import { describe, expect, it } from 'vitest';

/**
 * What ships says how failwise is now; which issue asked for a change, and when, is git's and CHANGELOG.md's.
 * So source comments (and the .d.ts built from them), the README and docs/ cite no issue, item or contract.
 */
const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const HISTORY = /\b[Ii](?:ssue|tem)s? #?\d+|\bCONTRACT\b/;

function filesUnder(dir: string, extensions: readonly string[]): string[] {
  return readdirSync(path.join(ROOT, dir), { withFileTypes: true, recursive: true })
    .filter((entry) => entry.isFile() && extensions.some((ext) => entry.name.endsWith(ext)))
    .map((entry) => path.relative(ROOT, path.join(entry.parentPath, entry.name)));
}

const shipped = [
  ...filesUnder('src', ['.ts']),
  ...filesUnder('machines', ['.ts']),
  ...filesUnder('docs', ['.md', '.ts']),
  'README.md',
];

describe('shipped text', () => {
  it('is checked over src/, machines/, docs/ and the README', () => {
    expect(shipped.length).toBeGreaterThan(100);
    expect(shipped).toContain('src/index.ts');
    expect(shipped).toContain('docs/design.md');
  });

  it('cites no issue, item or contract: history is in git and CHANGELOG.md', () => {
    const cited = shipped.flatMap((file) =>
      readFileSync(path.join(ROOT, file), 'utf8')
        .split('\n')
        .flatMap((line, index) => (HISTORY.test(line) ? [`${file}:${index + 1}: ${line.trim()}`] : [])),
    );
    expect(cited).toEqual([]);
  });
});
